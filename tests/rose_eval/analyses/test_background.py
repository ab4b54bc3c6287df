"""The analyses' worker process: same result as in process, failures contained, no orphans."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from rose_eval.analyses import ANALYSES, run_analyses
from rose_eval.analyses.background import SERIAL_ENV, analyses_in_background
from rose_eval.score import score_item

TINY = Path(__file__).resolve().parents[3] / "rose_eval" / "examples" / "tiny"


@pytest.fixture(scope="module")
def tiny() -> tuple[list[dict], list[dict]]:
    meta = [json.loads(line) for line in (TINY / "metadata_test.jsonl").read_text().splitlines()]
    preds = {p["item_id"]: p for p in map(json.loads, (TINY / "predictions_test.jsonl")
                                          .read_text().splitlines())}
    return [score_item(row, preds[row["item_id"]]) for row in meta], meta


def test_the_worker_returns_exactly_the_in_process_result(tiny, monkeypatch):
    items, meta = tiny
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    with analyses_in_background(items, meta, seed=4, n_boot=300) as result:
        forked = result()
    direct = run_analyses(items, meta, seed=4, n_boot=300)
    assert json.dumps(forked) == json.dumps(direct)
    monkeypatch.setenv(SERIAL_ENV, "1")
    with analyses_in_background(items, meta, seed=4, n_boot=300) as result:
        assert json.dumps(result()) == json.dumps(direct)


def test_a_dying_worker_fails_every_analysis_and_nothing_else(tiny, monkeypatch):
    items, meta = tiny
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    monkeypatch.setitem(ANALYSES._items, "dies", lambda run: os._exit(3))
    with analyses_in_background(items, meta, seed=0, n_boot=20) as result:
        outcome = result()
    assert set(outcome) == set(ANALYSES.names())
    assert all("ended abnormally" in value["error"] for value in outcome.values())


def test_leaving_early_stops_the_worker(tiny, monkeypatch):
    items, meta = tiny
    monkeypatch.delenv(SERIAL_ENV, raising=False)
    monkeypatch.setitem(ANALYSES._items, "slow", lambda run: time.sleep(60))
    start = time.monotonic()
    with pytest.raises(RuntimeError), analyses_in_background(items, meta, seed=0, n_boot=20):
        raise RuntimeError("the parent failed while the analyses ran")
    assert time.monotonic() - start < 30  # killed and reaped, not waited for
