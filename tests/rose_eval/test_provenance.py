"""Every evaluation carries where its numbers came from (provenance.json), and compare and the
report use it: runs on different metadata are refused, control runs are marked and not
ranked beside standard runs, one run has one name.

End to end on a rendered release: rose-run answers it with the oracle solver and with a real
HTTP endpoint on 127.0.0.1 (a ``--blank_image`` control), rose-eval scores both.
Issue 22 measured: compare ranked two runs scored on different metadata 40 points apart, a
``--blank_image`` run appeared as an ordinary leaderboard entry, and ``--model`` relabelled
the summary but not what compare read.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from rose_eval import __version__
from rose_eval.cli.compare import main as compare_main
from rose_eval.cli.eval import main as eval_main
from rose_eval.cli.run import main as run_main
from rose_eval.provenance import PROVENANCE_FILE, PUBLIC_REPO_ID
from rose_eval.report.runs import ReportError, load_report_runs
from rose_eval.report.sections import comparison
from rose_eval.report.tables import SUMMARY
from tests.reference import v01_rows_path
from tests.rose_eval.runners.conftest import chat_servers, ok_reply

TINY = Path(__file__).resolve().parents[2] / "rose_eval" / "examples" / "tiny"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _evaluate(root: Path, preds: Path, out: Path, *extra: str) -> dict:
    assert eval_main(["--dataset_root", str(root), "--predictions", str(preds), "--out_dir",
                      str(out), "--no_analyses", *extra]) == 0
    return json.loads((out / PROVENANCE_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, mini_release) -> dict[str, Path]:
    """Evaluation folders: oracle, a second oracle named by --model, a blank-image control,
    and an oracle on other metadata (the same release with one row's difficulty changed)."""
    tmp = tmp_path_factory.mktemp("prov")
    first = mini_release
    other = tmp / "other"
    shutil.copytree(first, other)
    meta = other / "metadata_test.jsonl"
    rows = [json.loads(line) for line in meta.read_text(encoding="utf-8").splitlines()]
    rows[0]["difficulty"] = "other" if rows[0].get("difficulty") != "other" else "hard"
    meta.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    found: dict[str, Path] = {"release": first}
    for name, root in (("oracle", first), ("other", other)):
        preds = tmp / f"{name}.jsonl"
        assert run_main(["--dataset_root", str(root), "--solver", "oracle", "--output",
                         str(preds), "--no_progress"]) == 0
        _evaluate(root, preds, tmp / f"eval_{name}")
        found[name] = tmp / f"eval_{name}"
    _evaluate(first, tmp / "oracle.jsonl", tmp / "eval_renamed", "--model", "oracle-v2")
    found["renamed"] = tmp / "eval_renamed"
    with chat_servers() as start:
        server = start(lambda i, body, headers: ok_reply("COUNT(0)"))
        assert run_main(["--dataset_root", str(first), "--model", "m", "--base_url", server.url,
                         "--api_key_env", "ROSE_TEST_KEY", "--output", str(tmp / "blank.jsonl"),
                         "--blank_image", "--retry_base_delay", "0.01", "--no_progress"]) == 0
    _evaluate(first, tmp / "blank.jsonl", tmp / "eval_blank")
    found["blank"] = tmp / "eval_blank"
    return found


def test_the_sidecar_records_metadata_predictions_and_toolkit(runs):
    record = json.loads((runs["oracle"] / PROVENANCE_FILE).read_text())
    preds = runs["oracle"].parent / "oracle.jsonl"
    assert record["metadata"]["sha256"] == _sha(runs["release"] / "metadata_test.jsonl")
    assert record["metadata"]["public_v0_1"] is None and record["metadata"]["dataset_repo_id"] is None
    summary = runs["release"] / "export_summary.json"
    assert record["release"]["export_summary_sha256"] == _sha(summary)
    assert record["release"]["seed"] == json.loads(summary.read_text())["config"]["seed"]
    assert record["predictions"]["sha256"] == _sha(preds)
    manifest = record["predictions"]["manifest"]
    assert manifest["config"]["answered_by"]["solver"] == "oracle"
    assert manifest["config"]["dataset"]["metadata_sha256"] == record["metadata"]["sha256"]
    assert record["toolkit"]["version"] == __version__
    assert record["run"] == {**record["run"], "model": "oracle-baseline", "control": None,
                             "benchmark_changes": []}
    assert json.loads((runs["oracle"] / SUMMARY).read_text())["dataset_repo_id"] == ""


def test_a_blank_image_run_is_recorded_as_a_control(runs):
    record = json.loads((runs["blank"] / PROVENANCE_FILE).read_text())
    assert record["run"]["control"] == "blank_image"
    assert any("blank white images" in c for c in record["run"]["benchmark_changes"])
    assert record["predictions"]["manifest"]["config"]["answered_by"]["image"]["blank"] is True


def test_compare_refuses_runs_on_other_metadata(runs, capsys):
    assert compare_main([str(runs["oracle"]), str(runs["other"]), "--n_boot", "20"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scored on other metadata" in err


def test_compare_sets_a_control_run_aside_unless_asked(runs, capsys):
    assert compare_main([str(runs["oracle"]), str(runs["blank"]), "--n_boot", "20"]) == 2
    err = capsys.readouterr().err
    assert "not ranked: m" in err and "control: blank_image" in err
    assert compare_main([str(runs["oracle"]), str(runs["blank"]), "--n_boot", "20",
                         "--include_controls"]) == 0
    assert "m [control: blank_image]" in capsys.readouterr().out


def test_one_run_has_one_name(runs, capsys):
    """--model names the run in compare and the report, as in the summary."""
    assert compare_main([str(runs["oracle"]), str(runs["renamed"]), "--n_boot", "20"]) == 0
    board = capsys.readouterr().out
    assert "| oracle-v2 |" in board and "| oracle-baseline |" in board
    names = [run.name for run in load_report_runs([runs["renamed"], runs["blank"]])]
    assert names == ["oracle-v2", "m [control: blank_image]"]


def test_the_report_refuses_other_metadata_and_does_not_rank_controls(runs):
    with pytest.raises(ReportError, match="scored on other metadata"):
        load_report_runs([runs["oracle"], runs["other"]])
    section = comparison(load_report_runs([runs["oracle"], runs["blank"]]), seed=0, n_boot=20)
    assert "fewer than two standard runs" in str(section)


def test_only_v01_rows_name_the_public_dataset(tmp_path, capsys):
    rows = [json.loads(line) for line in v01_rows_path().read_text().splitlines()]
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"item_id": r["item_id"], "raw_text": r["answer"]}) + "\n"
                             for r in rows))
    record = _evaluate(v01_rows_path().parent, preds, tmp_path / "v01", "--metadata",
                       str(v01_rows_path()))
    assert record["metadata"]["dataset_repo_id"] == PUBLIC_REPO_ID
    assert record["metadata"]["public_v0_1"].startswith("v0.1 ")
    assert json.loads((tmp_path / "v01" / SUMMARY).read_text())["dataset_repo_id"] == PUBLIC_REPO_ID
    _evaluate(TINY, TINY / "predictions_test.jsonl", tmp_path / "tiny")
    assert json.loads((tmp_path / "tiny" / SUMMARY).read_text())["dataset_repo_id"] == ""


def test_control_rows_make_a_control_run(tmp_path, capsys):
    """Rows of an interface control (analysis/controls/<control>/, a ``control`` field)."""
    rows = [json.loads(line) for line in (TINY / "metadata_test.jsonl").read_text().splitlines()]
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "metadata_test.jsonl").write_text(
        "".join(json.dumps({**r, "control": "text_only"}) + "\n" for r in rows))
    record = _evaluate(tmp_path / "c", TINY / "predictions_test.jsonl", tmp_path / "out")
    assert record["run"]["control"] == "text_only"
