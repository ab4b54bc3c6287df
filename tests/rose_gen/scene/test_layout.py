"""Grid-size profiles, cell sizes and exception counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_gen.core.rng import scene_rng
from rose_gen.scene.layout import (
    LAYOUT_FAMILIES,
    V0_1_EXCEPTION_COUNTS,
    V0_1_PROFILE_MIX,
    LayoutParams,
    sample_layout,
)
from rose_gen.scene.v0_1_plans import V0_1_PLANS

FACTS_PROFILES = {  # facts section 2: (rows range per profile), cell range, max exceptions
    "glyph_emoji": ({"small": (8, 10), "medium": (11, 14), "large": (15, 18)}, (42, 64), 5),
    "pixel_edit": ({"small": (7, 8), "medium": (9, 11), "large": (12, 13)}, (120, 156), 6),
    "pixel_content": ({"small": (8, 10), "medium": (11, 13), "large": (14, 16)}, (120, 150), 8),
}


def test_families_match_the_facts():
    for name, (profiles, cells, max_ex) in FACTS_PROFILES.items():
        fam = LAYOUT_FAMILIES.get(name)
        assert {p.name: p.rows for p in fam.profiles} == profiles
        assert all(p.rows == p.cols for p in fam.profiles)
        assert fam.cell_size == cells and fam.max_exceptions == max_ex


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), k=st.integers(1, 10_000), subset=st.sampled_from(list(V0_1_PLANS)))
def test_layout_stays_in_profile(seed, k, subset):
    params = V0_1_PLANS[subset].layout
    fam = params.layout_family()
    lay = sample_layout(params, scene_rng(seed, subset, k, "layout"))
    prof = fam.profile(lay.grid_size_profile)
    assert prof.rows[0] <= lay.rows <= prof.rows[1]
    assert prof.cols[0] <= lay.cols <= prof.cols[1]
    assert fam.cell_size[0] <= lay.cell_size <= fam.cell_size[1]
    n = len(lay.target_cells)
    assert 1 <= n <= len(V0_1_EXCEPTION_COUNTS[subset])
    assert len(set(lay.target_cells)) == n
    assert all(1 <= r <= lay.rows and 1 <= c <= lay.cols for r, c in lay.target_cells)
    assert lay == sample_layout(params, scene_rng(seed, subset, k, "layout"))


def test_mixes_follow_the_weights():
    subset = "ROSE-PixelContent"
    params = V0_1_PLANS[subset].layout
    rng = np.random.default_rng(5)
    draws = [sample_layout(params, rng) for _ in range(3000)]
    mix = V0_1_PROFILE_MIX[subset]
    for name, weight in mix.items():
        share = np.mean([d.grid_size_profile == name for d in draws])
        assert abs(share - weight / sum(mix.values())) < 0.03, name
    counts = np.bincount([len(d.target_cells) for d in draws], minlength=9)[1:]
    expected = np.asarray(V0_1_EXCEPTION_COUNTS[subset]) / sum(V0_1_EXCEPTION_COUNTS[subset])
    assert np.abs(counts / len(draws) - expected).max() < 0.03


def test_zero_weights_are_never_drawn_and_cells_are_uniform():
    params = LayoutParams(family="pixel_edit", profile_weights={"small": 0, "medium": 0, "large": 1},
                          exception_weights=(0, 0, 1), cell_size=(130, 130))
    rng = np.random.default_rng(0)
    hits = np.zeros((13, 13))
    for _ in range(16000):
        lay = sample_layout(params, rng)
        assert lay.grid_size_profile == "large" and lay.cell_size == 130
        assert len(lay.target_cells) == 3
        if lay.rows == lay.cols == 12:
            for r, c in lay.target_cells:
                hits[r - 1, c - 1] += 1
    grid = hits[:12, :12]
    assert hits[12].sum() == 0 and hits[:, 12].sum() == 0
    # uniform placement: every cell's count is within a generous band around the mean
    assert grid.min() > 0.55 * grid.mean() and grid.max() < 1.45 * grid.mean()


def test_bad_layout_params_raise():
    with pytest.raises(ValueError, match="unknown profile"):
        sample_layout(LayoutParams(profile_weights={"huge": 1}), np.random.default_rng(0))
    with pytest.raises(ValueError, match="exception weights"):
        sample_layout(LayoutParams(exception_weights=()), np.random.default_rng(0))
