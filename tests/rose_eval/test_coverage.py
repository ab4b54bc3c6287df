"""Coverage said out loud: every rose-eval run prints what it scored; --strict exits 1 on a gap.

Issue 22 measured ``--allow_partial`` with 1 of 100 predictions reported as "Avg. 100.0"
over one subset, and half the rows carrying HTTP 429 errors scored 50.0, both silently;
answers cut at max_tokens counted as invalid format with nothing said.
"""

from __future__ import annotations

import json
from pathlib import Path

from rose_eval.cli.eval import main
from rose_eval.provenance import PROVENANCE_FILE

TINY = Path(__file__).resolve().parents[2] / "rose_eval" / "examples" / "tiny"
ORACLE = Path(__file__).resolve().parent / "golden" / "cases" / "oracle" / "predictions.jsonl"


def _preds(tmp_path: Path, change=None, keep=None) -> Path:
    rows = [json.loads(line) for line in ORACLE.read_text(encoding="utf-8").splitlines()]
    rows = rows if keep is None else rows[:keep]
    for index, row in enumerate(rows):
        if change is not None:
            change(index, row)
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, capsys, preds: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    status = main(["--dataset_root", str(TINY), "--predictions", str(preds), "--out_dir",
                   str(out), "--no_analyses", *extra])
    return status, capsys.readouterr().err, out


def test_a_clean_run_says_it_covers_everything(tmp_path, capsys):
    status, err, out = _run(tmp_path, capsys, _preds(tmp_path), "--strict")
    assert status == 0
    assert err == ("rose-eval: scored 70 of 70 items; subsets absent: none; 0 answers carry an "
                   "endpoint error; 0 were cut at max_tokens (finish_reason \"length\")\n")
    assert json.loads((out / PROVENANCE_FILE).read_text())["coverage"] == {
        "scored": 70, "expected": 70, "absent_subsets": [], "endpoint_errors": 0,
        "truncated_at_max_tokens": 0}


def test_one_of_seventy_is_said_and_strict_fails(tmp_path, capsys):
    preds = _preds(tmp_path, keep=1)
    status, err, out = _run(tmp_path, capsys, preds, "--allow_partial")
    assert status == 0
    assert "scored 1 of 70 items; subsets absent: ROSE-EmojiStyle, ROSE-EmojiContent, " \
           "ROSE-PixelEdit, ROSE-PixelContent;" in err
    status, err, out = _run(tmp_path, capsys, preds, "--allow_partial", "--strict")
    assert status == 1 and (out / "per_item_eval.jsonl").is_file()  # written, then failed
    assert err.splitlines()[-1].startswith("rose-eval: error: --strict: 69 items unscored; "
                                           "subsets absent: ROSE-EmojiStyle")


def test_endpoint_errors_are_counted(tmp_path, capsys):
    def rate_limited(index, row):
        if index % 2:
            row.update(raw_text=None, error="HTTP 429: rate limited")

    status, err, _ = _run(tmp_path, capsys, _preds(tmp_path, rate_limited))
    assert status == 0 and "35 answers carry an endpoint error" in err
    status, err, _ = _run(tmp_path, capsys, _preds(tmp_path, rate_limited), "--strict")
    assert status == 1 and "--strict: 35 endpoint errors" in err


def test_answers_cut_at_max_tokens_are_counted(tmp_path, capsys):
    def cut(index, row):
        row["finish_reason"] = "length" if index < 3 else "stop"

    status, err, out = _run(tmp_path, capsys, _preds(tmp_path, cut), "--strict")
    assert status == 1 and "3 were cut at max_tokens" in err
    assert "--strict: 3 answers cut at max_tokens" in err
    summary_bytes = (out / "per_item_eval.jsonl").read_bytes()
    assert b"finish_reason" not in summary_bytes  # the public files are unchanged
