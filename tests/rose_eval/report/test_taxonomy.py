"""Error taxonomy: each category on answers scored by the real scorer; a partition of failures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rose_eval.report.taxonomy import CATEGORIES, classify, taxonomy_by_template
from rose_eval.score import score_item

# A 6 x 6 grid with odd cells at R1C1, R2C5 and R5,C2.
TARGETS = ["R1,C1", "R2,C5", "R5,C2"]


def _row(template: str, mode: str, region_type: str, params: dict[str, Any],
         gold: list[str]) -> dict[str, Any]:
    return {
        "item_id": f"{template}:{region_type}:{json.dumps(params, sort_keys=True)}",
        "scene_id": "S1", "rose_subset": "ROSE-ChineseGlyph", "task_template": template,
        "task_mode": mode, "region_type": region_type, "region_params": params, "rows": 6,
        "cols": 6, "ground_truth_count": len(gold), "ground_truth_clicks": gold,
        "all_target_cells": TARGETS, "region_target_cells": gold,
    }


T1 = _row("T1_COUNT_GLOBAL", "COUNT", "GLOBAL", {}, TARGETS)
T2 = _row("T2_COUNT_LOCAL_NUMERIC", "COUNT", "ROW_RANGE", {"r1": 1, "r2": 2}, ["R1,C1", "R2,C5"])
T2_ZERO = _row("T2_COUNT_LOCAL_NUMERIC", "COUNT", "ROW_RANGE", {"r1": 3, "r2": 4}, [])
T3 = _row("T3_CLICK_LOCAL_NUMERIC", "CLICK", "ROW_RANGE", {"r1": 1, "r2": 2}, ["R1,C1", "R2,C5"])
T4_ZERO = _row("T4_CLICK_VISUAL_REGION", "CLICK", "VISUAL_REGION",
               {"r1": 3, "r2": 4, "c1": 3, "c2": 4}, [])
T5 = _row("T5_CLICK_COUNT_EXCLUSION", "CLICK_COUNT", "EXCLUSION",
          {"exclude_type": "COL_RANGE", "exclude_params": {"c1": 5, "c2": 6}}, ["R1,C1", "R5,C2"])


def _scored(row: dict[str, Any], raw: str | None, error: str | None = None) -> dict[str, Any]:
    return score_item(row, {"raw_text": raw, "error": error})


CASES = [
    ("no_answer", T3, None, "HTTP 500"),
    ("no_answer", T1, "   ", None),
    ("invalid_format", T1, "The answer is COUNT(3).", None),
    ("invalid_format", T3, "COUNT(2)", None),
    ("off_grid_or_repeat", T3, "CLICK(R1,C1); CLICK(R2,C5); CLICK(R9,C1); DONE", None),
    ("off_grid_or_repeat", T3, "CLICK(R1,C1); CLICK(R1,C1); CLICK(R2,C5); DONE", None),
    ("outside_target", T3, "CLICK(R1,C1); CLICK(R2,C5); CLICK(R5,C2); DONE", None),
    ("outside_target", T5, "CLICK(R1,C1); CLICK(R2,C5); CLICK(R5,C2); SUBMIT(3)", None),
    ("region_violation", T3, "CLICK(R1,C1); CLICK(R2,C5); CLICK(R4,C4); DONE", None),
    ("false_abstention", T3, "DONE", None),
    ("false_abstention", T1, "COUNT(0)", None),
    ("false_abstention", T5, "SUBMIT(0)", None),
    ("no_abstention", T2_ZERO, "COUNT(1)", None),
    ("no_abstention", T4_ZERO, "CLICK(R3,C3); DONE", None),
    ("whole_grid", T2, "COUNT(3)", None),
    ("count_click_mismatch", T5, "CLICK(R1,C1); CLICK(R5,C2); SUBMIT(1)", None),
    ("whole_grid", T5, "CLICK(R1,C1); CLICK(R5,C2); SUBMIT(3)", None),
    ("near_miss", T3, "CLICK(R1,C2); CLICK(R2,C5); DONE", None),
    ("over", T1, "COUNT(5)", None),
    ("over", T3, "CLICK(R1,C1); CLICK(R2,C5); CLICK(R1,C4); DONE", None),
    ("under", T1, "COUNT(1)", None),
    ("under", T3, "CLICK(R1,C1); DONE", None),
    ("wrong_cells", T3, "CLICK(R1,C1); CLICK(R2,C3); DONE", None),
]


@pytest.mark.parametrize(("expected", "row", "raw", "error"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_failure_lands_in_its_category(expected, row, raw, error) -> None:
    item = _scored(row, raw, error)
    assert item["pass"] == 0
    assert classify(item) == expected


def test_every_category_but_the_catch_all_is_exercised_and_defined() -> None:
    assert {c[0] for c in CASES} == set(CATEGORIES.names()) - {"other"}
    for name in CATEGORIES.names():
        category = CATEGORIES.get(name)
        assert category.label and len(category.definition) > 30 and category.color.startswith("#")


def test_passed_items_have_no_category_and_unknown_modes_are_other() -> None:
    assert classify(_scored(T3, "CLICK(R1,C1); CLICK(R2,C5); DONE")) is None
    assert classify(_scored(T4_ZERO, "DONE")) is None  # abstaining right is not an error
    odd = {**_scored(T1, "COUNT(3)"), "pass": 0, "task_mode": "POINT", "count_applicable": 0,
           "pred_count": None}
    assert classify(odd) == "other"


def test_tally_partitions_the_failures_of_each_template() -> None:
    items = [_scored(row, raw, error) for _, row, raw, error in CASES]
    items += [_scored(T1, "COUNT(3)"), _scored(T3, "CLICK(R1,C1); CLICK(R2,C5); DONE")]
    tallies = taxonomy_by_template(items)
    assert [t.template for t in tallies] == ["T1_COUNT_GLOBAL", "T2_COUNT_LOCAL_NUMERIC",
                                             "T3_CLICK_LOCAL_NUMERIC", "T4_CLICK_VISUAL_REGION",
                                             "T5_CLICK_COUNT_EXCLUSION"]
    for tally in tallies:
        rows = [i for i in items if i["task_template"] == tally.template]
        assert tally.n == len(rows)
        assert tally.failed == sum(1 for i in rows if i["pass"] != 1) == sum(tally.counts.values())
    t3 = next(t for t in tallies if t.template == "T3_CLICK_LOCAL_NUMERIC")
    assert t3.counts == {"no_answer": 1, "invalid_format": 1, "off_grid_or_repeat": 2,
                         "outside_target": 1, "region_violation": 1, "false_abstention": 1,
                         "near_miss": 1, "over": 1, "under": 1, "wrong_cells": 1}
