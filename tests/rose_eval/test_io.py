"""Bad input: one line on stderr naming file and line, exit status 2, no traceback, no out_dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rose_eval.cli.eval import main
from rose_eval.io import InputError, drop_nulls, read_jsonl

TINY = Path(__file__).resolve().parents[2] / "rose_eval" / "examples" / "tiny"
TINY_META = TINY / "metadata_test.jsonl"
TINY_PRED = TINY / "predictions_test.jsonl"


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def release(tmp_path: Path, meta_lines: list[str] | None = None) -> Path:
    root = tmp_path / "release"
    root.mkdir(exist_ok=True)
    text = "\n".join(lines(TINY_META) if meta_lines is None else meta_lines) + "\n"
    (root / "metadata_test.jsonl").write_text(text, encoding="utf-8")
    return root


def predictions(tmp_path: Path, pred_lines: list[str] | None = None, raw: bytes | None = None) -> Path:
    path = tmp_path / "preds.jsonl"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines(TINY_PRED) if pred_lines is None else pred_lines) + "\n",
                        encoding="utf-8")
    return path


def fails(tmp_path: Path, capsys, args: list[str], *needles: str) -> str:
    out = tmp_path / "out"
    assert main([*args, "--out_dir", str(out), "--no_analyses"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-eval: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".out.")], "staging left"
    return err


def test_invalid_json_names_file_and_line(tmp_path, capsys):
    bad = lines(TINY_PRED)
    bad[4] = bad[4][:-1]
    pred = predictions(tmp_path, bad)
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "invalid JSON", f"{pred}:5", "one JSON object per line")


def test_non_object_line(tmp_path, capsys):
    pred = predictions(tmp_path, [*lines(TINY_PRED), "[1, 2]"])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "expected a JSON object, got an array", f"{pred}:71")


def test_missing_item_id_in_predictions(tmp_path, capsys):
    pred = predictions(tmp_path, [*lines(TINY_PRED), '{"raw_text": "COUNT(1)"}'])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "predictions row without item_id", f"{pred}:71")


def test_duplicate_item_id_in_predictions(tmp_path, capsys):
    pred = predictions(tmp_path, [*lines(TINY_PRED), lines(TINY_PRED)[2]])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "duplicate item_id", "first at line 3", f"{pred}:71")


def test_duplicate_item_id_in_metadata(tmp_path, capsys):
    meta = lines(TINY_META)
    root = release(tmp_path, [*meta, meta[0]])
    fails(tmp_path, capsys, ["--dataset_root", str(root), "--predictions", str(TINY_PRED)],
          "duplicate item_id", "metadata_test.jsonl:71")


def test_undecodable_bytes(tmp_path, capsys):
    raw = TINY_PRED.read_bytes().replace(b"tiny-demo-model", b"tiny-\xff-model", 1)
    pred = predictions(tmp_path, raw=raw)
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "undecodable bytes", f"{pred}:1", "UTF-8")


def test_undecodable_bytes_on_a_later_line_name_that_line_and_its_byte(tmp_path, capsys):
    raw = TINY_PRED.read_bytes().splitlines(keepends=True)
    raw[2] = raw[2].replace(b'"', b'\xff', 1)  # the line's second byte, after '{'
    pred = predictions(tmp_path, raw=b"".join(raw))
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "at byte 2 of the line", f"{pred}:3")


def test_no_prediction_matches(tmp_path, capsys):
    pred = predictions(tmp_path, ['{"item_id": "nope", "raw_text": "COUNT(1)"}'])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred),
                             "--allow_partial"], "no prediction item_id matches", "--split")


def test_missing_predictions_without_allow_partial(tmp_path, capsys):
    pred = predictions(tmp_path, lines(TINY_PRED)[:-2])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "2 of 70 test items have no prediction", "--allow_partial")


def test_missing_metadata_file(tmp_path, capsys):
    fails(tmp_path, capsys, ["--dataset_root", str(tmp_path / "nowhere"), "--predictions",
                             str(TINY_PRED)], "missing release metadata", "--dataset_root")
    fails(tmp_path, capsys, ["--metadata", str(tmp_path / "m.jsonl"), "--predictions",
                             str(TINY_PRED)], "metadata file not found")


def test_missing_predictions_file(tmp_path, capsys):
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions",
                             str(tmp_path / "p.jsonl")], "predictions file not found")


def test_no_metadata_source(tmp_path, capsys):
    fails(tmp_path, capsys, ["--predictions", str(TINY_PRED)], "--dataset_root", "--metadata")


@pytest.mark.parametrize("field", ["rows", "region_params"])
def test_row_missing_a_field_scoring_needs(tmp_path, capsys, field):
    meta = [json.loads(line) for line in lines(TINY_META)]
    index = next(i for i, r in enumerate(meta) if r["region_type"] == "RECTANGLE")
    del meta[index][field]
    root = release(tmp_path, [json.dumps(r) for r in meta])
    fails(tmp_path, capsys, ["--dataset_root", str(root), "--predictions", str(TINY_PRED)],
          f"metadata_test.jsonl:{index + 1}: field {field}")


def test_several_model_names(tmp_path, capsys):
    preds = [json.loads(line) for line in lines(TINY_PRED)]
    preds[3]["model"] = "other"
    pred = predictions(tmp_path, [json.dumps(p) for p in preds])
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(pred)],
          "several model names", "--model")


def test_bad_flag_value_is_one_line(tmp_path, capsys):
    fails(tmp_path, capsys, ["--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
                             "--split", "train"], "invalid choice")


def test_answer_level_faults_are_scored_with_lenient_answers(tmp_path, capsys):
    preds = [json.loads(line) for line in lines(TINY_PRED)]
    odd = [None, "", 7, ["COUNT(1)"], {"a": 1}, "x" * 10_000_000]
    for prediction, raw in zip(preds, odd, strict=False):
        prediction["raw_text"] = raw
    del preds[len(odd)]["raw_text"]
    preds.append({"item_id": "UNKNOWN_ID", "raw_text": "COUNT(1)"})
    pred = predictions(tmp_path, [json.dumps(p) for p in preds])
    out = tmp_path / "out"
    assert main(["--dataset_root", str(TINY), "--predictions", str(pred), "--out_dir", str(out),
                 "--no_analyses", "--lenient_answers"]) == 0
    summary = json.loads((out / "evaluation_summary.json").read_text())
    assert summary["coverage"]["num_extra"] == 1
    assert summary["coverage"]["extra_item_ids"] == ["UNKNOWN_ID"]
    rows = {r["item_id"]: r for r in map(json.loads, lines(out / "per_item_eval.jsonl"))}
    for prediction in preds[: len(odd) + 1]:
        assert rows[prediction["item_id"]]["format_valid"] == 0


def test_bom_crlf_and_blank_lines_are_read(tmp_path):
    body = "\r\n\r\n".join(lines(TINY_PRED)).encode("utf-8")
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + body + b"\r\n  \r\n")
    records = read_jsonl(path, role="predictions")
    assert len(records) == 70 and records[1].where == f"{path}:3"


def test_unicode_line_separator_inside_a_string_is_not_a_line_break(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"item_id": "a", "raw_text": "COUNT(1)\u2028"}\n', encoding="utf-8")
    assert read_jsonl(path, role="predictions")[0].row["raw_text"] == "COUNT(1)\u2028"


def test_input_error_is_one_line():
    err = InputError("bad\nthing", "f.jsonl:3", "fix\nit")
    assert err.one_line() == "bad thing (f.jsonl:3); fix it"


def test_drop_nulls_recurses_into_dicts():
    row = {"a": None, "p": {"r1": 1, "c1": None, "x": {"y": None, "z": 2}}, "l": [1, None]}
    assert drop_nulls(row) == {"p": {"r1": 1, "x": {"z": 2}}, "l": [1, None]}


@pytest.mark.parametrize("case", ["invalid_json", "missing_predictions"])
def test_console_script_subprocess(tmp_path, case):
    pred = tmp_path / "p.jsonl"
    if case == "invalid_json":
        pred.write_text('{"item_id": 1,\n', encoding="utf-8")
    else:
        pred.write_text(TINY_PRED.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "rose_eval.cli.eval", "--dataset_root", str(TINY),
                           "--predictions", str(pred), "--out_dir", str(out), "--no_analyses"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("rose-eval: error: ")
    assert not out.exists()


def test_lone_surrogate_answer_is_written_as_a_json_escape(tmp_path, capsys):
    preds = [json.loads(line) for line in lines(TINY_PRED)]
    preds[0]["raw_text"] = "COUNT(1)\ud800"
    pred = predictions(tmp_path, [json.dumps(p) for p in preds])  # ASCII JSON keeps \\ud800
    out = tmp_path / "out"
    assert main(["--dataset_root", str(TINY), "--predictions", str(pred), "--out_dir", str(out),
                 "--no_analyses"]) == 0
    first = (out / "per_item_eval.jsonl").read_bytes().splitlines()[0]
    assert b"\\ud800" in first
    assert json.loads(first)["raw_text"] == "COUNT(1)\ud800"


def test_out_dir_that_is_a_file(tmp_path, capsys):
    (tmp_path / "out").write_text("not a directory")
    assert main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--out_dir",
                 str(tmp_path / "out"), "--no_analyses"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the outputs" in err
    assert (tmp_path / "out").read_text() == "not a directory"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
