"""The medium/hard rule."""

from __future__ import annotations

from rose_gen.difficulty import DifficultyParams, difficulty_score, rate, similarity_tier

PARAMS = DifficultyParams(hard_from=7)


def test_score_adds_documented_points():
    label, inputs = rate(1, "zero", None, "large", PARAMS)  # 4 + 2 + 0 + 5
    assert (label, inputs["score"], inputs["hard_from"]) == ("hard", 11, 7)
    label, inputs = rate(2, "partial", None, "small", PARAMS)  # 0 + 0 + 0 + 0
    assert (label, inputs["score"]) == ("medium", 0)
    assert difficulty_score({"exception_count": 8, "region_case": "all",
                             "similarity_tier": "high", "grid_size_profile": "medium"}, PARAMS) == 3 + 0 + 2 + 2
    assert rate(3, "partial", 0.99, "large", PARAMS)[0] == "hard"  # 1 + 0 + 2 + 5 = 8
    assert rate(3, "partial", 0.90, "large", PARAMS)[0] == "medium"  # 1 + 0 + 0 + 5 = 6


def test_recorded_inputs_reproduce_the_label():
    for n in range(1, 9):
        for case in ("zero", "partial", "all"):
            for sim in (None, 0.5, 0.99):
                for grid in ("small", "medium", "large"):
                    label, inputs = rate(n, case, sim, grid, PARAMS)
                    assert inputs["similarity_tier"] == similarity_tier(sim, PARAMS)
                    assert label == ("hard" if difficulty_score(inputs, PARAMS) >= 7 else "medium")
