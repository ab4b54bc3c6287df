"""Scene-level dev/test split: exact dev count per subset, seeded, scattered over the
scene index range. All five tasks and both images of a scene share its split."""

from __future__ import annotations

import numpy as np

from rose_gen.core.rng import subset_rng


def dev_scene_indices(seed: int, subset: str, n_scenes: int, n_dev: int) -> frozenset[int]:
    """The 1-based indices of the ``n_dev`` dev scenes among ``n_scenes``."""
    if not 0 <= n_dev <= n_scenes:
        raise ValueError(f"{subset}: n_dev={n_dev} must be between 0 and n_scenes={n_scenes}")
    rng = subset_rng(seed, subset, "split")
    picks = rng.choice(n_scenes, size=n_dev, replace=False) if n_dev else np.empty(0, int)
    return frozenset(int(i) + 1 for i in picks)


def assign_splits(seed: int, subset: str, n_scenes: int, n_dev: int) -> tuple[str, ...]:
    """``dev``/``test`` for scenes 1..n_scenes (entry k-1 is scene k's split)."""
    dev = dev_scene_indices(seed, subset, n_scenes, n_dev)
    return tuple("dev" if k in dev else "test" for k in range(1, n_scenes + 1))


def scene_split(seed: int, subset: str, n_scenes: int, n_dev: int, scene_index: int) -> str:
    """The split of one scene (1-based ``scene_index``)."""
    if not 1 <= scene_index <= n_scenes:
        raise ValueError(f"{subset}: scene index {scene_index} outside 1..{n_scenes}")
    return "dev" if scene_index in dev_scene_indices(seed, subset, n_scenes, n_dev) else "test"
