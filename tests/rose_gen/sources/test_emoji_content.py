"""ROSE-EmojiContent source: same-subgroup pairs in a similarity band, one vendor, verified."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.emoji.similarity import VisibilityRule, check_pair
from rose_gen.sources.base import SOURCES, AssetError
from rose_gen.sources.emoji_content import DEFAULT_BAND, SOURCE, content_pool


@pytest.fixture(scope="module")
def pool():
    return content_pool({})


def test_registered_with_v01_subset_facts():
    info = SOURCES.get("emoji_content").info
    assert (info.subset, info.id_prefix, info.primitive_type) == ("ROSE-EmojiContent", "ECON", "EMOJI_CONTENT")
    assert (info.item_seed_base, info.layout_family, info.image_split) == (202600000000, "glyph_emoji", "pilot")


def test_pool_is_large_stable_unique_and_in_band(pool):
    assert len(pool) >= 300
    keys = [p.pair_key for p in pool]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [p.pair_key for p in content_pool({})] == keys
    low, high = DEFAULT_BAND
    records = identity_records()
    for p in pool:
        a, b = p.pair_key.split("__")
        assert a < b and {a, b} == {p.majority.split(":")[1], p.target.split(":")[1]}
        assert low <= p.similarity <= high
        assert records[a]["subgroup"] == records[b]["subgroup"]
        assert p.render["majority"]["vendor"] == p.render["target"]["vendor"] == p.render["vendor"]
    assert {p.render["vendor"] for p in pool} == {"twemoji"}  # v0.1: every pair in Twemoji SVG


def test_vendor_mix_balances_the_three_vendors():
    mixed = content_pool({"vendors": ["twemoji", "openmoji", "noto"]})
    counts = Counter(p.render["vendor"] for p in mixed)
    assert set(counts) == {"twemoji", "openmoji", "noto"}
    assert max(counts.values()) - min(counts.values()) <= 0.1 * len(mixed)


def test_band_is_configurable_and_checked(pool):
    narrow = content_pool({"band": [0.95, 0.99]})
    assert 0 < len(narrow) < len(pool)
    assert all(0.95 <= p.similarity <= 0.99 for p in narrow)
    with pytest.raises(AssetError, match="band"):
        content_pool({"band": [0.9, 0.8]})
    with pytest.raises(AssetError, match="unknown vendor"):
        content_pool({"vendors": ["twemoji_png"]})


def test_stricter_visibility_rejects_pairs_below_threshold(pool):
    strict = content_pool({"visibility": {"min_changed_fraction": 0.2}})
    assert len(strict) < len(pool)
    assert all(p.render["vendor"] for p in strict)


def test_orient_flips_sides_and_keeps_the_pair(pool):
    sides = set()
    for i in range(40):
        o = SOURCE.orient(pool[i], np.random.default_rng(i))
        assert o.pair_key == pool[i].pair_key and o.similarity == pool[i].similarity
        assert o.row_fields["background_unicode"] == o.majority.split(":")[1]
        assert o.row_fields["target_unicode"] == o.target.split(":")[1]
        sides.add(o.majority == pool[i].majority)
    assert sides == {True, False}


def test_tiles_exact_size_and_visibly_different(pool):
    rule = VisibilityRule()
    for i in (0, len(pool) // 2, len(pool) - 1):
        o = SOURCE.orient(pool[i], np.random.default_rng(i))
        maj, tgt = SOURCE.render_tile(o, "majority", 42), SOURCE.render_tile(o, "target", 42)
        assert maj.size == tgt.size == (42, 42) and maj.mode == "RGB"
        assert check_pair(maj, tgt, rule).visible
        assert SOURCE.render_tile(o, "target", 64).size == (64, 64)


def test_row_fields_match_v01_names_and_order(pool, v01_subset_fields):
    fields = SOURCE.orient(pool[0], np.random.default_rng(0)).row_fields
    json.dumps(dict(fields), ensure_ascii=False)
    assert 0.0 <= fields["similarity"] <= 1.0
    v01 = v01_subset_fields("ROSE-EmojiContent")
    assert list(fields) == v01


def test_licences_cover_the_vendors_the_options_draw():
    assert len(SOURCE.licences()) == 3
    assert [r["family"].split(" (")[0] for r in SOURCE.attribution({})] == ["Twemoji"]
    assert "assets_manifest/emoji_content_pairs.json" in SOURCE.asset_versions()
