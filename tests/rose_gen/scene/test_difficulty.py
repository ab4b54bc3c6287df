"""The medium/hard rule."""

from __future__ import annotations

from rose_gen.scene.difficulty import (
    DifficultyParams,
    difficulty_score,
    rate,
    similarity_cut,
    similarity_tier,
)

PARAMS = DifficultyParams(hard_from=7)


def test_score_adds_documented_points():
    label, inputs = rate(1, "zero", "unknown", "large", PARAMS)  # 4 + 2 + 0 + 5
    assert (label, inputs["score"], inputs["hard_from"]) == ("hard", 11, 7)
    label, inputs = rate(2, "partial", "low", "small", PARAMS)  # 0 + 0 + 0 + 0
    assert (label, inputs["score"]) == ("medium", 0)
    assert difficulty_score({"exception_count": 8, "region_case": "all",
                             "similarity_tier": "high", "grid_size_profile": "medium"}, PARAMS) == 3 + 0 + 1 + 2
    assert rate(3, "zero", "high", "medium", PARAMS)[0] == "medium"  # 1 + 2 + 1 + 2 = 6
    assert rate(4, "zero", "high", "medium", PARAMS)[0] == "hard"  # 2 + 2 + 1 + 2 = 7


def test_similarity_tier_is_relative_to_the_pool():
    pool = [0.1 * i for i in range(10)] + [None]
    cut = similarity_cut(pool, PARAMS)  # top 20% of 10 scored pairs: the two highest
    assert [similarity_tier(s, cut) for s in pool].count("high") == 2
    assert similarity_tier(None, cut) == "unknown"
    assert similarity_cut([None, None], PARAMS) is None
    assert similarity_tier(0.5, None) == "unknown"
    absolute = DifficultyParams(high_similarity=0.35)
    assert similarity_cut(pool, absolute) == 0.35
    assert similarity_cut([0.9], PARAMS) == 0.9  # one scored pair: it is the top share


def test_recorded_inputs_reproduce_the_label():
    for n in range(1, 9):
        for case in ("zero", "partial", "all"):
            for tier in ("unknown", "low", "high"):
                for grid in ("small", "medium", "large"):
                    label, inputs = rate(n, case, tier, grid, PARAMS)
                    assert inputs["similarity_tier"] == tier
                    assert label == ("hard" if difficulty_score(inputs, PARAMS) >= 7 else "medium")


def test_params_json_round_trip():
    for params in (PARAMS, DifficultyParams(high_similarity=0.9, high_similarity_share=0.5)):
        assert DifficultyParams.from_json(params.to_json()) == params
