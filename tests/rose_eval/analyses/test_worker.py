"""The bootstrap helper process: the in-process result exactly, failures contained, no orphans."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose_eval.analyses import bootstrap
from rose_eval.analyses.worker import SERIAL_ENV, BootstrapHelper
from rose_eval.cli.eval import main
from rose_eval.score import score_item

TINY = Path(__file__).resolve().parents[3] / "rose_eval" / "examples" / "tiny"


@pytest.fixture(scope="module")
def items() -> list[dict]:
    meta = [json.loads(line) for line in (TINY / "metadata_test.jsonl").read_text().splitlines()]
    preds = {p["item_id"]: p for p in map(json.loads, (TINY / "predictions_test.jsonl")
                                          .read_text().splitlines())}
    return [score_item(row, preds[row["item_id"]]) for row in meta]


@pytest.fixture
def helper(monkeypatch):
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    started = BootstrapHelper()
    assert started.active  # the suite runs on Linux
    yield started
    started.close()


def test_the_helper_returns_exactly_the_in_process_result(helper, items):
    helper.send(items, seed=3, n_boot=700)
    assert json.dumps(helper.result()) == json.dumps(bootstrap.scene_bootstrap(items, seed=3,
                                                                               n_boot=700))


def test_a_failing_bootstrap_is_reported_not_raised_elsewhere(monkeypatch, items):
    def broken(*args, **kwargs):
        raise ValueError("no scenes today")

    monkeypatch.setattr(bootstrap, "scene_bootstrap", broken)  # inherited by the fork
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    helper = BootstrapHelper()
    helper.send(items, seed=0, n_boot=10)
    with pytest.raises(RuntimeError, match="ValueError: no scenes today"):
        helper.result()
    helper.close()


def test_the_cli_names_a_failed_helper_bootstrap(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bootstrap, "scene_bootstrap", lambda *a, **k: os._exit(9))
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    out = tmp_path / "o"
    assert main(["--dataset_root", str(TINY), "--predictions", str(TINY / "predictions_test.jsonl"),
                 "--out_dir", str(out)]) == 1
    coverage, failed = capsys.readouterr().err.splitlines()  # the coverage line, then one
    assert coverage.startswith("rose-eval: scored 70 of 70 items")
    assert "analysis bootstrap failed" in failed
    analyses = json.loads((out / "evaluation_summary.json").read_text())["analyses"]
    assert list(analyses["bootstrap"]) == ["error"]
    assert "error" not in analyses["lenient"] and "error" not in analyses["scene_consistency"]


def test_an_unused_helper_is_stopped(helper):
    pid = helper.pid
    helper.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: nothing left behind


def test_serial_mode_and_the_helper_give_the_same_files(tmp_path, capsys, monkeypatch):
    outputs = {}
    for mode in ("1", "0"):
        monkeypatch.setenv(SERIAL_ENV, mode)
        out = tmp_path / mode
        assert main(["--dataset_root", str(TINY), "--predictions",
                     str(TINY / "predictions_test.jsonl"), "--out_dir", str(out),
                     "--n_boot", "400", "--seed", "5"]) == 0
        outputs[mode] = {p.name: p.read_bytes() for p in out.iterdir()}
    assert outputs["1"] == outputs["0"]


def test_no_fork_while_other_threads_run(monkeypatch):
    import threading

    monkeypatch.delenv(SERIAL_ENV, raising=False)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not BootstrapHelper().active  # runs in process instead
    finally:
        release.set()
        other.join()
    helper = BootstrapHelper()
    assert helper.active
    helper.close()
