"""Pixel shortcut measures: pop-out blocks, off-palette edits, palette swaps, the source grid."""

from __future__ import annotations

import numpy as np

from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import (
    POP_OUT_DELTA_E,
    block_delta_e,
    changed_share,
    colour_only,
    colour_only_share,
    off_palette_share,
    pops_out,
    sprite_grid,
)


def _sprite() -> np.ndarray:
    out = np.zeros((32, 32, 4), dtype=np.uint8)
    out[6:26, 8:24] = (40, 90, 160, 255)
    out[6:26, 8] = out[6:26, 23] = (10, 20, 40, 255)
    out[10:14, 12:20] = (200, 210, 230, 255)
    return out


def test_identical_tiles_change_nothing_and_a_big_blob_pops_out():
    tile = np.asarray(px_sprite.render_sprite(_sprite(), 120))
    assert changed_share(tile, tile) == 0.0 and block_delta_e(tile, tile) == 0.0
    blob = tile.copy()
    blob[0:30, 0:30] = (250, 220, 0)  # 900 px of yellow in one 40x40 block
    assert block_delta_e(tile, blob) > POP_OUT_DELTA_E and pops_out(tile, blob)
    assert changed_share(tile, blob) == 900 / 120**2
    speck = tile.copy()
    speck[60:62, 60:62] = (250, 220, 0)
    assert not pops_out(tile, speck)


def test_off_palette_share_separates_new_colours_from_the_sprites_own():
    tile = np.asarray(px_sprite.render_sprite(_sprite(), 64))
    painted = tile.copy()
    painted[30:34, 30:34] = (255, 0, 255)  # a colour the sprite does not have
    assert off_palette_share(tile, painted) == 1.0
    swapped = tile.copy()
    body, light = (tile == (40, 90, 160)).all(-1), (tile == (200, 210, 230)).all(-1)
    swapped[body], swapped[light] = (200, 210, 230), (40, 90, 160)
    assert off_palette_share(tile, swapped) == 0.0
    removed = tile.copy()
    removed[20:24, 16:20] = px_sprite.BACKGROUND  # the cell background is part of what the majority shows
    assert off_palette_share(tile, removed) == 0.0


def test_palette_swap_is_colour_only_and_a_moved_detail_is_not():
    a = _sprite()
    recoloured = a.copy()
    recoloured[(a[..., :3] == (40, 90, 160)).all(-1)] = (170, 60, 40, 255)
    ta, tr = (np.asarray(px_sprite.render_sprite(s, 32)) for s in (a, recoloured))
    iou, share = colour_only_share(ta, tr, px_sprite.BACKGROUND)
    assert iou == 1.0 and share == 1.0 and colour_only(ta, tr, px_sprite.BACKGROUND)
    moved = a.copy()
    moved[10:14, 12:20] = (40, 90, 160, 255)
    moved[18:22, 12:20] = (200, 210, 230, 255)
    tm = np.asarray(px_sprite.render_sprite(moved, 32))
    assert not colour_only(ta, tm, px_sprite.BACKGROUND)  # same palette, different drawing
    grown = a.copy()
    grown[2:6, 8:24] = (40, 90, 160, 255)
    assert not colour_only(ta, np.asarray(px_sprite.render_sprite(grown, 32)), px_sprite.BACKGROUND)


def test_the_source_grid_is_read_back_from_a_stretched_tile_at_any_cell_size():
    sprite = _sprite()
    small = np.asarray(px_sprite.render_sprite(sprite, 32))
    for cell in (120, 133, 156):
        assert np.array_equal(sprite_grid(np.asarray(px_sprite.render_sprite(sprite, cell))), small)


def test_colour_only_holds_in_both_directions_when_two_colours_merge():
    a = _sprite()
    merged = a.copy()
    merged[(a[..., :3] == (200, 210, 230)).all(-1)] = (10, 20, 40, 255)  # highlight painted in the outline colour
    ta, tm = (np.asarray(px_sprite.render_sprite(s, 32)) for s in (a, merged))
    assert colour_only(ta, tm, px_sprite.BACKGROUND) and colour_only(tm, ta, px_sprite.BACKGROUND)
