"""The Cataclysm DDA sprite family: named grid cells, objects only, checksummed, licensed."""

from __future__ import annotations

import copy

import pytest

from rose_gen.assets.pixel import cdda as pixel_cdda
from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.pixel import sprite as px_sprite


def test_only_monsters_and_items_are_taken_with_their_first_foreground_cell():
    config = {"tiles-new": [{"file": "tiles.png", "tiles": [
        {"id": "mon_zombie", "fg": 7},
        {"id": ["knife_combat", "knife_hunting"], "fg": [{"weight": 1, "sprite": 12}, {"weight": 1, "sprite": 13}]},
        {"id": "t_wall", "fg": 3},
        {"id": "overlay_worn_boots", "fg": 4},
        {"id": "vp_frame", "fg": 5},
        {"id": "apple", "fg": [21, 22]},
        {"id": "mon_ghost", "bg": 9},
        {"id": "tree_season_winter", "fg": 30},
        {"id": "1585_f_table_0", "fg": 31},
        {"id": "blood", "fg": 32},
    ]}]}
    assert pixel_cdda.object_cells(config) == [("mon_zombie", 7), ("knife_combat", 12), ("apple", 21)]
    assert pixel_cdda.cell_box(17, 512) == (32, 32)


def test_a_missing_tileset_file_names_the_package(tmp_path):
    with pytest.raises(px_sprite.PixelAssetError, match="apt-get install cataclysm-dda-data"):
        pixel_cdda.cdda_path(pixel_cdda.CDDA_SHEET, tmp_path)


def test_library_cdda_sprites_are_named_whole_objects_and_verified():
    library = px.default_library()
    cdda = {sid: e for sid, e in library.entries.items() if e["source"] == "cdda"}
    assert len(cdda) >= 800
    assert any(e["name"].startswith("mon_") for e in cdda.values())
    for sid, e in list(cdda.items())[:: max(1, len(cdda) // 40)]:
        assert not e["name"].startswith(pixel_cdda.NON_OBJECT_PREFIXES)
        pixels = library.pixels(sid)
        assert pixels.shape == (32, 32, 4) and px_sprite.is_substantial(pixels)
        assert pixel_pool.shape_rejection(pixels) is None
    rec = next(r for r in library.manifest["licences"] if r["source"] == "cdda")
    assert rec["licence"] == "CC-BY-SA-3.0" and rec["package"] == "cataclysm-dda-data"
    sheet = next(s for s in library.manifest["sheets"] if s["source"] == "cdda")
    assert sheet["file"] == "MshockXotto+/tiles.png" and len(sheet["config_sha256"]) == 64


def test_a_changed_tileset_pixel_is_refused():
    library = px.default_library()
    entry = copy.deepcopy(next(e for e in library.entries.values() if e["source"] == "cdda"))
    entry["sha256"] = "0" * 64
    with pytest.raises(px_sprite.PixelAssetError, match="pixel checksum mismatch in MshockXotto"):
        pixel_cdda.cdda_sprite_pixels(entry)
