"""Comparing emoji tiles: the pair visibility rule and thumbnail similarity."""

from __future__ import annotations

import pytest
from PIL import Image

from rose_gen.assets.emoji.artwork import render_asset
from rose_gen.assets.emoji.similarity import (
    VisibilityRule,
    check_pair,
    similarity_matrix,
    thumbnail,
)
from tests.rose_gen.assets.emoji.conftest import asset


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
