"""The medium/hard rule."""

from __future__ import annotations

import pytest

from rose_gen.scene.difficulty import (
    DifficultyParams,
    apply_cut,
    difficulty_score,
    rate,
    share_cut,
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
    for params in (PARAMS, DifficultyParams(high_similarity=0.9, high_similarity_share=0.5),
                   DifficultyParams(hard_share=0.52, hard_tie_from=0.25)):
        assert DifficultyParams.from_json(params.to_json()) == params
    assert "hard_share" not in PARAMS.to_json()  # threshold-only plans keep their recorded form


@pytest.mark.parametrize("share", [0.0, 0.17, 0.5, 0.52, 0.77, 1.0])
def test_share_cut_makes_exactly_the_share_hard(share):
    # many equal scores: only the tie-break can split them
    ranks = [(score, tie / 97) for score, tie in zip([3, 5, 5, 5, 5, 7, 5, 2, 5, 9] * 10, range(100), strict=True)]
    cut = share_cut(ranks, share)
    assert sum(r >= cut for r in ranks) == round(share * 100)
    hard = sorted(r for r in ranks if r >= cut)
    assert all(h > m for h in hard for m in ranks if m < cut)  # the hard ones are the highest ranked


def test_share_cut_refuses_a_share_outside_0_1():
    with pytest.raises(ValueError, match="hard_share"):
        share_cut([(1, 0.5)], 1.5)


def test_a_cut_label_follows_from_the_recorded_inputs():
    params = DifficultyParams(hard_share=0.5)
    _, low = rate(2, "partial", "low", "small", params, tie_break=0.9)   # score 0
    _, mid = rate(3, "partial", "low", "small", params, tie_break=0.2)   # score 1
    _, tie = rate(3, "partial", "low", "small", params, tie_break=0.7)   # score 1, later in the tie
    cut = share_cut([(r["score"], r["tie_break"]) for r in (low, mid, tie)], 0.34)  # one of three
    labels = [apply_cut(r, cut) for r in (low, mid, tie)]
    assert [label for label, _ in labels] == ["medium", "medium", "hard"]
    for label, inputs in labels:  # the row alone re-derives its label through rate()
        again = rate(inputs["exception_count"], inputs["region_case"], inputs["similarity_tier"],
                     inputs["grid_size_profile"],
                     DifficultyParams(hard_from=inputs["hard_from"], hard_tie_from=inputs["hard_tie_from"]),
                     tie_break=inputs["tie_break"])
        assert again == (label, inputs)
