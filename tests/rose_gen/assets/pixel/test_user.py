"""User sprite folders: list files, errors with file and line, checksums."""

from __future__ import annotations

import hashlib

import pytest
from PIL import Image

from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel import user as px_user


def _write_user_folder(tmp_path, lines: str, sums: bool = True):
    names = []
    for i, sprite in enumerate(px_proc.procedural_family(21, 3)):
        name = f"s{i}.png"
        Image.fromarray(sprite, "RGBA").save(tmp_path / name)
        names.append(name)
    if sums:
        (tmp_path / "SHA256SUMS").write_text(
            "".join(f"{hashlib.sha256((tmp_path / n).read_bytes()).hexdigest()}  {n}\n" for n in names))
    listing = tmp_path / "list.txt"
    listing.write_text(lines)
    return listing


def test_user_list_parses_singles_and_pairs(tmp_path):
    listing = _write_user_folder(tmp_path, "# my art\ns0.png\ns0.png s1.png\n\ns2.png  # trailing comment\n")
    parsed = px_user.read_user_list(tmp_path, listing)
    assert parsed.singles == ("s0.png", "s2.png")
    assert parsed.pairs == (("s0.png", "s1.png"),)
    assert px_user.load_user_sprite(tmp_path, "s1.png").shape == (32, 32, 4)


def test_user_list_errors_name_file_and_line(tmp_path):
    listing = _write_user_folder(tmp_path, "s0.png\nmissing.png\n")
    with pytest.raises(px_sprite.PixelAssetError, match=r"list\.txt:2: missing\.png is not a file"):
        px_user.read_user_list(tmp_path, listing)


def test_user_checksum_mismatch_is_refused(tmp_path):
    _write_user_folder(tmp_path, "s0.png\n")
    Image.fromarray(px_proc.procedural_family(22, 1)[0], "RGBA").save(tmp_path / "s0.png")
    with pytest.raises(px_sprite.PixelAssetError, match="checksum mismatch"):
        px_user.load_user_sprite(tmp_path, "s0.png")
