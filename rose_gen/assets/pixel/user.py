"""Sprites from a user's folder: a list file naming PNGs, checked against the folder's
``SHA256SUMS`` when it has one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rose_gen.assets.pixel.sprite import (
    MIN_COLOURS,
    MIN_SOLID_PIXELS,
    PixelAssetError,
    is_substantial,
    load_rgba,
)


@dataclass(frozen=True)
class UserList:
    """A user's pixel-art folder: the files to use and the pairs (one or two names a line)."""

    folder: Path
    singles: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]


def _read_sha256sums(folder: Path) -> dict[str, str]:
    path = folder / "SHA256SUMS"
    if not path.is_file():
        return {}
    sums: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[0]) != 64:
            raise PixelAssetError(f"{path}:{n}: expected '<sha256>  <file name>'; fix or delete the line")
        sums[parts[1].lstrip("*")] = parts[0].lower()
    return sums


def read_user_list(folder: str | Path, list_file: str | Path) -> UserList:
    """Parse a list file: ``name.png`` (an edit base) or ``a.png b.png`` (a pair) per line.

    Blank lines and ``#`` comments are skipped. Each named file must exist in ``folder``.
    """
    folder, list_file = Path(folder), Path(list_file)
    if not folder.is_dir():
        raise PixelAssetError(f"pixel-art folder {folder} does not exist; set user_folder to a folder of PNGs")
    if not list_file.is_file():
        raise PixelAssetError(f"pair list {list_file} does not exist; set user_list to a text file")
    singles: list[str] = []
    pairs: list[tuple[str, str]] = []
    for n, raw in enumerate(list_file.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        names = line.split()
        if len(names) > 2:
            raise PixelAssetError(f"{list_file}:{n}: expected one file name or two, got {len(names)}; "
                                  "use one line per sprite or pair")
        for name in names:
            if "/" in name or "\\" in name or not (folder / name).is_file():
                raise PixelAssetError(f"{list_file}:{n}: {name} is not a file in {folder}; fix the name or add the file")
        if len(names) == 1:
            singles.append(names[0])
        elif names[0] == names[1]:
            raise PixelAssetError(f"{list_file}:{n}: a pair needs two different files, got {names[0]} twice")
        else:
            pairs.append((names[0], names[1]))
    return UserList(folder, tuple(singles), tuple(pairs))


def load_user_sprite(folder: Path, name: str, sums: Mapping[str, str] | None = None) -> np.ndarray:
    """Load and verify one user PNG (checksum if listed, size, not near-empty)."""
    path = folder / name
    sums = _read_sha256sums(folder) if sums is None else sums
    if name in sums:
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sums[name]:
            raise PixelAssetError(f"{path}: checksum mismatch (SHA256SUMS has {sums[name][:12]}…, file has {got[:12]}…); "
                                  "restore the file or update SHA256SUMS")
    rgba = load_rgba(path)
    if max(rgba.shape[:2]) > 256:
        raise PixelAssetError(f"{path}: {rgba.shape[1]}x{rgba.shape[0]} is too large for pixel art (max 256 px a side)")
    if not is_substantial(rgba):
        raise PixelAssetError(f"{path}: sprite is near-empty (fewer than {MIN_SOLID_PIXELS} opaque pixels or "
                              f"{MIN_COLOURS} colours); remove it from the list")
    return rgba


@lru_cache(maxsize=256)
def cached_user_pixels(folder: str, name: str) -> np.ndarray:
    """A user sprite's pixels, read once per (folder, file) and returned read-only."""
    arr = load_user_sprite(Path(folder), name)
    arr.setflags(write=False)
    return arr
