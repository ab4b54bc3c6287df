"""ROSE-PixelContent source: related-but-distinct pairs, orientation, tiles, user pairs."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import block_delta_e, colour_only
from rose_gen.assets.visibility import is_visible, tile_difference
from rose_gen.sources import pixel_common as px_pools
from rose_gen.sources.base import SOURCES
from rose_gen.sources.pixel_content import PixelContentSource

SOURCE = PixelContentSource()


def test_registered_with_the_v0_1_identity():
    info = SOURCES.get("pixel_content").info
    assert (info.subset, info.id_prefix, info.primitive_type, info.item_seed_base, info.layout_family) == (
        "ROSE-PixelContent", "PCONT", "PIXEL_CONTENT", 202700000000, "pixel_content")


def test_pairs_are_related_distinct_and_unique():
    pool = SOURCE.pool({})
    assert len(pool) >= 200
    assert len({p.pair_key for p in pool}) == len(pool)
    lo, hi = px.load_pixel_manifest("pixel_content_pairs")["band"]
    library = px.default_library()
    for p in pool:
        a, b = p.pair_key.split("__")
        assert a < b and (p.majority, p.target) == (a, b)
        assert library.entries[a]["family"] == library.entries[b]["family"] == p.row_fields["sprite_family"]
        assert lo <= p.similarity <= hi
    for p in pool[:: max(1, len(pool) // 10)]:  # recomputed, not just read back
        pa, pb = library.pixels(p.majority), library.pixels(p.target)
        assert px_sprite.sprite_similarity(pa, pb) == p.similarity
        ta, tb = SOURCE.render_tile(p, "majority", 120), SOURCE.render_tile(p, "target", 120)
        assert ta.size == tb.size == (120, 120) and ta.mode == "RGB"
        assert is_visible(tile_difference(ta, tb))


def test_palette_swaps_leave_the_standard_pool_and_an_option_keeps_them():
    pairs = px.load_pixel_manifest("pixel_content_pairs")["pairs"]
    swaps = {f"{p['a']}__{p['b']}" for p in pairs if p["colour_only"] and p["source"] == "crawl"}
    assert swaps  # Crawl has recoloured twins; the manifest keeps them, flagged
    standard = {p.pair_key for p in SOURCE.pool({})}
    assert not swaps & standard
    kept = {p.pair_key for p in SOURCE.pool({"colour_only_pairs": True, "max_block_delta_e": None})}
    assert swaps <= kept and standard <= kept
    with pytest.raises(px_sprite.PixelAssetError, match="colour_only_pairs"):
        SOURCE.pool({"colour_only_pairs": "yes"})
    with pytest.raises(px_sprite.PixelAssetError, match="unknown pixel source option"):
        SOURCE.pool({"colour_only": True})


def test_pairs_that_differ_at_a_glance_leave_the_standard_pool_unless_asked_for():
    standard = SOURCE.pool({})
    everything = SOURCE.pool({"max_block_delta_e": None})
    assert len(everything) > len(standard) >= 300
    for p in standard[:: max(1, len(standard) // 15)]:
        a, b = (np.asarray(SOURCE.render_tile(p, role, 120)) for role in ("majority", "target"))
        assert block_delta_e(a, b) <= px_pools.CONTENT_MAX_BLOCK_DELTA_E
    assert {p.row_fields["sprite_source"] for p in standard} == {"crawl", "cdda"}
    for bad in (0, -3, "20", True):
        with pytest.raises(px_sprite.PixelAssetError, match="max_block_delta_e"):
            SOURCE.pool({"max_block_delta_e": bad})


def test_standard_pairs_are_not_palette_swaps_when_measured_on_the_tiles():
    pool = SOURCE.pool({})
    for p in pool[:: max(1, len(pool) // 25)]:
        a, b = (np.asarray(SOURCE.render_tile(p, role, px_sprite.TILE)) for role in ("majority", "target"))
        assert not colour_only(a, b, px_sprite.BACKGROUND)


def test_procedural_pairs_come_from_one_procedural_family():
    pool = SOURCE.pool({"sprites": ["procedural"]})
    assert pool
    for p in pool:
        assert p.majority.split("-m")[0] == p.target.split("-m")[0]
        assert p.row_fields["sprite_source"] == "procedural"


def test_orient_swaps_sides_and_fields():
    pair = SOURCE.pool({})[0]
    outcomes = {SOURCE.orient(pair, np.random.default_rng(s)).majority for s in range(16)}
    assert outcomes == {pair.majority, pair.target}
    flipped = next(SOURCE.orient(pair, np.random.default_rng(s)) for s in range(16)
                   if SOURCE.orient(pair, np.random.default_rng(s)).majority == pair.target)
    assert flipped.row_fields["background_sprite"] == pair.target
    assert flipped.pair_key == pair.pair_key
    assert np.array_equal(np.asarray(SOURCE.render_tile(flipped, "majority", 130)),
                          np.asarray(SOURCE.render_tile(pair, "target", 130)))


def test_user_pairs_are_checked(tmp_path):
    family = px_proc.procedural_family(41, 2)
    for i, sprite in enumerate(family):
        Image.fromarray(sprite, "RGBA").save(tmp_path / f"p{i}.png")
    Image.fromarray(family[0], "RGBA").save(tmp_path / "copy.png")
    (tmp_path / "pairs.txt").write_text("p1.png p0.png\np0.png p1.png\n")
    opts = {"sprites": "user", "user_folder": str(tmp_path), "user_list": str(tmp_path / "pairs.txt")}
    pool = SOURCE.pool(opts)
    assert [p.pair_key for p in pool] == ["p0.png__p1.png"]
    assert SOURCE.render_tile(pool[0], "target", 120).size == (120, 120)
    (tmp_path / "same.txt").write_text("p0.png copy.png\n")
    with pytest.raises(px_sprite.PixelAssetError, match="not visibly different"):
        SOURCE.pool({**opts, "user_list": str(tmp_path / "same.txt")})
