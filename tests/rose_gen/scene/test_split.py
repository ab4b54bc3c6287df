"""Scene-level dev/test split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_gen.scene.split import assign_splits, dev_scene_indices, scene_split
from rose_gen.scene.v0_1_plans import V0_1_PLANS


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 500), data=st.data())
def test_exact_dev_count_and_determinism(seed, n, data):
    n_dev = data.draw(st.integers(0, n))
    splits = assign_splits(seed, "ROSE-PixelEdit", n, n_dev)
    assert len(splits) == n
    assert splits.count("dev") == n_dev
    assert splits == assign_splits(seed, "ROSE-PixelEdit", n, n_dev)
    k = data.draw(st.integers(1, n))
    assert scene_split(seed, "ROSE-PixelEdit", n, n_dev, k) == splits[k - 1]


def test_v0_1_counts_and_scatter():
    for subset, plan in V0_1_PLANS.items():
        splits = assign_splits(0, subset, plan.n_scenes, plan.n_dev)
        assert splits.count("dev") == plan.n_dev
        assert splits.count("test") == plan.n_scenes - plan.n_dev
        # scattered: every quarter of the index range holds dev and test scenes
        q = plan.n_scenes // 4
        for part in range(4):
            chunk = splits[part * q : (part + 1) * q]
            assert "dev" in chunk and "test" in chunk, (subset, part)


def test_subsets_and_seeds_differ():
    a = dev_scene_indices(0, "ROSE-EmojiStyle", 300, 79)
    assert a != dev_scene_indices(0, "ROSE-EmojiContent", 300, 79)
    assert a != dev_scene_indices(1, "ROSE-EmojiStyle", 300, 79)


def test_bad_counts_raise():
    with pytest.raises(ValueError, match="n_dev=5"):
        assign_splits(0, "ROSE-EmojiStyle", 4, 5)
    with pytest.raises(ValueError, match="outside"):
        scene_split(0, "ROSE-EmojiStyle", 4, 1, 5)
