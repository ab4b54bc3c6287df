"""rose-eval end to end: outputs, determinism, analyses key, alias, output directory handling."""

from __future__ import annotations

import json
from pathlib import Path

from rose_eval.cli import main
from rose_eval.report.tables import PARITY_FILES, SUMMARY, TABLE1, TABLE2
from tests.reference import v01_rows, v01_rows_path

TINY = Path(__file__).resolve().parents[2] / "rose_eval" / "examples" / "tiny"
TINY_PRED = TINY / "predictions_test.jsonl"
CASES = Path(__file__).resolve().parent / "golden" / "cases"
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


def test_a_failing_analysis_never_costs_the_parity_outputs(tmp_path, capsys, monkeypatch):
    import rose_eval.analyses as analyses

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(analyses, "run_analyses", broken, raising=False)
    out = run(tmp_path, "o", "--dataset_root", str(TINY), "--predictions", str(TINY_PRED))
    assert "analyses failed (RuntimeError: boom)" in capsys.readouterr().err
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    assert summary["analyses"] == {"error": "RuntimeError: boom"}
    expected = CASES / "tiny_example" / "expected"
    for name in PARITY_FILES:
        if name != SUMMARY:
            assert (out / name).read_bytes() == (expected / name).read_bytes()
