"""Procedural sprite families: deterministic, related, distinct."""

from __future__ import annotations

import numpy as np

from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import sprite as px_sprite


def test_procedural_families_are_deterministic_related_and_distinct():
    a = px_proc.procedural_family(11, 4)
    b = px_proc.procedural_family(11, 4)
    assert [px_sprite.pixel_sha256(s) for s in a] == [px_sprite.pixel_sha256(s) for s in b]
    assert px_sprite.pixel_sha256(px_proc.procedural_family(12, 4)[0]) != px_sprite.pixel_sha256(a[0])
    assert len({px_sprite.pixel_sha256(s) for s in a}) == len(a)
    for s in a:
        assert s.shape == (32, 32, 4) and px_sprite.is_substantial(s)
        body = s[..., 3] > 0
        assert np.array_equal(body, body[:, ::-1])  # mirror symmetry
    assert px_sprite.sprite_similarity(a[0], a[1]) >= 0.6
