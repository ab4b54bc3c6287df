"""The chance floor: fitted on dev, scored on the run's items, beside every rose-eval run."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from rose_eval.analyses.chance_floor import chance_floor, random_expected_pass
from rose_eval.cli.eval import main as eval_main
from rose_eval.score import score_item
from rose_eval.vocab import TEMPLATE_SHORT

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "rose_eval" / "examples" / "tiny"
PUBLIC_FILES = ("per_item_eval.jsonl", "error_cases.jsonl", "summary_by_subset.csv", "summary_by_template.csv",
                "coverage_by_subset_template.csv", "table1_row.txt", "table2_row.txt")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def release(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    shutil.copytree(TINY, root)
    return root


def _scored(root: Path) -> tuple[list[dict], dict[str, dict]]:
    rows = [r for r in _jsonl(root / "metadata_test.jsonl") if r["split"] == "test"]
    predictions = {p["item_id"]: p for p in _jsonl(root / "predictions_test.jsonl")}
    return [score_item(r, predictions.get(r["item_id"])) for r in rows], {r["item_id"]: r for r in rows}


def test_floor_follows_dev_answers(release):
    """Every dev T1 answer set to COUNT(2): the floor's G-Cnt is the share of test T1 gold COUNT(2),
    per subset; with dev set to COUNT(3) it follows (a floor fitted on test would not move)."""
    dev = _jsonl(release / "metadata_dev.jsonl")
    items, metadata = _scored(release)
    test_t1 = [r for r in metadata.values() if r["task_template"] == "T1_COUNT_GLOBAL"]
    for answer in ("COUNT(2)", "COUNT(3)"):
        _write(release / "metadata_dev.jsonl",
               [{**r, "answer": answer} if r["task_template"] == "T1_COUNT_GLOBAL" else r for r in dev])
        floor = chance_floor(items, metadata, release, "test")
        assert floor["available"] and floor["fitted_on"] == "dev" and floor["dev_rows"] == len(dev)
        for subset, by_template in floor["floor"]["by_subset"].items():
            gold = [r["answer"] for r in test_t1 if r["rose_subset"] == subset]
            assert by_template["G-Cnt"] == Counter(gold)[answer] / len(gold)


def test_floor_gap_and_chance_levels(release):
    items, metadata = _scored(release)
    floor = chance_floor(items, metadata, release, "test")
    table = floor["floor"]["by_template"]
    gap = floor["floor_gap"]
    assert gap["Counting Avg."] == pytest.approx((table["G-Cnt"] + table["L-Cnt"]) / 2)
    assert gap["Action Avg."] == pytest.approx((table["L-Clk"] + table["V-Clk"] + table["Excl. C+S"]) / 3)
    assert gap["Delta"] == pytest.approx(gap["Counting Avg."] - gap["Action Avg."])
    for subset, by_template in floor["uniform"]["by_subset"].items():
        t1 = [r for r in items if r["rose_subset"] == subset and r["task_template"] == "T1_COUNT_GLOBAL"]
        assert by_template[TEMPLATE_SHORT["T1_COUNT_GLOBAL"]] == 1 / (max(r["gt_count"] for r in t1) + 1)
    assert floor["random"]["by_template"]["G-Cnt"] == pytest.approx(1 / 9)


def test_random_expectation_is_exact():
    """Against a count of the random solver's outcomes over its whole draw space (3x1 grid)."""
    record = {"task_mode": "CLICK", "rows": 3, "cols": 1, "gt_count": 1, "gt_clicks": ["R2,C1"]}
    # k uniform in 0..3, then a uniform k-subset of 3 cells: P = 1/4 * 1/3
    assert random_expected_pass(record) == pytest.approx(1 / 12)
    assert random_expected_pass({**record, "gt_count": 0, "gt_clicks": []}) == pytest.approx(1 / 4)
    assert random_expected_pass({"task_mode": "COUNT", "gt_count": 9}) == 0.0


def test_floor_is_refused_where_it_would_be_fitted_on_the_scored_items(release):
    items, metadata = _scored(release)
    assert chance_floor(items, metadata, release, "dev")["available"] is False
    assert chance_floor(items, metadata, None, "test")["available"] is False
    dev = _jsonl(release / "metadata_dev.jsonl")
    _write(release / "metadata_dev.jsonl", dev + list(metadata.values())[:3])  # scored rows in dev
    leaked = chance_floor(items, metadata, release, "test")
    assert leaked["available"] is False and "fitted on" in leaked["reason"]
    (release / "metadata_dev.jsonl").unlink()
    assert "no dev split" in chance_floor(items, metadata, release, "test")["reason"]


def test_rose_eval_shows_the_floor_and_keeps_the_public_files(release, tmp_path, capsys):
    common = ["--dataset_root", str(release), "--predictions", str(release / "predictions_test.jsonl"),
              "--n_boot", "50"]
    assert eval_main([*common, "--out_dir", str(tmp_path / "with")]) == 0
    summary = json.loads((tmp_path / "with" / "evaluation_summary.json").read_text())
    assert summary["analyses"]["chance_floor"]["available"] is True
    floor_avg = summary["analyses"]["chance_floor"]["floor"]["by_template"]["Avg. PASS"]
    printed = capsys.readouterr().out
    assert "Chance floor (a blind guess" in printed and f"Avg. PASS {100 * floor_avg:.1f}" in printed
    (release / "metadata_dev.jsonl").unlink()
    assert eval_main([*common, "--out_dir", str(tmp_path / "without")]) == 0
    summary_b = json.loads((tmp_path / "without" / "evaluation_summary.json").read_text())
    assert summary_b["analyses"]["chance_floor"]["available"] is False
    for name in PUBLIC_FILES:  # the floor only adds to the analyses key
        assert (tmp_path / "with" / name).read_bytes() == (tmp_path / "without" / name).read_bytes()
    summary.pop("analyses")
    summary_b.pop("analyses")
    assert summary == summary_b
