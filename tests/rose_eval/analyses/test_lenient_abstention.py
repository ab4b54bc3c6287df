"""Lenient diagnostic parse and abstention, scored with the strict parser and scorer."""

from __future__ import annotations

import pytest

from rose_eval.analyses.abstention import abstained, abstention_summary, is_zero_target
from rose_eval.analyses.lenient import last_answer, lenient_summary
from rose_eval.score import score_item
from tests.rose_eval.analyses.factory import GLYPH, T1, T3, T5, item


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ("I count COUNT(2) at first, but the final answer is COUNT( 3 ).", "COUNT", "COUNT( 3 )"),
        ("no answer here", "COUNT", None),
        ("Cells: CLICK(R1,C2); CLICK(R3,C4); DONE. That's all.", "CLICK",
         "CLICK(R1,C2); CLICK(R3,C4); DONE"),
        ("Draft CLICK(R9,C9); DONE\nFinal: CLICK(R1,C1);DONE", "CLICK", "CLICK(R1,C1);DONE"),
        ("Nothing to click, so: DONE", "CLICK", "DONE"),
        ("ABANDONED", "CLICK", None),
        ("Answer: click(r2,c5); SUBMIT(1)", "CLICK_COUNT", "click(r2,c5); SUBMIT(1)"),
        ("COUNT(٣)", "COUNT", "COUNT(٣)"),
        (None, "COUNT", None),
        ("CLICK(R1,C1) CLICK(R2,C2); DONE", "CLICK", "CLICK(R2,C2); DONE"),
        ("CLICK(R1,C1) DONE", "CLICK", "DONE"),
        # The issue's cases: the last complete chain wins over a later prose "done" ...
        ("CLICK(R1,C2); CLICK(R3,C4); DONE. I think that is done", "CLICK",
         "CLICK(R1,C2); CLICK(R3,C4); DONE"),
        # ... and "done" inside a sentence is not an answer.
        ("No odd cells here, so I am done.", "CLICK", None),
        ("no targets.\nDONE", "CLICK", "DONE"),
        ("**Done**", "CLICK", "Done"),
        ("The answer is DONE.", "CLICK", "DONE"),
        ("I think we are done here", "CLICK", None),
        ("Done. Nothing differs.", "CLICK", "Done"),
        ("I am done; DONE", "CLICK", "DONE"),
        ("CLICK(R1,C1); DONE\nOn reflection: DONE", "CLICK", "DONE"),
        ("So CLICK(R1,C1);\n CLICK(R2,C2) ;DONE", "CLICK", "CLICK(R1,C1);\n CLICK(R2,C2) ;DONE"),
        ("oops; CLICK(R4,C4); SUBMIT(1) ok", "CLICK_COUNT", "CLICK(R4,C4); SUBMIT(1)"),
        ("COUNT(1)", "UNKNOWN", None),
    ],
)
def test_last_answer(text, mode, expected) -> None:
    assert last_answer(text, mode) == expected


def test_last_answer_is_linear_on_long_click_runs() -> None:
    # A regex with a nested click loop backtracks quadratically here (minutes for this
    # size); the backward token walk is linear.
    text = "CLICK(R1,C1); " * 50_000
    assert last_answer(text, "CLICK") is None
    assert last_answer(text + "DONE", "CLICK") == text + "DONE"
    assert last_answer("CLICK(R1,C1) " * 50_000 + "; DONE", "CLICK") == "CLICK(R1,C1) ; DONE"


def _row(item_id: str, template: str, mode: str, gold: list[str], region_type="GLOBAL",
         region_params=None) -> dict:
    return {
        "item_id": item_id, "scene_id": "s1", "rose_subset": GLYPH, "split": "test",
        "task_template": template, "task_mode": mode, "region_type": region_type,
        "region_params": region_params or {}, "rows": 5, "cols": 5,
        "ground_truth_count": len(gold), "ground_truth_clicks": gold,
        "all_target_cells": gold, "region_target_cells": gold,
    }


