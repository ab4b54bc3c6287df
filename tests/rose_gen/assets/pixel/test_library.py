"""Pixel-art library: slicing, dedupe, procedural families, checksums, user folders."""

from __future__ import annotations

import copy
import hashlib

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import slicing as px_slice
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel import user as px_user


def _blob(h: int, w: int, colour: tuple[int, int, int]) -> np.ndarray:
    """A solid RGBA rectangle with a dark outline and a lighter core (several colours)."""
    out = np.zeros((h, w, 4), dtype=np.uint8)
    out[..., :3] = colour
    out[..., 3] = 255
    out[[0, -1], :, :3] = 20
    out[:, [0, -1], :3] = 20
    out[h // 3: 2 * h // 3, w // 3: 2 * w // 3, :3] = 240
    out[1:3, 1:3, :3] = (colour[0] // 2, colour[1] // 2, colour[2] // 2)
    return out


# ---------------------------------------------------------------------------- slicing


def test_feat_sheet_slices_to_known_counts_of_real_sprites():
    sprites, pieces = px_slice.slice_sheet(px_slice.SheetSpec("feat", "components"))
    assert pieces == 1547  # alpha components after guillotine splits, as measured
    assert len(sprites) == 127  # substantial ones
    for s in sprites:
        assert s.pixels.shape == (32, 32, 4)
        assert s.w <= 32 and s.h <= 32
        assert int(px_sprite.solid_mask(s.pixels).sum()) >= px_sprite.MIN_SOLID_PIXELS
        assert px_sprite.is_substantial(s.pixels)


def test_floor_sheet_is_sliced_on_the_32px_grid():
    sprites, pieces = px_slice.slice_sheet(px_slice.SheetSpec("floor", "grid"))
    assert pieces == 30 * 32  # 960x1024 sheet
    assert len(sprites) == 902
    assert all(s.x % 32 == 0 and s.y % 32 == 0 and (s.w, s.h) == (32, 32) for s in sprites)
    assert len(px_slice.dedupe(sprites)) == 893


def _disc(size: int, colour: tuple[int, int, int]) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    inside = (yy - (size - 1) / 2) ** 2 + (xx - (size - 1) / 2) ** 2 <= (size / 2) ** 2
    out = _blob(size, size, colour)
    out[~inside] = 0
    return out


def test_abutting_sprites_are_split_at_the_seam():
    # Like the packed atlases: trimmed boxes side by side, round shapes touching at the seam.
    sheet = np.zeros((32, 64, 4), dtype=np.uint8)
    sheet[2:28, 0:26] = _disc(26, (200, 40, 40))
    sheet[0:30, 26:56] = _disc(30, (40, 40, 200))
    _, k = ndimage.label(sheet[..., 3] > 0, structure=np.ones((3, 3)))
    assert k == 1  # one component, 56 px wide: must be cut
    pieces = px_slice.slice_components(sheet)
    assert [(x, y, m.shape) for x, y, m in pieces] == [(26, 0, (30, 30)), (0, 2, (26, 26))]


def test_dedupe_keeps_first_of_identical_canvases():
    a = px_sprite.centre_on_canvas(_blob(20, 20, (10, 200, 10)))
    b = px_sprite.centre_on_canvas(_blob(20, 18, (10, 200, 10)))
    items = [px_slice.SlicedSprite("s", i, 0, 20, 20, arr) for i, arr in enumerate([a, b, a.copy()])]
    kept = px_slice.dedupe(items)
    assert [s.x for s in kept] == [0, 1]


def test_near_empty_and_flat_pieces_are_dropped():
    tiny = px_sprite.centre_on_canvas(_blob(6, 6, (200, 0, 0)))
    flat = np.zeros((32, 32, 4), dtype=np.uint8)
    flat[4:28, 4:28] = (90, 90, 90, 255)
    assert not px_sprite.is_substantial(tiny)
    assert not px_sprite.is_substantial(flat)
    assert px_sprite.is_substantial(px_sprite.centre_on_canvas(_blob(20, 20, (0, 0, 200))))


# ---------------------------------------------------------------------------- procedural


def test_procedural_families_are_deterministic_related_and_distinct():
    a = px_proc.procedural_family(11, 4)
    b = px_proc.procedural_family(11, 4)
    assert [px_sprite.pixel_sha256(s) for s in a] == [px_sprite.pixel_sha256(s) for s in b]
    assert px_sprite.pixel_sha256(px_proc.procedural_family(12, 4)[0]) != px_sprite.pixel_sha256(a[0])
    assert len({px_sprite.pixel_sha256(s) for s in a}) == len(a)
    for s in a:
        assert s.shape == (32, 32, 4) and px_sprite.is_substantial(s)
        body = s[..., 3] > 0
        assert np.array_equal(body, body[:, ::-1])  # mirror symmetry
    assert px_sprite.sprite_similarity(a[0], a[1]) >= 0.6


# ---------------------------------------------------------------------------- checksums


def test_sprite_checksum_mismatch_is_refused():
    manifest = copy.deepcopy(px.default_library().manifest)
    entry = next(e for e in manifest["sprites"] if e["source"] == "crawl")
    entry["sha256"] = "0" * 64
    with pytest.raises(px_sprite.PixelAssetError, match="checksum mismatch"):
        px.SpriteLibrary(manifest).pixels(entry["id"])


def test_sheet_checksum_mismatch_is_refused():
    manifest = copy.deepcopy(px.default_library().manifest)
    for sheet in manifest["sheets"]:
        sheet["sha256"] = "f" * 64
    entry = next(e for e in manifest["sprites"] if e["source"] == "crawl")
    with pytest.raises(px_sprite.PixelAssetError, match="checksum mismatch"):
        px.SpriteLibrary(manifest).pixels(entry["id"])


def test_missing_sheet_names_the_package(tmp_path):
    with pytest.raises(px_sprite.PixelAssetError, match="apt-get install crawl-tiles-data"):
        px_slice.crawl_sheet_path("main", tmp_path)


def test_mask_round_trip():
    rng = np.random.default_rng(1)
    mask = rng.random((13, 29)) < 0.5
    assert np.array_equal(px_sprite.decode_mask(px_sprite.encode_mask(mask), 13, 29), mask)


# ---------------------------------------------------------------------------- user folder


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


def test_render_is_nearest_neighbour_stretch_on_the_background():
    sprite = px_sprite.centre_on_canvas(_blob(20, 20, (200, 30, 30)))
    tile = px_sprite.render_sprite(sprite, 120)
    arr = np.asarray(tile)
    assert tile.mode == "RGB" and tile.size == (120, 120)
    assert tuple(arr[0, 0]) == px_sprite.BACKGROUND
    assert len(np.unique(arr.reshape(-1, 3), axis=0)) == len(
        np.unique(px_sprite.canonical(sprite).reshape(-1, 4), axis=0))  # no new colours: no smoothing


# ---------------------------------------------------------------------------- manifests


def test_committed_manifests_are_sorted_and_consistent():
    sprites = px.default_library().manifest["sprites"]
    ids = [e["id"] for e in sprites]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len({e["sha256"] for e in sprites}) == len(sprites)  # deduplicated
    pairs = px.load_pixel_manifest("pixel_content_pairs")["pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == sorted((p["a"], p["b"]) for p in pairs)
    bases = px.load_pixel_manifest("pixel_edit_bases")["bases"]
    assert [b["sprite"] for b in bases] == sorted(b["sprite"] for b in bases)
    assert sum(b["source"] == "crawl" for b in bases) >= 300
    assert sum(p["source"] == "crawl" for p in pairs) >= 200


def test_a_sprite_named_by_another_manifest_must_be_in_the_library():
    library = px.default_library()
    known = next(iter(library.entries))
    assert library.entry_named_by("pixel_edit_bases", known) is library.entries[known]
    with pytest.raises(px_sprite.PixelAssetError, match=r"pixel_edit_bases\.json names sprite nope missing from "
                                                  r"pixel_sprites\.json; regenerate with assets_manifest/build"):
        library.entry_named_by("pixel_edit_bases", "nope")
