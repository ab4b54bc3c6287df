"""Per-item scoring, metric by metric, and the region kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_eval.regions import region_cells
from rose_eval.score import count_soft, item_truth, score_item
from tests.reference import v01_rows, v01_rows_path

REAL_ROWS = v01_rows_path()
GOLDEN_PER_ITEM = (Path(__file__).resolve().parent / "golden" / "cases" / "tiny_example"
                   / "expected" / "per_item_eval.jsonl")

# A 6 x 6 grid with targets at (1,1), (2,2), (5,5); the region is rows 1-2.
TARGETS = ["R1,C1", "R2,C2", "R5,C5"]


def row(mode: str = "CLICK", template: str = "T3_CLICK_LOCAL_NUMERIC",
        region_type: str = "ROW_RANGE", params: dict[str, Any] | None = None,
        gold: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    gold = ["R1,C1", "R2,C2"] if gold is None else gold
    base = {
        "item_id": "X1", "scene_id": "S1", "rose_subset": "ROSE-PixelEdit", "split": "test",
        "task_template": template, "task_mode": mode, "region_type": region_type,
        "region_params": {"r1": 1, "r2": 2} if params is None else params,
        "rows": 6, "cols": 6, "ground_truth_count": len(gold), "ground_truth_clicks": gold,
        "all_target_cells": TARGETS, "region_target_cells": gold,
    }
    base.update(extra)
    return base


def score(r: dict[str, Any], text: Any, **prediction: Any) -> dict[str, Any]:
    return score_item(r, {"raw_text": text, **prediction}, near_miss_l1=1)


# ---- record shape ---------------------------------------------------------------------

def test_record_has_the_public_fields_in_the_public_order():
    public_keys = list(json.loads(GOLDEN_PER_ITEM.read_text().splitlines()[0]))
    assert list(score(row(), "DONE")) == public_keys


def test_missing_prediction_scores_as_empty_answer():
    rec = score_item(row(), None)
    assert rec["pass"] == 0 and rec["parse_error"] == "empty" and rec["model"] is None


# ---- PASS -----------------------------------------------------------------------------

def test_click_pass_ignores_order_and_spacing():
    assert score(row(), "click(r2 , c2); CLICK(R1,C1); DONE")["pass"] == 1


@pytest.mark.parametrize("text", [
    "CLICK(R1,C1); DONE",  # missing a target
    "CLICK(R1,C1); CLICK(R2,C2); CLICK(R1,C1); DONE",  # duplicate
    "CLICK(R1,C1); CLICK(R2,C2); CLICK(R7,C1); DONE",  # out of grid
    "CLICK(R1,C1); CLICK(R2,C2)",  # missing DONE
    "CLICK(R1,C1); CLICK(R2,C2); oops; DONE",  # bad token
])
def test_click_pass_fails(text):
    assert score(row(), text)["pass"] == 0


def test_count_pass_and_soft():
    r = row("COUNT", "T2_COUNT_LOCAL_NUMERIC")
    assert score(r, "COUNT(2)")["pass"] == 1
    rec = score(r, "COUNT(5)")
    assert (rec["pass"], rec["count_mae"], rec["count_bias"], rec["count_soft"],
            rec["unified_soft"]) == (0, 3, 3, 0.25, 0.25)
    rec = score(r, "COUNT(1)")
    assert rec["count_bias"] == -1 and rec["count_soft"] == 0.5
    rec = score(r, "about 2")
    assert rec["pred_count"] is None and rec["count_exact"] == 0 and rec["count_soft"] == 0.0


def test_click_count_pass_needs_submit_equal_to_truth_and_to_clicks():
    r = row("CLICK_COUNT", "T5_CLICK_COUNT_EXCLUSION", "EXCLUSION",
            {"exclude_type": "ROW_RANGE", "exclude_params": {"r1": 3, "r2": 6}})
    assert score(r, "CLICK(R1,C1); CLICK(R2,C2); SUBMIT(2)")["pass"] == 1
    rec = score(r, "CLICK(R1,C1); CLICK(R2,C2); SUBMIT(3)")
    assert (rec["pass"], rec["submit_exact"], rec["click_submit_consistency"]) == (0, 0, 0)
    rec = score(r, "CLICK(R1,C1); SUBMIT(2)")
    assert (rec["pass"], rec["submit_exact"], rec["click_submit_consistency"]) == (0, 1, 0)
    # unified soft = mean(strict F1, count soft, consistency)
    assert rec["unified_soft"] == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)


def test_empty_truth_done_and_submit_zero_pass():
    assert score(row(gold=[]), "DONE")["pass"] == 1
    r = row("CLICK_COUNT", "T5_CLICK_COUNT_EXCLUSION", "EXCLUSION",
            {"exclude_type": "ROW_RANGE", "exclude_params": {"r1": 1, "r2": 6}}, gold=[])
    assert score(r, "SUBMIT(0)")["pass"] == 1


# ---- click metrics --------------------------------------------------------------------

def test_precision_recall_f1_iou_and_strict_versions():
    rec = score(row(), "CLICK(R1,C1); CLICK(R3,C3); DONE")
    assert (rec["click_precision"], rec["click_recall"], rec["click_f1"]) == (0.5, 0.5, 0.5)
    assert rec["click_iou"] == pytest.approx(1 / 3)
    assert rec["click_f1_strict"] == 0.5 and rec["unified_soft"] == 0.5
    dirty = score(row(), "CLICK(R1,C1); CLICK(R1,C1); DONE")  # duplicate -> strict zero
    assert dirty["click_f1"] == pytest.approx(2 / 3) and dirty["click_f1_strict"] == 0.0
    assert dirty["duplicate_click_count"] == 1 and dirty["click_exact_set"] == 0


def test_out_of_grid_clicks_are_split_off():
    rec = score(row(), "CLICK(R1,C1); CLICK(R2,C2); CLICK(R0,C3); CLICK(R9,C9); DONE")
    assert rec["pred_clicks_invalid"] == ["R0,C3", "R9,C9"]
    assert rec["invalid_coordinate_count"] == 2 and rec["click_exact_set"] == 1
    assert rec["click_exact_set_strict"] == 0 and rec["pass"] == 0


def test_region_ok_violations_and_distractor_hits():
    rec = score(row(), "CLICK(R1,C1); CLICK(R2,C2); CLICK(R5,C5); DONE")
    assert rec["region_violation_count"] == 1 and rec["region_ok"] == 0
    assert rec["outside_distractor_hit_count"] == 1 and rec["false_positive_count"] == 1
    assert score(row(), "CLICK(R1,C3); DONE")["region_ok"] == 1


def test_over_under_missed_and_near_miss():
    rec = score(row(), "CLICK(R1,C2); DONE")  # (1,2) is L1 1 from (1,1), 1 from (2,2)
    assert rec["missed_target_count"] == 2 and rec["under_click_count"] == 1
    assert rec["near_miss_count"] == 2 and rec["near_miss_rate"] == 1.0
    far = score_item(row(), {"raw_text": "CLICK(R1,C4); DONE"}, near_miss_l1=1)
    assert far["near_miss_count"] == 0
    wide = score_item(row(), {"raw_text": "CLICK(R1,C4); DONE"}, near_miss_l1=3)
    assert wide["near_miss_count"] == 2
    over = score(row(), "CLICK(R1,C1); CLICK(R2,C2); CLICK(R1,C3); DONE")
    assert over["over_click_count"] == 1 and over["under_click_count"] == 0


def test_not_applicable_fields_are_null():
    rec = score(row("COUNT", "T2_COUNT_LOCAL_NUMERIC"), "COUNT(2)")
    for key in ("click_precision", "click_f1_strict", "region_ok", "near_miss_count",
                "submit_exact", "invalid_coordinate_count"):
        assert rec[key] is None, key
    rec = score(row(), "DONE")
    for key in ("count_exact", "count_soft", "pred_count", "submit_exact"):
        assert rec[key] is None, key


# ---- global default, exclusion, api error ----------------------------------------------

def test_global_default_error_by_mode_and_only_for_t2_to_t5():
    assert score(row(), "CLICK(R1,C1); CLICK(R2,C2); CLICK(R5,C5); DONE")["global_default_error"] == 1
    count_row = row("COUNT", "T2_COUNT_LOCAL_NUMERIC")
    assert score(count_row, "COUNT(3)")["global_default_error"] == 1
    assert score(count_row, "COUNT(2)")["global_default_error"] == 0
    bridge = row("COUNT", "T2B_COUNT_LOCAL_MATCHED")
    assert score(bridge, "COUNT(3)")["global_default_error"] == 0
    assert score(bridge, "COUNT(2)")["pass"] == 1  # bridges score by task_mode


def test_t5_alias_is_read_as_the_evaluator_name():
    r = row("CLICK_COUNT", "T5_CLICK_EXCLUSION_SUBMIT", "EXCLUSION",
            {"exclude_type": "ROW_RANGE", "exclude_params": {"r1": 3, "r2": 6}})
    rec = score(r, "CLICK(R1,C1); CLICK(R2,C2); CLICK(R5,C5); SUBMIT(3)")
    assert rec["task_template"] == "T5_CLICK_COUNT_EXCLUSION"
    assert rec["global_default_error"] == 1 and rec["exclusion_failure"] == 1


def test_exclusion_failure_for_counts():
    r = row("COUNT", "T2_COUNT_LOCAL_NUMERIC", "EXCLUSION",
            {"exclude_type": "ROW_RANGE", "exclude_params": {"r1": 3, "r2": 6}})
    assert score(r, "COUNT(3)")["exclusion_failure"] == 1
    assert score(r, "COUNT(2)")["exclusion_failure"] == 0
    assert score(row(), "COUNT(3)")["exclusion_failure"] == 0  # not an EXCLUSION row


@pytest.mark.parametrize("error,flag", [(None, 0), ("", 0), ("None", 0), ("timeout", 1),
                                        (0, 1), (False, 1), ({"code": 500}, 1), ([1], 1)])
def test_api_error_flag(error, flag):
    assert score(row(), "DONE", error=error)["api_error"] == flag


def test_count_soft_of_an_enormous_error_is_zero():
    assert count_soft(10**400) == 0.0
    rec = score(row("COUNT", "T2_COUNT_LOCAL_NUMERIC"), "COUNT(" + "9" * 400 + ")")
    assert rec["count_soft"] == 0.0 and rec["count_mae"] == 10**400 - 1 - 2


# ---- regions --------------------------------------------------------------------------

def cells(region_type: str, params: dict[str, Any], rows: int = 4, cols: int = 5) -> set:
    return set(region_cells({"rows": rows, "cols": cols, "region_type": region_type,
                             "region_params": params}))


def test_region_kinds():
    assert len(cells("GLOBAL", {})) == 20
    assert cells("ROW_RANGE", {"r1": 2, "r2": 2}) == {(2, c) for c in range(1, 6)}
    assert cells("COL_RANGE", {"c1": 4, "c2": 5}) == {(r, c) for r in range(1, 5) for c in (4, 5)}
    rect = {(r, c) for r in (1, 2) for c in (2, 3)}
    assert cells("RECTANGLE", {"r1": 1, "r2": 2, "c1": 2, "c2": 3}) == rect
    assert cells("VISUAL_REGION", {"r1": 1, "r2": 2, "c1": 2, "c2": 3}) == rect
    excl = cells("EXCLUSION", {"exclude_type": "RECTANGLE",
                               "exclude_params": {"r1": 1, "r2": 2, "c1": 2, "c2": 3}})
    assert excl == cells("GLOBAL", {}) - rect


def test_ranges_are_not_clipped_but_exclusion_is():
    assert len(cells("ROW_RANGE", {"r1": 0, "r2": 5})) == 30  # as v0.1's evaluator counts
    assert cells("EXCLUSION", {"exclude_type": "ROW_RANGE",
                               "exclude_params": {"r1": 0, "r2": 5}}) == set()


@pytest.mark.parametrize("region_type,params,error", [
    ("CIRCLE", {}, ValueError), ("ROW_RANGE", {"r1": 1}, KeyError),
    ("EXCLUSION", {"exclude_type": "ROW_RANGE"}, KeyError),
    ("RECTANGLE", {"r1": 1, "r2": 10**6, "c1": 1, "c2": 10**6}, ValueError),
])
def test_bad_regions_raise(region_type, params, error):
    with pytest.raises(error):
        cells(region_type, params)


def test_target_fallbacks():
    r = row()
    del r["all_target_cells"]
    r["target_cells"] = [[5, 5], [1, 1], [2, 2]]
    assert item_truth(r).all_targets == {(1, 1), (2, 2), (5, 5)}
    r["ground_truth_clicks"] = "r1, c1 and R2,C2"
    assert item_truth(r).gt_clicks == {(1, 1), (2, 2)}


# ---- the 1,112 real v0.1 rows ---------------------------------------------------------

@pytest.fixture(scope="module")
def real_rows() -> list[dict[str, Any]]:
    return v01_rows()


def test_every_real_row_loads_scores_and_its_oracle_passes(real_rows):
    assert len(real_rows) == 1112
    for r in real_rows:
        rec = score_item(r, {"raw_text": r["answer"]}, near_miss_l1=1)
        assert rec["pass"] == 1 and rec["format_valid"] == 1 and rec["unified_soft"] == 1.0
        assert rec["region_cell_count"] == r["region_cell_count"]
        assert rec["global_default_error"] == 0  # T2B bridges are not keyed


def test_real_rows_perturbed_answers(real_rows):
    for r in real_rows:
        n = r["ground_truth_count"]
        off = score_item(r, {"raw_text": f"COUNT({n + 2})"})
        assert (off["pass"], off["count_mae"], off["count_soft"]) == (0, 2, 1 / 3)
        prose = score_item(r, {"raw_text": f"I count {r['answer']}"})
        assert (prose["pass"], prose["format_valid"], prose["unified_soft"]) == (0, 0, 0.0)
        whole = score_item(r, {"raw_text": f"COUNT({r['global_target_count']})"})
        assert whole["pass"] == int(r["global_target_count"] == n)


# ---- property: the canonical gold answer always passes --------------------------------

@st.composite
def scored_rows(draw):
    rows, cols = draw(st.integers(1, 18)), draw(st.integers(1, 18))
    grid = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)]
    targets = draw(st.lists(st.sampled_from(grid), unique=True, max_size=8))
    r1 = draw(st.integers(1, rows))
    r2 = draw(st.integers(r1, rows))
    c1 = draw(st.integers(1, cols))
    c2 = draw(st.integers(c1, cols))
    kind = draw(st.sampled_from(["GLOBAL", "ROW_RANGE", "COL_RANGE", "RECTANGLE",
                                 "VISUAL_REGION", "EXCLUSION"]))
    rect = {"r1": r1, "r2": r2, "c1": c1, "c2": c2}
    params = {"GLOBAL": {}, "ROW_RANGE": {"r1": r1, "r2": r2}, "COL_RANGE": {"c1": c1, "c2": c2},
              "RECTANGLE": rect, "VISUAL_REGION": rect,
              "EXCLUSION": {"exclude_type": "RECTANGLE", "exclude_params": rect}}[kind]
    mode = draw(st.sampled_from(["COUNT", "CLICK", "CLICK_COUNT"]))
    region = region_cells({"rows": rows, "cols": cols, "region_type": kind,
                           "region_params": params})
    gold = sorted(set(targets) & region)
    labels = [f"R{r},C{c}" for r, c in gold]
    if mode == "COUNT":
        answer = f"COUNT({len(gold)})"
    else:
        end = "DONE" if mode == "CLICK" else f"SUBMIT({len(gold)})"
        answer = "; ".join([*(f"CLICK({label})" for label in labels), end])
    row = {"item_id": "P", "task_template": "T3_CLICK_LOCAL_NUMERIC", "task_mode": mode,
           "region_type": kind, "region_params": params, "rows": rows, "cols": cols,
           "ground_truth_count": len(gold), "ground_truth_clicks": labels,
           "all_target_cells": [f"R{r},C{c}" for r, c in sorted(targets)],
           "region_target_cells": labels, "answer": answer}
    return row


@settings(max_examples=200, deadline=None)
@given(scored_rows())
def test_canonical_gold_answer_always_passes(row):
    rec = score_item(row, {"raw_text": row["answer"]})
    assert rec["pass"] == 1 and rec["format_valid"] == 1 and rec["unified_soft"] == 1.0
    assert rec["global_default_error"] == 0 and rec["exclusion_failure"] == 0
    if rec["click_applicable"]:
        assert rec["region_ok"] == 1 and rec["click_f1_strict"] == 1.0
