"""ROSE-PixelEdit source: pool size and order, edits, orientation, tiles, user folders."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from rose_gen.assets.pixel import edit_kinds as ek
from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import (
    POP_OUT_DELTA_E,
    block_delta_e,
    changed_share,
    off_palette_share,
)
from rose_gen.assets.visibility import is_visible, tile_difference
from rose_gen.sources.base import SOURCES, VisualSource
from rose_gen.sources.pixel_edit import PixelEditSource
from tests.reference import v01_rows

SOURCE = PixelEditSource()


def test_registered_with_the_v0_1_identity():
    src = SOURCES.get("pixel_edit")
    assert isinstance(src, VisualSource)
    info = src.info
    assert (info.subset, info.id_prefix, info.primitive_type, info.item_seed_base, info.layout_family) == (
        "ROSE-PixelEdit", "PEDIT", "PIXEL_EDIT", 202700000000, "pixel_edit")


def test_default_pool_covers_v0_1_without_reuse_from_both_sprite_families_and_is_stable():
    pool = SOURCE.pool({})
    assert len(pool) >= 300
    assert len({p.pair_key for p in pool}) == len(pool)
    sources = [p.row_fields["sprite_source"] for p in pool]
    assert set(sources) == {"crawl", "cdda"} and sources == sorted(sources, key=["crawl", "cdda"].index)
    assert all(sum(s == kind for s in sources) >= 300 for kind in ("crawl", "cdda"))
    assert [p.pair_key for p in SOURCE.pool({})] == [p.pair_key for p in pool]
    json.dumps([p.row_fields for p in pool[:20]])  # JSON-safe


def test_pool_options_choose_and_reduce_explicitly():
    proc = SOURCE.pool({"sprites": "procedural"})
    assert proc and all(p.row_fields["sprite_source"] == "procedural" for p in proc)
    both = SOURCE.pool({"sprites": ["procedural", "crawl"]})
    assert [p.pair_key for p in both[: len(proc)]] == [p.pair_key for p in proc]
    assert [p.pair_key for p in SOURCE.pool({"max_pairs": 7})] == [p.pair_key for p in SOURCE.pool({})][:7]
    with pytest.raises(px_sprite.PixelAssetError, match="sprites="):
        SOURCE.pool({"sprites": ["crawl", "web"]})
    with pytest.raises(px_sprite.PixelAssetError, match="user_folder"):
        SOURCE.pool({"sprites": ["user"]})


def test_tiles_are_exact_rgb_and_differ_by_a_small_visible_in_palette_change():
    pool = SOURCE.pool({"sprites": ["crawl", "procedural"]})
    for pair in pool[:: max(1, len(pool) // 12)]:
        for cell in (120, 137, 156):
            a, b = SOURCE.render_tile(pair, "majority", cell), SOURCE.render_tile(pair, "target", cell)
            assert a.mode == b.mode == "RGB" and a.size == b.size == (cell, cell)
        a, b = SOURCE.render_tile(pair, "majority", 120), SOURCE.render_tile(pair, "target", 120)
        assert 0 < changed_share(a, b) <= 0.06
        assert is_visible(tile_difference(a, b))
        assert block_delta_e(np.asarray(a), np.asarray(b)) <= POP_OUT_DELTA_E
        assert off_palette_share(np.asarray(a), np.asarray(b)) == 0.0


def test_the_majority_is_always_the_original_and_the_exception_carries_the_edit():
    pair = SOURCE.pool({})[0]
    for seed in range(16):
        o = SOURCE.orient(pair, np.random.default_rng(seed))
        assert o == pair
        assert o.row_fields["majority_variant"] == "original"
        assert o.target.endswith("+edit") and not o.majority.endswith("+edit")
    original = px.default_library().pixels(pair.majority)
    assert np.array_equal(np.asarray(SOURCE.render_tile(pair, "majority", 120)),
                          np.asarray(px_sprite.render_sprite(original, 120)))


def test_rows_record_the_edit_kind_and_class_after_the_v0_1_fields():
    pool = SOURCE.pool({"sprites": ["crawl", "procedural"]})
    fields = pool[0].row_fields
    keys = list(fields)
    assert keys[:2] == ["pair_key", "asset_resize_mode"]
    assert keys.index("edit_class") == keys.index("edit_kind") + 1
    for p in pool:
        kind = p.row_fields["edit_kind"]
        assert kind in ek.EDIT_KINDS
        assert p.row_fields["edit_class"] == ("colour" if kind in ek.COLOUR_KINDS else "shape")
    assert {p.row_fields["edit_kind"] for p in pool} == set(ek.EDIT_KINDS)


def test_row_fields_match_v0_1_pixel_fields():
    fields = SOURCE.pool({})[0].row_fields
    assert list(fields)[:2] == ["pair_key", "asset_resize_mode"]
    assert fields["asset_resize_mode"] == "stretch"
    rows = v01_rows()
    ref = [r for r in rows if r.get("rose_subset") == "ROSE-PixelEdit"]
    assert ref
    keys = list(ref[0])
    assert keys.index("asset_resize_mode") == keys.index("pair_key") + 1
    assert {r["asset_resize_mode"] for r in ref} == {"stretch"}


def test_licences_quote_the_package_copyright():
    recs = SOURCE.licences()
    crawl = next(r for r in recs if r["source"] == "crawl")
    assert crawl["licence"] == "GPL-2.0-or-later" and crawl["package"] == "crawl-tiles-data"
    assert any(r["source"] == "procedural" for r in recs)


def test_user_folder_pool_is_verified_and_renders(tmp_path):
    for i, sprite in enumerate(px_proc.procedural_family(31, 3)):
        Image.fromarray(sprite, "RGBA").save(tmp_path / f"u{i}.png")
    (tmp_path / "bases.txt").write_text("u2.png\nu0.png\n")
    opts = {"sprites": ["user"], "user_folder": str(tmp_path), "user_list": str(tmp_path / "bases.txt")}
    pool = SOURCE.pool(opts)
    assert [p.pair_key for p in pool] == ["u0.png", "u2.png"]
    assert [p.render["edit"] for p in SOURCE.pool(opts)] == [p.render["edit"] for p in pool]
    a, b = SOURCE.render_tile(pool[0], "majority", 120), SOURCE.render_tile(pool[0], "target", 120)
    assert is_visible(tile_difference(a, b))
    (tmp_path / "dup.png").write_bytes((tmp_path / "u0.png").read_bytes())
    (tmp_path / "dups.txt").write_text("u0.png\ndup.png\n")
    with pytest.raises(px_sprite.PixelAssetError, match="same pixels as"):
        SOURCE.pool({**opts, "user_list": str(tmp_path / "dups.txt")})
    (tmp_path / "pairs.txt").write_text("u0.png u1.png\n")
    with pytest.raises(px_sprite.PixelAssetError, match="no single-file lines"):
        SOURCE.pool({**opts, "user_list": str(tmp_path / "pairs.txt")})


def test_edited_copy_must_match_the_manifest_checksum():
    from dataclasses import replace

    pair = SOURCE.pool({})[1]
    tampered = replace(pair, render={**pair.render, "edited_sha256": "0" * 64})
    SOURCE.render_tile(tampered, "majority", 120)  # the original is still fine
    with pytest.raises(px_sprite.PixelAssetError, match="edited_sha256"):
        SOURCE.render_tile(tampered, "target", 120)


def test_asset_versions_name_the_atlases_and_manifests():
    versions = SOURCE.asset_versions()
    assert {"crawl-tiles-data:main.png", "assets_manifest:pixel_edit_bases.json"} <= set(versions)
    assert all(len(v) == 64 for v in versions.values())
