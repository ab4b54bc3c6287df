"""The visibility measure: luminance and chroma terms, alignment, and a scene's exception cells."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets.visibility import (
    DEFAULT_THRESHOLDS,
    Thresholds,
    TileDifference,
    aligned,
    best_offset,
    compare,
    is_visible,
    look,
    scene_visibility,
    tile_difference,
    why_invisible,
)
from rose_gen.render.degrade import jittered_grid


def _tile(colour=(0, 0, 0), size: int = 40, box=(10, 30, 12, 20)) -> np.ndarray:
    tile = np.full((size, size, 3), 255, dtype=np.uint8)
    top, bottom, left, right = box
    tile[top:bottom, left:right] = colour
    return tile


def test_identical_and_one_pixel_tiles_are_invisible() -> None:
    tile = _tile()
    assert not is_visible(tile_difference(tile, tile.copy()))
    speck = tile.copy()
    speck[0, 0] = 0
    diff = tile_difference(tile, speck)
    assert not is_visible(diff) and "luminance changed" in why_invisible(diff)


def test_a_colour_change_at_equal_lightness_is_visible_by_chroma_alone() -> None:
    # Two colours of (almost) equal Rec. 601 luma: a luminance-only measure misses the swap.
    red, green = _tile((200, 60, 60)), _tile((60, 128, 60))
    diff = tile_difference(red, green)
    assert diff.changed_fraction == 0.0 and diff.ssim > 0.995
    assert diff.chroma_changed_fraction > 0.1 and is_visible(diff)
    assert not is_visible(diff, min_chroma_fraction=1.0)


def test_a_shape_change_in_grey_is_visible_by_luminance() -> None:
    diff = tile_difference(_tile(), _tile(box=(10, 30, 12, 26)))
    assert diff.chroma_changed_fraction == 0.0 and diff.changed_fraction > 0.05 and is_visible(diff)


def test_thresholds_scale_and_take_options() -> None:
    strict = DEFAULT_THRESHOLDS.scaled(2.0)
    assert strict == Thresholds(min_changed_fraction=0.01, max_ssim=pytest.approx(0.99), min_chroma_fraction=0.01)
    diff = TileDifference(changed_fraction=0.007, ssim=0.99, chroma_changed_fraction=0.0)
    assert is_visible(diff) and not is_visible(diff, strict)
    assert DEFAULT_THRESHOLDS.with_options({"max_ssim": 0.9}).max_ssim == 0.9
    with pytest.raises(ValueError, match="unknown visibility threshold"):
        DEFAULT_THRESHOLDS.with_options({"ssim": 0.9})


def test_compare_of_looks_is_tile_difference() -> None:
    a, b = _tile(), _tile((200, 60, 60), box=(8, 30, 12, 24))
    assert compare(look(a), look(b)) == tile_difference(a, b)


def test_best_offset_undoes_a_jitter_shift() -> None:
    tile = _tile()
    shifted = np.full_like(tile, 255)
    shifted[3:, :-2] = tile[:-3, 2:]  # content moved 3 px down, 2 px left
    assert tile_difference(tile, shifted).changed_fraction > 0.05
    offset = best_offset(look(shifted), look(tile), 4)
    assert offset == (3, -2)
    assert compare(look(tile), look(shifted), offset).changed_fraction == 0.0
    a, b = aligned(tile, shifted, offset)
    assert a.shape == b.shape == (37, 38, 3) and np.array_equal(a, b)
    assert best_offset(look(shifted), look(tile), 0) == (0, 0)


def _grid(majority: np.ndarray, exceptions: dict[tuple[int, int], np.ndarray], rows: int = 4, cols: int = 5):
    cell = majority.shape[0]
    image = np.tile(majority, (rows, cols, 1))
    for (r, c), tile in exceptions.items():
        image[(r - 1) * cell:r * cell, (c - 1) * cell:c * cell] = tile
    return image


def test_scene_visibility_names_the_invisible_cell() -> None:
    majority = _tile()
    speck = majority.copy()
    speck[20, 20] = 128
    image = _grid(majority, {(1, 2): _tile(box=(10, 30, 12, 28)), (3, 4): speck})
    seen = scene_visibility(image, 4, 5, 40, [(1, 2), (3, 4)])
    assert [c.visible for c in seen.cells] == [True, False] and not seen.visible
    assert np.array_equal(seen.reference, majority) and len(seen.sample) == 8
    assert len(seen.reasons()) == 1 and seen.reasons()[0].startswith("cell R3C4:")


def test_under_jitter_an_exception_is_judged_after_alignment() -> None:
    majority, bigger, same = _tile(), _tile(box=(10, 30, 12, 28)), _tile()
    index = np.zeros((4, 5), dtype=np.int64)
    index[1, 1], index[2, 3] = 1, 2  # cells (2, 2): a wider bar; (3, 4): the majority drawn again
    params = {"seed": 7, "max_offset": 0.08, "min_scale": 1.0}  # shifts only, up to 3 px
    image = jittered_grid([majority, bigger, same], index, params)
    unaligned = scene_visibility(image, 4, 5, 40, [(2, 2), (3, 4)], max_offset=0)
    seen = scene_visibility(image, 4, 5, 40, [(2, 2), (3, 4)], max_offset=3)
    assert [c.visible for c in seen.cells] == [True, False]
    assert unaligned.cells[1].against_nearest.changed_fraction > seen.cells[1].against_nearest.changed_fraction


def _jitter_scene(seed: int = 5):
    from rose_gen.render.degrade import cell_placements

    yy, xx = np.mgrid[:48, :48]
    majority = np.full((48, 48, 3), 255, dtype=np.uint8)
    majority[(yy - 24) ** 2 + (xx - 24) ** 2 < 180] = (60, 120, 200)
    majority[18:30, 20:23] = (20, 20, 20)
    edited = majority.copy()
    edited[30:38, 14:34] = (20, 20, 20)  # a visible bar
    index = np.zeros((5, 6), dtype=np.int64)
    index[1, 2], index[3, 4] = 1, 2  # (2, 3): the edit; (4, 5): the majority again
    params = {"seed": seed, "max_offset": 0.08, "min_scale": 0.85}
    image = jittered_grid([majority, edited, majority.copy()], index, params, margin=2)
    return image, cell_placements(5, 6, 48, params)


def test_recorded_jitter_is_undone_so_a_scaled_copy_is_not_an_exception() -> None:
    image, placements = _jitter_scene()
    seen = scene_visibility(image, 5, 6, 48, [(2, 3), (4, 5)], placements=placements)
    assert [c.visible for c in seen.cells] == [True, False]
    # Undone, the copy matches the majority's median; only shifted, it differs from that blur.
    shifted_only = scene_visibility(image, 5, 6, 48, [(2, 3), (4, 5)], max_offset=4)
    assert seen.cells[1].against_median.changed_fraction < 0.01
    assert shifted_only.cells[1].against_median.changed_fraction > 0.05


def test_unplaced_maps_a_jittered_cell_back_onto_the_cell() -> None:
    from rose_gen.assets.visibility import unplaced

    image, placements = _jitter_scene()
    first = image[:48, :48]
    back = unplaced(first, placements[0])
    assert back.shape == first.shape
    assert unplaced(first, (48, 0, 0)) is first
    assert placements[0] != (48, 0, 0)


def test_noise_floor_raises_the_thresholds_to_the_scenes_own_noise() -> None:
    from rose_gen.assets.visibility import noise_floor

    tile = _tile()
    same = [look(tile), look(tile.copy())]
    assert noise_floor(same) == DEFAULT_THRESHOLDS
    noisy = [look(_tile(box=(10, 30, 12 + k, 20 + k))) for k in range(3)]
    raised = noise_floor(noisy)
    assert raised.min_changed_fraction > DEFAULT_THRESHOLDS.min_changed_fraction
    assert raised.max_ssim < DEFAULT_THRESHOLDS.max_ssim
    # A shift as large as the siblings' own differences no longer counts as visible.
    assert not is_visible(compare(noisy[0], noisy[1]), raised)


def _random_tiles() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    palette = rng.integers(0, 256, (9, 3), dtype=np.uint8)
    blocks = palette[rng.integers(0, 9, (14, 11))].repeat(5, 0).repeat(5, 1)  # pixel art: few colours
    smooth = np.clip(rng.normal(190, 70, (47, 47, 3)), 0, 255).astype(np.uint8)  # anti-aliased: many
    return [blocks, smooth, _tile((200, 30, 60))]


@pytest.mark.parametrize("index", range(3))
def test_look_of_a_uint8_tile_equals_converting_and_blurring_every_pixel(index):
    from scipy.ndimage import gaussian_filter
    from skimage.color import rgb2lab

    from rose_gen.assets.visibility import chroma, lab

    tile = _random_tiles()[index]
    seen = look(tile)
    rgb = tile.astype(np.float64)
    every = rgb2lab(tile)  # every pixel converted, no table of distinct colours
    assert np.array_equal(lab(tile), every)
    assert np.array_equal(chroma(tile), every[..., 1:])
    assert np.array_equal(seen.chroma, gaussian_filter(every[..., 1:], (2.0, 2.0, 0)))
    assert np.array_equal(seen.luminance, gaussian_filter(rgb @ np.array([0.299, 0.587, 0.114]) / 255.0, 1.0))
    assert np.array_equal(chroma(rgb), every[..., 1:])  # the float path agrees with the uint8 one


def test_distinct_equals_numpy_unique():
    from rose_gen.assets.visibility import distinct

    rng = np.random.default_rng(8)
    for n, high in ((0, 5), (1, 5), (500, 3), (5000, 2**24), (20000, 40)):
        values = rng.integers(0, high, n).astype(np.uint32)
        got = distinct(values)
        assert got.dtype == values.dtype and np.array_equal(got, np.unique(values))
    assert np.array_equal(distinct(np.array([[3, 1], [1, 2]])), [1, 2, 3])
