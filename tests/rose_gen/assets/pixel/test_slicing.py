"""Slicing Crawl's sheets: grid and packed sheets, seams, dedupe, a missing sheet."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from rose_gen.assets.pixel import slicing as px_slice
from rose_gen.assets.pixel import sprite as px_sprite
from tests.rose_gen.assets.pixel.conftest import blob_sprite


def test_feat_sheet_slices_to_known_counts_of_real_sprites():
    sprites, pieces = px_slice.slice_sheet(px_slice.SheetSpec("feat", "components"))
    assert pieces == 1547  # alpha components after guillotine splits, as measured
    assert len(sprites) == 127  # substantial ones
    for s in sprites:
        assert s.pixels.shape == (32, 32, 4)
        assert s.w <= 32 and s.h <= 32
        assert int(px_sprite.solid_mask(s.pixels).sum()) >= px_sprite.MIN_SOLID_PIXELS
        assert px_sprite.is_substantial(s.pixels)


def test_floor_sheet_is_sliced_on_the_32px_grid():
    sprites, pieces = px_slice.slice_sheet(px_slice.SheetSpec("floor", "grid"))
    assert pieces == 30 * 32  # 960x1024 sheet
    assert len(sprites) == 902
    assert all(s.x % 32 == 0 and s.y % 32 == 0 and (s.w, s.h) == (32, 32) for s in sprites)
    assert len(px_slice.dedupe(sprites)) == 893


def _disc(size: int, colour: tuple[int, int, int]) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    inside = (yy - (size - 1) / 2) ** 2 + (xx - (size - 1) / 2) ** 2 <= (size / 2) ** 2
    out = blob_sprite(size, size, colour)
    out[~inside] = 0
    return out


def test_abutting_sprites_are_split_at_the_seam():
    # Like the packed atlases: trimmed boxes side by side, round shapes touching at the seam.
    sheet = np.zeros((32, 64, 4), dtype=np.uint8)
    sheet[2:28, 0:26] = _disc(26, (200, 40, 40))
    sheet[0:30, 26:56] = _disc(30, (40, 40, 200))
    _, k = ndimage.label(sheet[..., 3] > 0, structure=np.ones((3, 3)))
    assert k == 1  # one component, 56 px wide: must be cut
    pieces = px_slice.slice_components(sheet)
    assert [(x, y, m.shape) for x, y, m in pieces] == [(26, 0, (30, 30)), (0, 2, (26, 26))]


def test_dedupe_keeps_first_of_identical_canvases():
    a = px_sprite.centre_on_canvas(blob_sprite(20, 20, (10, 200, 10)))
    b = px_sprite.centre_on_canvas(blob_sprite(20, 18, (10, 200, 10)))
    items = [px_slice.SlicedSprite("s", i, 0, 20, 20, arr) for i, arr in enumerate([a, b, a.copy()])]
    kept = px_slice.dedupe(items)
    assert [s.x for s in kept] == [0, 1]


def test_missing_sheet_names_the_package(tmp_path):
    with pytest.raises(px_sprite.PixelAssetError, match="apt-get install crawl-tiles-data"):
        px_slice.crawl_sheet_path("main", tmp_path)
