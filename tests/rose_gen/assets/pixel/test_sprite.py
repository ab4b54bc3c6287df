"""Sprite arrays: near-empty pieces, masks, drawing into a cell."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets.pixel import sprite as px_sprite
from tests.rose_gen.assets.pixel.conftest import blob_sprite


def test_near_empty_and_flat_pieces_are_dropped():
    tiny = px_sprite.centre_on_canvas(blob_sprite(6, 6, (200, 0, 0)))
    flat = np.zeros((32, 32, 4), dtype=np.uint8)
    flat[4:28, 4:28] = (90, 90, 90, 255)
    assert not px_sprite.is_substantial(tiny)
    assert not px_sprite.is_substantial(flat)
    assert px_sprite.is_substantial(px_sprite.centre_on_canvas(blob_sprite(20, 20, (0, 0, 200))))


def test_mask_round_trip():
    rng = np.random.default_rng(1)
    mask = rng.random((13, 29)) < 0.5
    assert np.array_equal(px_sprite.decode_mask(px_sprite.encode_mask(mask), 13, 29), mask)


def test_render_is_nearest_neighbour_stretch_on_the_background():
    sprite = px_sprite.centre_on_canvas(blob_sprite(20, 20, (200, 30, 30)))
    tile = px_sprite.render_sprite(sprite, 120)
    arr = np.asarray(tile)
    assert tile.mode == "RGB" and tile.size == (120, 120)
    assert tuple(arr[0, 0]) == px_sprite.BACKGROUND
    assert len(np.unique(arr.reshape(-1, 3), axis=0)) == len(
        np.unique(px_sprite.canonical(sprite).reshape(-1, 4), axis=0))  # no new colours: no smoothing


@pytest.mark.parametrize("cell_size", [27, 32, 41, 100, 153])
def test_render_sprite_equals_compositing_every_cell_pixel(cell_size):
    from rose_gen.assets.pixel.sprite import BACKGROUND, nearest_index, render_sprite

    rng = np.random.default_rng(cell_size)
    rgba = rng.integers(0, 256, (32, 32, 4), dtype=np.uint8)
    rgba[rng.random((32, 32)) < 0.3, 3] = 0
    rgba[rng.random((32, 32)) < 0.3, 3] = 255
    for background in (BACKGROUND, (255, 255, 255), (3, 250, 17)):
        up = rgba[nearest_index(32, cell_size)][:, nearest_index(32, cell_size)].astype(np.uint16)
        alpha = up[..., 3:4]
        want = (up[..., :3] * alpha + np.asarray(background, dtype=np.uint16) * (255 - alpha) + 127) // 255
        got = render_sprite(rgba, cell_size, background)
        assert got.mode == "RGB" and np.array_equal(np.asarray(got), want.astype(np.uint8))
