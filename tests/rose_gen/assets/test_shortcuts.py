"""Shortcut measures: each one finds the cue it is named after, and only that."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets import shortcuts as sc

WHITE = np.array([255.0, 255.0, 255.0])


def _tile(size: int = 30) -> np.ndarray:
    return np.full((size, size, 3), 255, dtype=np.uint8)


def _square(tile: np.ndarray, top: int, left: int, side: int, colour=(40, 40, 40)) -> np.ndarray:
    out = tile.copy()
    out[top:top + side, left:left + side] = colour
    return out


def test_art_box_area_measures_the_drawing_not_the_cell() -> None:
    small, big = _square(_tile(), 10, 10, 6), _square(_tile(), 5, 5, 20)
    assert sc.art_box_area(sc.ink_mask(small)) == 36 and sc.art_box_area(sc.ink_mask(big)) == 400
    faint = _square(_tile(), 0, 0, 30, colour=(240, 240, 240))  # below INK_LEVEL: not ink
    assert sc.art_box_area(sc.ink_mask(faint, WHITE)) == 0
    got = sc.exception_shortcuts(small, big, majority_area=36, background=WHITE)
    assert got.art_area_ratio == pytest.approx(400 / 36)


def test_pop_out_is_a_block_mean_colour_change() -> None:
    base = _square(_tile(), 10, 10, 10)
    tiny = base.copy()
    tiny[0, 0] = (0, 0, 0)  # one pixel: the block mean barely moves
    assert not sc.exception_shortcuts(base, tiny, 100, WHITE).pops_out
    red = _square(base, 0, 0, 10, colour=(220, 30, 30))  # a whole block turns red
    got = sc.exception_shortcuts(base, red, 100, WHITE)
    assert got.pops_out and got.pop_out_de > 30


def test_off_palette_counts_visibly_changed_pixels_in_new_colours() -> None:
    majority = _square(_square(_tile(), 5, 5, 10, (200, 40, 40)), 15, 15, 10, (40, 40, 200))
    swapped = majority.copy()
    swapped[5:10, 5:10] = (40, 40, 200)  # recoloured with a colour the majority has
    painted = majority.copy()
    painted[5:10, 5:10] = (250, 220, 20)  # a colour the majority lacks
    noisy = painted.copy()
    noisy[20:30, 0:5] = (253, 253, 253)  # a faint change (ΔE < 10): noise, not an edit
    assert sc.exception_shortcuts(majority, swapped, 100, WHITE).off_palette_share == 0.0
    for exception in (painted, noisy):
        got = sc.exception_shortcuts(majority, exception, 100, WHITE)
        assert got.off_palette_share == 1.0 and got.mostly_off_palette
        assert got.changed_share == pytest.approx(25 / 900)


def test_colour_only_means_one_silhouette_in_other_colours() -> None:
    orange = _square(_square(_tile(), 5, 5, 18, (240, 140, 20)), 8, 8, 4, (40, 40, 40))
    cyan = _square(_square(_tile(), 5, 5, 18, (20, 200, 230)), 8, 8, 4, (40, 40, 40))  # a palette swap
    reshaped = _square(_square(_tile(), 5, 5, 18, (240, 140, 20)), 12, 12, 6, (40, 40, 40))  # same outline
    other_shape = _square(_tile(), 8, 2, 12, (240, 140, 20))
    assert sc.exception_shortcuts(orange, cyan, 324, WHITE).colour_only
    got = sc.exception_shortcuts(orange, reshaped, 324, WHITE)
    assert got.silhouette_iou == 1.0 and not got.colour_only  # inner detail moved: not a colour swap
    assert not sc.exception_shortcuts(orange, other_shape, 324, WHITE).colour_only
    assert not sc.exception_shortcuts(orange, orange.copy(), 324, WHITE).colour_only  # nothing differs


def test_a_stretched_sprite_read_back_from_its_cell_is_screened_as_one_object() -> None:
    from rose_gen.assets.pixel.sprite import BACKGROUND, render_sprite

    sprite = np.zeros((32, 32, 4), dtype=np.uint8)
    sprite[6:26, 8:24] = (90, 60, 30, 255)  # one solid object
    two = sprite.copy()
    two[6:26, 15:17, 3] = 0  # cut in two halves
    for rgba, whole in ((sprite, True), (two, False)):
        inner = np.asarray(render_sprite(rgba, 110))
        cell = np.empty((120, 120, 3), dtype=np.uint8)
        cell[...] = BACKGROUND
        cell[5:115, 5:115] = inner
        failure = sc.whole_object_failure(cell, 5, BACKGROUND)
        assert (failure is None) == whole, failure


def test_lightness_shift_has_a_sign() -> None:
    light, dark = _square(_tile(), 5, 5, 10, (200, 200, 200)), _square(_tile(), 5, 5, 10, (20, 20, 20))
    assert sc.exception_shortcuts(light, dark, 100, WHITE).lightness_shift < -5
    assert sc.exception_shortcuts(dark, light, 100, WHITE).lightness_shift > 5


def test_position_bias_compares_with_an_even_spread() -> None:
    corners = [(5, 5, [(1, 1), (1, 5), (5, 1), (5, 5)])] * 30
    even = [(5, 5, [(r, c)]) for r in range(1, 6) for c in range(1, 6)] * 4
    biased, fair = sc.position_bias(corners), sc.position_bias(even)
    assert biased["border_share"] == 1.0 and biased["border_expected"] == 0.64
    assert biased["zone_p_value"] < 1e-6 and fair["zone_p_value"] > 0.9
    assert fair["border_share"] == fair["border_expected"]
    assert sc.position_bias([]) == {"exceptions": 0}


def test_limits_name_what_is_broken() -> None:
    figures = {"ROSE-EmojiStyle": {"art_area_within_5pct": 0.5}, "ROSE-PixelEdit": {"mostly_off_palette": 0.01}}
    broken = sc.broken_limits(figures)
    assert broken == ["ROSE-EmojiStyle art_area_within_5pct >= 0.98 (got 0.5)"]
    assert sc.broken_limits({}) == []
