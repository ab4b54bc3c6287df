"""EmojiStyle under difficulty presets: the similarity band applies, the floor holds, a third vendor
gives a second identity, and a preset that cannot apply a knob says so."""

from __future__ import annotations

import numpy as np

from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.scene.presets import DifficultyPreset, PresetPool, PresetTally, band_pool, companion
from rose_gen.sources.emoji_style import SOURCE, STYLE_SIMILARITY_FLOOR, style_pool

HARD = DifficultyPreset(name="hard", similarity_band=(0.5, 1.0), second_identity_share=1.0)


def _ssim(pair) -> float:
    return identity_records()[pair.pair_key]["verification"]["pairs"]["noto|twemoji"]["ssim"]


def test_the_band_applies_to_emoji_style_and_keeps_the_more_similar_half_above_the_floor() -> None:
    pool = style_pool({})
    band, applied = band_pool(pool, HARD)
    assert applied, "EmojiStyle's band silently skipped"
    scored = [p for p in pool if _ssim(p) >= STYLE_SIMILARITY_FLOOR]
    assert abs(len(band) - len(scored) / 2) <= 1
    assert min(_ssim(p) for p in band) >= np.median([_ssim(p) for p in scored]) - 1e-9
    # standard leaves the pool (and so v0.1's scenes) untouched
    assert band_pool(pool, DifficultyPreset()) == (list(pool), False)
    # an applied band never holds a pair below the floor (the troll: Twemoji's face, Noto's whole body)
    easy, _ = band_pool(pool, DifficultyPreset(similarity_band=(0.0, 0.5)))
    assert "1f9cc" not in {p.pair_key for p in easy} and min(_ssim(p) for p in easy) >= STYLE_SIMILARITY_FLOOR


def test_a_third_vendor_gives_a_second_identity_beside_the_scenes_own_majority_tile() -> None:
    pool = style_pool({})
    ppool = PresetPool.build(pool, HARD)
    rng = np.random.default_rng(0)
    got = [companion(SOURCE.orient(p, rng), ppool, SOURCE, 36, rng) for p in list(ppool.band)[:30]]
    found = [c for c in got if c is not None]
    assert found and all(c.target.startswith("openmoji:") and c.majority.startswith("twemoji:") for c in found)


def test_a_preset_that_skips_a_knob_says_so() -> None:
    from dataclasses import replace

    from rose_gen.scene.plan import plan_subset
    from tests.rose_gen.scene.planning_fakes import FakeSource, small_plan

    plan = replace(small_plan(n_scenes=4, n_dev=1), preset=HARD)
    tally = PresetTally()
    for scene in plan_subset(plan, 0, FakeSource("ROSE-ChineseGlyph")):  # no similarity, no companion
        tally.add(scene)
    notes = tally.notes()
    assert any("similarity band not applied in 4 of 4" in n for n in notes)
    assert any("second exception identity unavailable" in n for n in notes)
