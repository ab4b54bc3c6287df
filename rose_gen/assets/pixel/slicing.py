"""Slicing Dungeon Crawl's packed sprite sheets (Debian ``crawl-tiles-data``) into sprites.

Grid sheets are cut into 32 px tiles; packed sheets into connected components, split where
a component is wider than a tile. Pieces are centred on a 32 px canvas and deduplicated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from rose_gen.assets.pixel.sprite import (
    TILE,
    PixelAssetError,
    canonical,
    centre_on_canvas,
    decode_mask,
    is_substantial,
    load_rgba,
    pixel_sha256,
)

CRAWL_TILE_DIR = Path("/usr/share/crawl/dat/tiles")

CRAWL_PACKAGE = "crawl-tiles-data"

@dataclass(frozen=True)
class SheetSpec:
    """How one Crawl atlas is sliced."""

    name: str  # file stem under CRAWL_TILE_DIR
    method: str  # "grid" (regular 32 px grid) or "components" (packed atlas)

CRAWL_SHEETS: tuple[SheetSpec, ...] = (
    SheetSpec("feat", "components"),
    SheetSpec("floor", "grid"),
    SheetSpec("main", "components"),
    SheetSpec("player", "components"),
    SheetSpec("wall", "grid"),
)


@dataclass(frozen=True)
class Piece:
    """A rectangle of a sheet and the mask of the pixels that belong to it."""

    x: int
    y: int
    w: int
    h: int


def slice_grid(rgba: np.ndarray, tile: int = TILE) -> list[Piece]:
    """Cells of a regular ``tile`` px grid, row by row (no filtering)."""
    rows, cols = rgba.shape[0] // tile, rgba.shape[1] // tile
    return [Piece(c * tile, r * tile, tile, tile) for r in range(rows) for c in range(cols)]


def _best_cut(mask: np.ndarray, axis: int, limit: int) -> int | None:
    """Position of the cheapest guillotine cut across ``axis`` (None if no cut is possible).

    The cost of a cut before index i is the number of opaque pixel pairs (side by side or
    diagonal) that touch across it. Cuts leave a first piece of at most ``limit`` lines
    (the packer's tiles are at most one tile wide); ties go to the widest first piece.
    """
    m = mask if axis == 1 else mask.T
    n = m.shape[1]
    if n < 2:
        return None
    touching = (m[:, :-1] & m[:, 1:]).sum(axis=0)  # contacts across the cut before i = 1..n-1
    diag = (m[:-1, :-1] & m[1:, 1:]).sum(axis=0) + (m[1:, :-1] & m[:-1, 1:]).sum(axis=0)
    cost = touching + diag
    cand = np.arange(1, min(n - 1, limit) + 1)
    c = cost[cand - 1]
    return int(cand[c == c.min()].max())


def _split(mask: np.ndarray, x: int, y: int, limit: int, out: list[tuple[int, int, np.ndarray]],
           depth: int = 0) -> None:
    """Recursively split an over-size component mask into pieces at most ``limit`` square."""
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    mask = mask[y0:y1, x0:x1]
    x, y = x + int(x0), y + int(y0)
    h, w = mask.shape
    if (h <= limit and w <= limit) or depth > 12:
        out.append((x, y, mask))
        return
    axis = 1 if w > limit and (w >= h or h <= limit) else 0
    cut = _best_cut(mask, axis, limit)
    if cut is None:
        out.append((x, y, mask))
        return
    if axis == 1:
        halves = ((mask[:, :cut], x, y), (mask[:, cut:], x + cut, y))
    else:
        halves = ((mask[:cut, :], x, y), (mask[cut:, :], x, y + cut))
    for part, px, py in halves:
        lab, k = ndimage.label(part, structure=np.ones((3, 3), dtype=bool))
        for i in range(1, k + 1):
            _split(lab == i, px, py, limit, out, depth + 1)


def slice_components(rgba: np.ndarray, limit: int = TILE) -> list[tuple[int, int, np.ndarray]]:
    """Alpha connected components (8-connected), over-size ones split by guillotine cuts.

    Returns ``(x, y, mask)`` triples, ``mask`` covering the piece's own pixels inside its
    bounding box, sorted by (y, x) of the box.
    """
    solid = rgba[..., 3] > 0
    lab, _ = ndimage.label(solid, structure=np.ones((3, 3), dtype=bool))
    out: list[tuple[int, int, np.ndarray]] = []
    for i, sl in enumerate(ndimage.find_objects(lab), start=1):
        if sl is None:
            continue
        _split(lab[sl] == i, sl[1].start, sl[0].start, limit, out)
    out.sort(key=lambda t: (t[1], t[0]))
    return out


def crawl_sheet_path(sheet: str, tile_dir: Path = CRAWL_TILE_DIR) -> Path:
    """Path of a Crawl atlas; a missing file names the Debian package to install."""
    path = tile_dir / f"{sheet}.png"
    if not path.is_file():
        raise PixelAssetError(f"Dungeon Crawl atlas {path} is missing; install it: apt-get install {CRAWL_PACKAGE}")
    return path


@lru_cache(maxsize=8)
def _sheet_pixels(path: str) -> np.ndarray:
    arr = load_rgba(Path(path))
    arr.setflags(write=False)
    return arr


def sheet_pixels(sheet: str, tile_dir: Path = CRAWL_TILE_DIR) -> np.ndarray:
    """The read-only RGBA pixels of a Crawl atlas (cached per path)."""
    return _sheet_pixels(str(crawl_sheet_path(sheet, tile_dir)))


def sheet_file_pixels(path: Path) -> np.ndarray:
    """The read-only RGBA pixels of any sprite sheet file (cached per path)."""
    return _sheet_pixels(str(path))


def crawl_piece_canvas(sheet_rgba: np.ndarray, x: int, y: int, w: int, h: int,
                       mask: np.ndarray | None = None) -> np.ndarray:
    """Cut a piece out of a sheet (only its own pixels when ``mask`` is given) and centre it."""
    piece = np.array(sheet_rgba[y:y + h, x:x + w], dtype=np.uint8)
    if mask is not None:
        piece[~mask] = 0
    return canonical(centre_on_canvas(piece))


@dataclass(frozen=True)
class SlicedSprite:
    """A sliced sprite before family assignment: its provenance and its canvas."""

    sheet: str
    x: int
    y: int
    w: int
    h: int
    pixels: np.ndarray  # 32x32x4 uint8 canvas
    mask: np.ndarray | None = None  # own pixels inside the box (None: the whole box)


def slice_sheet(spec: SheetSpec, tile_dir: Path = CRAWL_TILE_DIR) -> tuple[list[SlicedSprite], int]:
    """All substantial sprites of one atlas in sheet order, and the raw piece count."""
    rgba = sheet_pixels(spec.name, tile_dir)
    found: list[SlicedSprite] = []
    if spec.method == "grid":
        pieces = slice_grid(rgba)
        for p in pieces:
            canvas = canonical(rgba[p.y:p.y + p.h, p.x:p.x + p.w])
            if is_substantial(canvas):
                found.append(SlicedSprite(spec.name, p.x, p.y, p.w, p.h, canvas))
        return found, len(pieces)
    comps = slice_components(rgba)
    for x, y, mask in comps:
        h, w = mask.shape
        if h > TILE or w > TILE:
            continue
        canvas = crawl_piece_canvas(rgba, x, y, w, h, mask)
        if is_substantial(canvas):
            found.append(SlicedSprite(spec.name, x, y, w, h, canvas, mask))
    return found, len(comps)


def dedupe(sprites: Iterable[SlicedSprite]) -> list[SlicedSprite]:
    """Keep the first sprite of every distinct canonical canvas (input order)."""
    seen: set[str] = set()
    kept: list[SlicedSprite] = []
    for s in sprites:
        key = pixel_sha256(s.pixels)
        if key not in seen:
            seen.add(key)
            kept.append(s)
    return kept


def crawl_sprite_pixels(entry: Mapping[str, Any], tile_dir: Path = CRAWL_TILE_DIR) -> np.ndarray:
    """The canvas of a crawl sprite manifest entry, refused unless its sha256 matches."""
    x, y = entry["offset"]
    w, h = entry["size"]
    sheet = sheet_pixels(entry["sheet"], tile_dir)
    mask = decode_mask(entry["mask"], h, w) if entry.get("mask") else None
    canvas = crawl_piece_canvas(sheet, x, y, w, h, mask)
    got = pixel_sha256(canvas)
    if got != entry["sha256"]:
        raise PixelAssetError(
            f"sprite {entry['id']}: pixel checksum mismatch in {entry['sheet']}.png at {x},{y} "
            f"(manifest {entry['sha256'][:12]}…, sheet gives {got[:12]}…); reinstall {CRAWL_PACKAGE} or "
            "regenerate assets_manifest with assets_manifest/build/build_pixel.py")
    return canvas
