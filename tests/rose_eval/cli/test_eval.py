"""rose-eval end to end: outputs, determinism, analyses key, alias, output directory handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose_eval.cli.eval import main
from rose_eval.report.tables import PARITY_FILES, SUMMARY, TABLE1, TABLE2
from tests.reference import v01_rows, v01_rows_path

TINY = Path(__file__).resolve().parents[3] / "rose_eval" / "examples" / "tiny"
TINY_PRED = TINY / "predictions_test.jsonl"
CASES = Path(__file__).resolve().parents[1] / "golden" / "cases"
REAL_ROWS = v01_rows_path()


def run(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    assert main([*args, "--out_dir", str(out)]) == 0
    return out


def test_tiny_example_with_analyses(tmp_path, capsys):
    out = run(tmp_path, "a", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
              "--n_boot", "100")
    printed = capsys.readouterr().out
    assert set(PARITY_FILES) <= {p.name for p in out.iterdir()}
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert list(summary)[:7] == ["evaluator", "model", "display_name", "split",
                                 "dataset_repo_id", "metadata_jsonl", "predictions_jsonl"]
    assert summary["model"] == "tiny-demo-model" and summary["coverage"]["num_evaluated"] == 70
    if "analyses" in summary:  # present once rose_eval.analyses.run_analyses exists
        assert list(summary)[-1] == "analyses"
    assert "tiny-demo-model" in printed


def test_runs_are_byte_identical(tmp_path, capsys):
    args = ["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--n_boot", "100",
            "--seed", "3"]
    first, second = run(tmp_path, "a", *args), run(tmp_path, "b", *args)
    for name in sorted(p.name for p in first.iterdir()):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_existing_out_dir_keeps_other_files(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / TABLE1).write_text("stale")
    run(tmp_path, "out", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
        "--no_analyses")
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / TABLE1).read_text().startswith("tiny-demo-model\n& ")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_flags_reach_the_outputs(tmp_path, capsys):
    out = run(tmp_path, "o", "--metadata", str(TINY / "metadata_test.jsonl"), "--predictions",
              str(TINY_PRED), "--model", "gpt-5.5", "--digits", "3", "--repo_id", "me/rose",
              "--no_analyses")
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert (summary["model"], summary["display_name"]) == ("gpt-5.5", "GPT-5.5")
    assert summary["dataset_repo_id"] == "me/rose"
    row = (out / TABLE2).read_text(encoding="utf-8")
    assert row.startswith("GPT-5.5\n& ") and row.endswith(" \\\\\n")
    assert all(len(cell.strip().split(".")[1]) == 3 for cell in row.split("\n")[1][2:-3].split("&"))


def test_t5_alias_counts_in_tables(tmp_path, capsys):
    rows = [json.loads(line) for line in (TINY / "metadata_test.jsonl").read_text().splitlines()]
    for row in rows:
        if row["task_template"] == "T5_CLICK_COUNT_EXCLUSION":
            row["task_template"] = "T5_CLICK_EXCLUSION_SUBMIT"
    meta = tmp_path / "aliased.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    aliased = run(tmp_path, "aliased", "--metadata", str(meta), "--predictions", str(TINY_PRED),
                  "--no_analyses")
    plain = run(tmp_path, "plain", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
                "--no_analyses")
    for name in (TABLE1, TABLE2, "summary_by_template.csv", "coverage_by_subset_template.csv",
                 "per_item_eval.jsonl"):
        assert (aliased / name).read_bytes() == (plain / name).read_bytes(), name


def test_dev_split_from_the_same_release(tmp_path, capsys):
    dev_pred = tmp_path / "dev.jsonl"
    rows = [json.loads(line) for line in (TINY / "metadata_dev.jsonl").read_text().splitlines()]
    dev_pred.write_text("".join(json.dumps({"item_id": r["item_id"], "raw_text": r["answer"]})
                                + "\n" for r in rows))
    out = run(tmp_path, "dev", "--dataset_root", str(TINY), "--split", "dev", "--predictions",
              str(dev_pred), "--no_analyses")
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert summary["model"] == "dev"  # the predictions file's stem, as v0.1 does
    assert summary["overall"]["pass_rate"] == 1.0 and summary["split"] == "dev"


def test_compare_subcommand_is_dispatched(tmp_path, capsys):
    first = run(tmp_path, "a", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
                "--n_boot", "50")
    second = run(tmp_path, "b", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
                 "--n_boot", "50", "--model", "twin")
    capsys.readouterr()
    status = main(["compare", str(first), str(second), "--n_boot", "50"])
    assert status in (0, 2)  # the comparison itself is rose_eval.analyses.compare's to test
    captured = capsys.readouterr()
    assert captured.out or captured.err


def test_real_rows_oracle_through_the_cli(tmp_path, capsys):
    rows = v01_rows()
    pred = tmp_path / "oracle.jsonl"
    pred.write_text("".join(json.dumps({"item_id": r["item_id"], "model": "oracle",
                                        "raw_text": r["answer"], "error": None}) + "\n"
                            for r in rows))
    out = run(tmp_path, "real", "--metadata", str(REAL_ROWS), "--predictions", str(pred),
              "--no_analyses")
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert summary["coverage"]["num_evaluated"] == 1112
    assert summary["overall"]["pass_rate"] == 1.0
    assert summary["by_template"]["T2B_COUNT_LOCAL_MATCHED"]["n"] == 1112
    assert (out / TABLE1).read_text() == (
        "oracle\n& " + " & ".join(["100.0"] * 13) + " \\\\\n")
    assert (out / TABLE2).read_text() == "oracle\n& " + " & ".join(["--"] * 8) + " \\\\\n"


def test_a_failing_analysis_is_named_and_the_rest_is_written(tmp_path, capsys, monkeypatch):
    from rose_eval.analyses import ANALYSES

    def broken(run):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setitem(ANALYSES._items, "broken_demo", broken)
    out = tmp_path / "o"
    status = main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--n_boot", "50",
                   "--out_dir", str(out)])
    err = capsys.readouterr().err
    assert status == 1
    coverage, failed = err.splitlines()  # the coverage line, then the failed analysis
    assert coverage.startswith("rose-eval: scored ")
    assert "analysis broken_demo failed (RuntimeError: boom second line)" in failed
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert summary["analyses"]["broken_demo"] == {"error": "RuntimeError: boom second line"}
    others = {k: v for k, v in summary["analyses"].items() if k != "broken_demo"}
    assert len(others) == len(ANALYSES.names()) - 1 and all("error" not in v for v in others.values() if v)
    assert others["bootstrap"]["n_boot"] == 50
    expected = CASES / "tiny_example" / "expected"
    for name in PARITY_FILES:
        if name != SUMMARY:
            assert (out / name).read_bytes() == (expected / name).read_bytes()


def test_an_analysis_returning_non_json_fails_alone(tmp_path, capsys, monkeypatch):
    from rose_eval.analyses import ANALYSES

    monkeypatch.setitem(ANALYSES._items, "nan_demo", lambda run: {"x": float("nan")})
    out = tmp_path / "o"
    assert main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--n_boot", "20",
                 "--out_dir", str(out)]) == 1
    assert "analysis nan_demo failed (ValueError" in capsys.readouterr().err
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert list(summary["analyses"]["nan_demo"]) == ["error"]


def _tiny_predictions(tmp_path: Path, change) -> Path:
    rows = [json.loads(line) for line in TINY_PRED.read_text(encoding="utf-8").splitlines()]
    meta = {r["item_id"]: r for r in map(json.loads, (TINY / "metadata_test.jsonl")
                                         .read_text(encoding="utf-8").splitlines())}
    for row in rows:
        change(row, meta[row["item_id"]])
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_huge_count_breaks_no_analysis(tmp_path, capsys):
    # The case: an oracle run with one T2B answer COUNT(1 followed by 400 zeros).
    huge = "COUNT(1" + "0" * 400 + ")"

    def oracle(row, meta):
        row["raw_text"] = meta["answer"]
        if meta["item_id"] == "MLCNT_CHITEM_000003":
            row["raw_text"] = huge

    pred = _tiny_predictions(tmp_path, oracle)
    out = tmp_path / "o"
    assert main(["--dataset_root", str(TINY), "--predictions", str(pred), "--n_boot", "200",
                 "--out_dir", str(out)]) == 0
    assert capsys.readouterr().err.startswith("rose-eval: scored 70 of 70 items")
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    analyses = summary["analyses"]
    assert set(analyses) >= {"perception_action_gap", "chance_floor", "scene_consistency", "global_click_bridge",
                             "matched_local_bridge", "interface_controls", "bootstrap", "lenient", "abstention"}
    assert not [name for name, value in analyses.items() if value and "error" in value]
    ch = analyses["matched_local_bridge"]["by_subset"]["ROSE-ChineseGlyph"]
    assert ch["mlcnt_pass_rate"] == 0.5 and ch["mlcnt_count_mae"] is not None


@pytest.mark.parametrize("answer", [
    "NaN", "nan", "inf", "-Infinity", "COUNT(NaN)", "COUNT(inf)", "COUNT(\u221e)",
    "COUNT(\U0001d7d1)", "CLICK(R\u0661,C\u0662); DONE", "\u202eCOUNT(2)", "COUNT(2)\u0000",
    "\ud800", "DONE\ufeff", "COUNT(\u0661" + "0" * 5000 + ")", "\U0001f600" * 1000,
])
def test_odd_answers_break_no_analysis(tmp_path, capsys, answer):
    pred = _tiny_predictions(tmp_path, lambda row, meta: row.update(raw_text=answer))
    out = tmp_path / "o"
    assert main(["--dataset_root", str(TINY), "--predictions", str(pred), "--n_boot", "50",
                 "--out_dir", str(out)]) == 0
    assert capsys.readouterr().err.startswith("rose-eval: scored 70 of 70 items")
    analyses = json.loads((out / SUMMARY).read_text(encoding="utf-8"))["analyses"]
    assert not [name for name, value in analyses.items() if value and "error" in value]


@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--seed", "-1", "--seed: must be at least 0, got -1"),
    ("--n_boot", "0", "--n_boot: must be from 1 to 1000000, got 0"),
    ("--n_boot", "many", "--n_boot: expected an integer, got 'many'"),
    ("--digits", "-1", "--digits: must be from 0 to 50, got -1"),
    ("--near_miss_l1", "-2", "--near_miss_l1: must be at least 0, got -2"),
])
def test_bad_argument_values_are_one_line(tmp_path, capsys, flag, value, needle):
    out = tmp_path / "o"
    assert main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
                 "--out_dir", str(out), flag, value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-eval: error: ") and needle in err, err
    assert not out.exists()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_failed_write_leaves_the_previous_set(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    run(tmp_path, "out", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
        "--no_analyses")
    before = _files(out)
    real_write = Path.write_bytes
    written: list[str] = []

    def disk_full(self, data):
        if self.name == TABLE2:
            raise OSError(28, "No space left on device")
        written.append(self.name)
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    status = main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--model", "new",
                   "--no_analyses", "--out_dir", str(out)])
    assert status == 2 and "No space left on device" in capsys.readouterr().err
    assert written  # the new set was partly written ... but never became the output folder
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left
    fresh = tmp_path / "fresh"
    assert main(["--dataset_root", str(TINY), "--predictions", str(TINY_PRED), "--no_analyses",
                 "--out_dir", str(fresh)]) == 2
    assert not fresh.exists()


def test_the_new_set_replaces_the_old_one_as_a_whole(tmp_path, capsys):
    out = run(tmp_path, "out", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
              "--no_analyses")
    (out / "notes.txt").write_text("mine")
    (out / "sub").mkdir()
    (out / "sub" / "kept.txt").write_text("kept")
    run(tmp_path, "out", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED),
        "--model", "second", "--no_analyses")
    assert (out / TABLE1).read_text().startswith("second\n& ")
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert summary["model"] == "second" and "analyses" not in summary
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "sub" / "kept.txt").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_compare_is_a_listed_subcommand():
    from rose_eval.cli.eval import SUBCOMMANDS

    assert SUBCOMMANDS == {"compare": "rose_eval.cli.compare", "power": "rose_eval.cli.power",
                           "report": "rose_eval.cli.report"}
