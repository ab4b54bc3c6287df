"""Seed derivation for the generator. Every random draw in rose_gen comes from a generator made here.

Streams are derived from (release seed, subset, purpose, scene index) by the toolkit's one
seeding scheme, :mod:`rose_eval.seeding`, so any scene can be regenerated alone and worker
count or order never changes a draw. Nothing in the package touches global random state.
"""

from __future__ import annotations

import numpy as np

from rose_eval.seeding import seed_sequence, stream

__all__ = ["scene_rng", "seed_sequence", "subset_rng"]


def scene_rng(seed: int, subset: str, scene_index: int, purpose: str = "scene") -> np.random.Generator:
    """Generator for one scene's draws (layout, placement, regions, ...)."""
    return stream(seed, subset, purpose, scene_index)


def subset_rng(seed: int, subset: str, purpose: str) -> np.random.Generator:
    """Generator for subset-wide draws (pair order, dev/test split)."""
    return stream(seed, subset, purpose, 0)
