"""run_analyses end to end: the bundled tiny example and the real v0.1 bridge rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose_eval.aggregate import paper_table1, paper_table2, scene_conditioned_action
from rose_eval.analyses import ANALYSES, run_analyses
from rose_eval.score import score_item
from tests.reference import v01_rows

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "rose_eval" / "examples" / "tiny"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def tiny() -> tuple[list[dict], list[dict]]:
    metadata = [r for r in _jsonl(TINY / "metadata_test.jsonl") if r.get("split") == "test"]
    predictions = {p["item_id"]: p for p in _jsonl(TINY / "predictions_test.jsonl")}
    items = [score_item(row, predictions.get(row["item_id"])) for row in metadata]
    return items, metadata


def test_every_analysis_runs_and_the_result_is_strict_json(tiny) -> None:
    items, metadata = tiny
    result = run_analyses(items, metadata, seed=1, n_boot=200)
    assert list(result) == list(ANALYSES)
    assert result["global_click_bridge"] is not None
    assert result["matched_local_bridge"] is not None
    json.dumps(result, allow_nan=False)
    assert run_analyses(items, metadata, seed=1, n_boot=200) == result


def test_bootstrap_points_equal_the_evaluator_tables(tiny) -> None:
    items, _ = tiny
    boot = run_analyses(items, [], n_boot=20)["bootstrap"]
    table1, table2 = paper_table1(items), paper_table2(items)
    for subset, record in table1["by_subset"].items():
        for key in ("PASS", "SOFT", "VALID"):
            assert boot["table1"][subset][key]["point"] == pytest.approx(record[key])
    for key in ("Avg. PASS", "Avg. SOFT", "VALID"):
        assert boot["table1"][key]["point"] == pytest.approx(table1[key])
    for key, value in table2.items():
        assert boot["table2"][key]["point"] == pytest.approx(value)


def test_retention_equals_the_evaluator_scene_conditioned_action(tiny) -> None:
    items, _ = tiny
    gap = run_analyses(items, [], n_boot=1)["perception_action_gap"]
    public = scene_conditioned_action(items)["macro"]
    assert gap["retention_given_t1_pass"]["macro"] == pytest.approx(public)


def test_real_matched_bridge_rows_with_oracle_answers() -> None:
    bridge_rows = v01_rows()
    # Each T2B row carries its T3 source's region and targets: rebuild the T3 rows.
    t3_rows = [
        {**row, "item_id": row["source_click_item_id"], "task_template": "T3_CLICK_LOCAL_NUMERIC",
         "task_mode": "CLICK"}
        for row in bridge_rows
    ]
    items = []
    for row in bridge_rows + t3_rows:
        gold = row["ground_truth_clicks"]
        answer = (row["ground_truth_formal_answer"] if row["task_mode"] == "COUNT"
                  else "".join(f"CLICK({c}); " for c in gold) + "DONE")
        items.append(score_item(row, {"raw_text": answer}))
    assert all(i["pass"] == 1 for i in items)
    result = run_analyses(items, bridge_rows, n_boot=50)["matched_local_bridge"]
    table = result["paper_table"]
    assert (table["mL-Cnt"], table["L-Clk"], table["L-Clk | mL-Cnt correct"]) == (1.0, 1.0, 1.0)
    assert table["Fail"] == 0.0 and table["Card-Exact"] == 1.0
    assert result["n_target_count_mismatch"] == 0
    assert result["micro_pooled"]["n_main_lclk_matched"] == len(bridge_rows)
    assert set(result["by_region_case_effective"]) == {"zero", "partial", "all"}
    assert list(result["by_region_case"])[:3] == ["zero", "partial", "all"]
    assert sum(c["macro_equal_subset"]["n"] for c in result["by_region_case"].values()) == 1112
