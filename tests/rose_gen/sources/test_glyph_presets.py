"""ChineseGlyph under difficulty presets: a second identity drawn in the scene's own face."""

from __future__ import annotations

import numpy as np

from rose_gen.scene.presets import DifficultyPreset, PresetPool, companion
from rose_gen.sources.glyph import GlyphSource


def test_a_second_identity_shares_the_scenes_majority_and_face() -> None:
    source = GlyphSource()
    ppool = PresetPool.build(source.pool({}), DifficultyPreset(similarity_band=(0.8, 1.0), second_identity_share=1.0))
    rng = np.random.default_rng(0)
    found = []
    for entry in list(ppool.band)[:40]:
        pair = source.orient(entry, rng)
        second = companion(pair, ppool, source, 31, rng)
        if second is not None:
            found.append((pair, second))
    assert len(found) >= 5
    for pair, second in found:
        assert second.majority == pair.majority and second.target not in (pair.target, pair.majority)
        assert second.render == pair.render  # the scene's face, so the majority tile is pixel-identical
        assert np.array_equal(np.asarray(source.render_tile(second, "majority", 31)),
                              np.asarray(source.render_tile(pair, "majority", 31)))