def test_lenient_rescues_verbose_answers_without_touching_strict_pass() -> None:
    rows = [
        _row("a", T1, "COUNT", ["R1,C1", "R2,C2"]),
        _row("b", T3, "CLICK", ["R1,C1"]),
        _row("c", T3, "CLICK", ["R1,C1"]),
        _row("d", T1, "COUNT", ["R1,C1"]),
    ]
    answers = {
        "a": "Looking closely I see two odd cells. COUNT(2)",   # rescued
        "b": "CLICK(R1,C1); DONE",                             # strictly right already
        "c": "The odd cell is CLICK(R5,C5); DONE",              # extracted but wrong
        "d": "I cannot tell.",                                 # nothing to extract
    }
    items = [score_item(row, {"raw_text": answers[row["item_id"]]}) for row in rows]
    before = [(i["pass"], i["format_valid"]) for i in items]
    result = lenient_summary(items, {row["item_id"]: row for row in rows})
    assert [(i["pass"], i["format_valid"]) for i in items] == before
    overall = result["overall"]
    assert overall["pass_rate"] == pytest.approx(1 / 4)
    assert overall["lenient_pass_rate"] == pytest.approx(2 / 4)
    assert (overall["n_extracted"], overall["n_rescued"]) == (2, 1)
    assert result["by_template"][T1]["lenient_pass_rate"] == pytest.approx(1 / 2)
    assert result["by_template"][T3]["lenient_pass_rate"] == pytest.approx(1 / 2)
    assert result["by_subset"][GLYPH]["n"] == 4
    assert overall["n_without_metadata"] == 0
    blind = lenient_summary(items, {})["overall"]  # invalid items cannot be re-scored
    assert (blind["lenient_pass_rate"], blind["n_without_metadata"]) == (1 / 4, 3)


def test_abstention_rates() -> None:
    zero = dict(gt_count=0, gt_clicks=[])
    items = [
        item(GLYPH, "s1", T1, 1, pred_count=0, **zero),                    # right abstention
        item(GLYPH, "s2", T1, 0, pred_count=0, gt_count=2),                # false abstention
        item(GLYPH, "s3", T1, 0, pred_count=1, gt_count=2),
        item(GLYPH, "s1", T3, 1, pred_click_count_raw=0, **zero),
        item(GLYPH, "s2", T3, 0, pred_click_count_raw=0, gt_count=1),      # false abstention
        item(GLYPH, "s3", T3, 1, pred_click_count_raw=1, gt_count=1),
        item(GLYPH, "s1", T5, 0, pred_click_count_raw=0, submit_count=1, **zero),  # not abstaining
        item(GLYPH, "s2", T5, 0, pred_click_count_raw=0, submit_count=0, gt_count=1,
             format_valid=0),                                              # invalid: no
        item(GLYPH, "s1", "T2B_COUNT_LOCAL_MATCHED", 1, pred_count=0, **zero),
    ]
    result = abstention_summary(items)
    t1 = result["by_template"][T1]
    assert (t1["n_zero"], t1["n_nonzero"], t1["pass_zero"], t1["pass_nonzero"]) == (1, 2, 1.0, 0.0)
    assert t1["false_abstention_rate"] == pytest.approx(1 / 2)
    t3 = result["by_template"][T3]
    assert t3["pass_nonzero"] == pytest.approx(1 / 2) and t3["false_abstention_rate"] == 0.5
    t5 = result["by_template"][T5]
    assert t5["abstention_rate_zero"] == 0.0 and t5["false_abstention_rate"] == 0.0
    overall = result["overall"]  # main templates only: the bridge row is left out
    assert (overall["n_zero"], overall["n_nonzero"]) == (3, 5)
    assert overall["pass_zero"] == pytest.approx(2 / 3)
    assert overall["false_abstention_rate"] == pytest.approx(2 / 5)
    assert "T2B_COUNT_LOCAL_MATCHED" in result["by_template"]
    assert is_zero_target(items[0]) and not is_zero_target(items[1])
    assert abstained(items[0]) and not abstained(items[2])


def test_the_issue_cases_score_as_described() -> None:
    # A zero-target CLICK item answered in prose, and a chain followed by prose "done".
    rows = [_row("zero", T3, "CLICK", []), _row("two", T3, "CLICK", ["R1,C2", "R3,C4"])]
    answers = {"zero": "No odd cells here, so I am done.",
               "two": "CLICK(R1,C2); CLICK(R3,C4); DONE. I think that is done"}
    items = [score_item(row, {"raw_text": answers[row["item_id"]]}) for row in rows]
    assert [i["pass"] for i in items] == [0, 0]  # strictly, both are prose
    by_id = {row["item_id"]: row for row in rows}
    result = lenient_summary(items, by_id)
    assert result["overall"]["n_extracted"] == 1  # the chain, not the English "done"
    assert result["overall"]["lenient_pass_rate"] == 0.5
    assert result["overall"]["n_rescued"] == 1
