"""Seed derivation. Every random draw in rose_gen comes from a generator made here.

Seeds are derived from (release seed, subset, purpose, scene index) with numpy's
SeedSequence, so any scene can be regenerated alone and worker count or order never
changes a draw. Nothing in the package touches global random state.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _name_key(name: str) -> int:
    """A stable 64-bit integer for a name (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")


def seed_sequence(seed: int, subset: str, purpose: str, index: int = 0) -> np.random.SeedSequence:
    """The SeedSequence for one (seed, subset, purpose, index) stream."""
    if seed < 0 or index < 0:
        raise ValueError("seed and index must be non-negative integers")
    return np.random.SeedSequence([int(seed), _name_key(subset), _name_key(purpose), int(index)])


def scene_rng(seed: int, subset: str, scene_index: int, purpose: str = "scene") -> np.random.Generator:
    """Generator for one scene's draws (layout, placement, regions, ...)."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, subset, purpose, scene_index)))


def subset_rng(seed: int, subset: str, purpose: str) -> np.random.Generator:
    """Generator for subset-wide draws (pair order, dev/test split)."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, subset, purpose, 0)))
