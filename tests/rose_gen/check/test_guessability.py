"""rose-audit's answer guessability: the dev prior's PASS on test per template, warned above chance."""

from __future__ import annotations

from rose_gen.check.guessability import WARN_POINTS, guessability, guessability_table

T2 = "T2_COUNT_LOCAL_NUMERIC"


def _row(split: str, count: int, subset: str = "ROSE-PixelEdit") -> dict:
    return {"split": split, "task_template": T2, "task_mode": "COUNT", "rose_subset": subset,
            "prompt_local": "Count the number of cells that are different from the majority in rows 2 to 3.",
            "answer": f"COUNT({count})", "ground_truth_count": count}


def test_a_skewed_template_is_warned_with_the_prior_pass_on_test():
    # dev: COUNT(1) most often; test: 7 of 10 COUNT(1); counts 0..3 -> uniform 25 %
    rows = [_row("dev", c) for c in (1, 1, 1, 0, 2, 3)] + [_row("test", c) for c in (1,) * 7 + (0, 2, 3)]
    record = guessability(rows)
    t = record["templates"]["L-Cnt"]
    assert t["prior_pass"] == 70.0 and t["uniform"] == 25.0 and t["top_answer"] == "COUNT(1)"
    assert t["top_share"] == round(100 * 10 / 16, 1)
    assert len(record["warnings"]) == 1 and record["warnings"][0].startswith("L-Cnt")
    assert "guessable answers: L-Cnt" in guessability_table(record)


def test_the_prior_is_fitted_on_dev_only_and_balanced_answers_are_not_warned():
    # dev says COUNT(3); test is uniform over 0..3 -> the prior passes a quarter: chance, no warning
    rows = [_row("dev", 3)] * 5 + [_row("test", c) for c in (0, 1, 2, 3) * 3]
    record = guessability(rows)
    assert record["templates"]["L-Cnt"]["prior_pass"] == 25.0
    assert record["templates"]["L-Cnt"]["prior_pass"] - record["templates"]["L-Cnt"]["uniform"] <= WARN_POINTS
    assert record["warnings"] == []
    # without a dev split there is no prior (never fitted on the test rows)
    assert guessability([r for r in rows if r["split"] == "test"])["templates"]["L-Cnt"]["prior_pass"] is None


def test_uniform_chance_is_the_mean_over_subsets():
    rows = [_row("test", c, "ROSE-PixelEdit") for c in (0, 1)] + [_row("test", c, "ROSE-ChineseGlyph") for c in (0, 3)]
    assert guessability(rows)["templates"]["L-Cnt"]["uniform"] == round((50.0 + 25.0) / 2, 1)
