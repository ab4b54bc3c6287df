"""Named random streams: every draw the toolkit makes comes from a stream built here.

A stream is identified by (seed, subset, purpose, index). The two names are turned into
64-bit keys with SHA-256 (Python's ``hash`` is salted per process) and the four numbers
seed numpy's ``SeedSequence``, so a stream never depends on which other streams were
drawn, in which order, or in which process. The evaluator owns this scheme because its
bootstrap intervals are published numbers: the draws are pinned by
``tests/rose_eval/test_seeding.py``. The generator derives its scene streams from the
same function (``rose_gen.core.rng``).
"""

from __future__ import annotations

import hashlib

import numpy as np


def name_key(name: str) -> int:
    """A stable 64-bit integer for a stream name."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")


def seed_sequence(seed: int, subset: str, purpose: str, index: int = 0) -> np.random.SeedSequence:
    """The SeedSequence of the stream (seed, subset, purpose, index); both numbers >= 0."""
    if seed < 0 or index < 0:
        raise ValueError(f"a stream needs a non-negative seed and index, got {seed} and {index}")
    return np.random.SeedSequence([int(seed), name_key(subset), name_key(purpose), int(index)])


def stream(seed: int, subset: str, purpose: str, index: int = 0) -> np.random.Generator:
    """A PCG64 generator for the stream (seed, subset, purpose, index)."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, subset, purpose, index)))
