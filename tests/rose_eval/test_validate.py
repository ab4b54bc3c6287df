"""Input rose-eval cannot score honestly is refused: one line ``file:line: field F: ...``, exit 2,
nothing written.

Each probe is a case issue 22 measured on the previous evaluator, which scored it with exit 0
and nothing on stderr (L-Clk and V-Clk 100 % without gold clicks, 0.0 everywhere for a
lower-cased task mode or a ``response`` answer key, ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rose_eval.cli.eval import main
from rose_eval.io import Record
from rose_eval.regions import REGION_KINDS
from rose_eval.validate import (
    REGION_PARAMS,
    RowError,
    check_metadata,
    metadata_fault,
    prediction_fault,
)
from rose_eval.vocab import REGION_TYPES
from tests.reference import v01_rows_path

TINY = Path(__file__).resolve().parents[2] / "rose_eval" / "examples" / "tiny"
Row = dict


def _rows(path: Path) -> list[Row]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list[Row]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def refused(tmp_path: Path, capsys, *, meta: Callable[[list[Row]], object] | None = None,
            preds: Callable[[list[Row]], object] | None = None) -> str:
    """Run rose-eval on the tiny example changed by ``meta``/``preds``; assert the refusal."""
    root = tmp_path / "release"
    root.mkdir()
    meta_rows, pred_rows = _rows(TINY / "metadata_test.jsonl"), _rows(TINY / "predictions_test.jsonl")
    if meta is not None:
        meta(meta_rows)
    if preds is not None:
        preds(pred_rows)
    _write(root / "metadata_test.jsonl", meta_rows)
    pred = _write(tmp_path / "preds.jsonl", pred_rows)
    out = tmp_path / "out"
    status = main(["--dataset_root", str(root), "--predictions", str(pred), "--out_dir", str(out),
                   "--no_analyses"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("rose-eval: error: "), err
    assert "Traceback" not in err and not out.exists()
    return err


def _click_rows_without_gold(rows: list[Row]) -> None:
    for row in rows:
        if row["task_mode"] == "CLICK":
            del row["ground_truth_clicks"], row["region_target_cells"]


def test_click_rows_without_gold_clicks_are_refused(tmp_path, capsys):
    """Probe: no ground_truth_clicks and region_target_cells, DONE everywhere: was 100 %."""
    first = next(i for i, r in enumerate(_rows(TINY / "metadata_test.jsonl"))
                 if r["task_mode"] == "CLICK")

    def done(rows):
        for row in rows:
            row["raw_text"] = "DONE"

    err = refused(tmp_path, capsys, meta=_click_rows_without_gold, preds=done)
    assert f"metadata_test.jsonl:{first + 1}: field ground_truth_clicks: missing" in err


def test_lower_case_task_mode_is_refused(tmp_path, capsys):
    """Probe: task_mode 'count' scored every item 0.0."""
    def lower(rows):
        for row in rows:
            row["task_mode"] = row["task_mode"].lower()

    err = refused(tmp_path, capsys, meta=lower)
    assert "metadata_test.jsonl:1: field task_mode: 'count' is not one of COUNT" in err
    assert "did you mean 'COUNT'" in err


def test_count_rows_without_gold_count_are_refused(tmp_path, capsys):
    """Probe: ground_truth_count dropped turned a 100 % cv run into 44 %."""
    def drop(rows):
        for row in rows:
            row.pop("ground_truth_count")

    err = refused(tmp_path, capsys, meta=drop)
    assert "metadata_test.jsonl:1: field ground_truth_count: missing" in err


@pytest.mark.parametrize(("change", "needle"), [
    (lambda r: r.update(ground_truth_count=r["ground_truth_count"] + 1), "distinct cells but"),
    (lambda r: r.update(region_type="CIRCLE"), "field region_type: 'CIRCLE' is not one of"),
    (lambda r: r.update(task_template="T9"), "field task_template: 'T9'"),
    (lambda r: r.update(rows=0), "field rows: must be a positive integer"),
    (lambda r: r.update(ground_truth_clicks=["R99,C1"]), "off the"),
    (lambda r: r.update(ground_truth_clicks={"R1,C1": 1}), "must be a list of cell labels"),
    (lambda r: r.update(ground_truth_count="3"), "must be an integer >= 0"),
])
def test_inconsistent_gold_is_refused(tmp_path, capsys, change, needle):
    """The gold must agree with itself and with the protocol's vocabulary."""
    def first_click_count(rows):
        change(next(r for r in rows if r["task_mode"] == "CLICK_COUNT"))

    assert needle in refused(tmp_path, capsys, meta=first_click_count)


def test_region_params_the_region_type_needs(tmp_path, capsys):
    def no_r2(rows):
        row = next(r for r in rows if r["region_type"] == "EXCLUSION")
        del row["region_params"]["exclude_params"]["r2"]

    err = refused(tmp_path, capsys, meta=no_r2)
    assert "field region_params.exclude_params.r2: ROW_RANGE needs an integer r2 (missing)" in err


@pytest.mark.parametrize(("change", "needle"), [
    (lambda p: p.update(response=p.pop("raw_text")), "field raw_text: missing"),
    (lambda p: p.update(raw_text={"answer": p["raw_text"]}), "must be a string or null, got dict"),
    (lambda p: p.update(raw_text=3), "must be a string or null, got int"),
    (lambda p: p.update(finish_reason=1), "field finish_reason"),
])
def test_prediction_rows_need_raw_text(tmp_path, capsys, change, needle):
    """Probes: an answer under 'response', or a JSON object as raw_text, scored 0.0 silently."""
    def every(rows):
        for row in rows:
            change(row)

    err = refused(tmp_path, capsys, preds=every)
    assert "preds.jsonl:1: field " in err and needle in err


def test_null_raw_text_is_no_answer_not_an_error(tmp_path, capsys):
    rows = _rows(TINY / "predictions_test.jsonl")
    rows[0]["raw_text"] = None
    out = tmp_path / "out"
    assert main(["--dataset_root", str(TINY), "--predictions",
                 str(_write(tmp_path / "p.jsonl", rows)), "--out_dir", str(out),
                 "--no_analyses"]) == 0


def test_a_parquet_row_is_named_by_its_row(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(TINY / "metadata_test.jsonl")
    rows[4]["task_mode"] = "count"
    (tmp_path / "r" / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "r" / "data" / "test.parquet")
    status = main(["--dataset_root", str(tmp_path / "r"), "--predictions",
                   str(TINY / "predictions_test.jsonl"), "--out_dir", str(tmp_path / "o")])
    assert status == 2
    assert "test.parquet:row 5: field task_mode" in capsys.readouterr().err


def test_every_shipped_row_passes():
    """The tiny example and the real v0.1 rows are valid (the rules refuse nothing real)."""
    for name in ("metadata_test.jsonl", "metadata_dev.jsonl"):
        check_metadata(Record(f"{name}:{i}", r) for i, r in enumerate(_rows(TINY / name), 1))
    real = _rows(v01_rows_path())
    assert len(real) == 1112 and not [r for r in real if metadata_fault(r)]
    assert not [r for r in _rows(TINY / "predictions_test.jsonl") if prediction_fault(r)]


def test_the_rules_name_every_region_kind():
    assert set(REGION_PARAMS) == set(REGION_TYPES) == set(REGION_KINDS)


def test_row_error_is_one_line():
    error = RowError("m.jsonl:3", "rows", "must be\na positive integer", "fix it")
    assert error.one_line() == "m.jsonl:3: field rows: must be a positive integer; fix it"
