"""An inspect log with two epochs (real inspect eval against the local server) converted with
``--epoch all`` and scored by rose-eval as a repeated run."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.cli.export import main as export_main
from rose_eval.harness.inspect_log import convert
from rose_eval.harness.inspect_task import rose
from tests.rose_eval.harness.conftest import read_rows
from tests.rose_eval.runners.conftest import ok_reply

MODEL = "openai-api/local/rose-test"


class Script:
    """Right the first time an item is asked; the second time wrong for every third item."""

    def __init__(self, release: Path, rows: list[dict]) -> None:
        self.by_key = {(hashlib.sha256((release / r["image"]).read_bytes()).hexdigest(),
                        r["prompt_local"].strip()): r for r in rows}
        ids = sorted(r["item_id"] for r in rows)
        self.flips = set(ids[::3])
        self.seen: dict[str, int] = {}

    def __call__(self, _index, body, _headers):
        parts = body["messages"][0]["content"]
        data = base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])
        row = self.by_key[(hashlib.sha256(data).hexdigest(), parts[2]["text"])]
        item = row["item_id"]
        self.seen[item] = self.seen.get(item, 0) + 1
        wrong = item in self.flips and self.seen[item] == 2
        return ok_reply("COUNT(99)" if wrong else row["ground_truth_formal_answer"])


@pytest.fixture(scope="module")
def log_path(release, tmp_path_factory, module_chat_server) -> Path:
    rows = read_rows(release / "metadata_test.jsonl")
    script = Script(release, rows)
    server = module_chat_server(script)
    tmp = tmp_path_factory.mktemp("inspect_epochs")
    log = inspect_eval(rose(dataset_root=str(release)), model=MODEL, model_base_url=server.url,
                       model_args={"api_key": "test-key"}, log_dir=str(tmp / "logs"), display="none",
                       max_connections=2, epochs=2)[0]
    assert all(n == 2 for n in script.seen.values()) and len(script.seen) == len(rows)
    return Path(log.location)


def test_one_epoch_converts_as_before_and_all_epochs_carry_their_epoch(log_path, test_rows):
    first, _ = convert(log_path, epoch=1)
    assert len(first) == len(test_rows) and {p.epoch for p in first} == {None}
    every, manifest = convert(log_path, epoch="all")
    assert len(every) == 2 * len(test_rows)
    assert sorted((p.item_id, p.epoch) for p in every) == sorted(
        (r["item_id"], e) for r in test_rows for e in (1, 2))
    assert manifest["harness"]["epoch"] == "all" and manifest["harness"]["epochs"] == [1, 2]


def test_export_all_then_rose_eval_scores_the_repeated_run(log_path, release, test_rows, tmp_path, capsys):
    preds = tmp_path / "inspect.jsonl"
    assert export_main(["predictions", "inspect", str(log_path), "--output", str(preds), "--epoch", "all"]) == 0
    rows = read_rows(preds)
    assert {r["epoch"] for r in rows} == {1, 2}
    out = tmp_path / "eval"
    assert rose_eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                           "--out_dir", str(out), "--n_boot", "50"]) == 0
    epochs = json.loads((out / "epochs.json").read_text())
    flips = len(sorted(r["item_id"] for r in test_rows)[::3])
    # Every item is right once; the flipped ones are wrong in whichever epoch asked second.
    assert epochs["agreement"]["items"] == len(test_rows)
    assert epochs["agreement"]["same_verdict"] == len(test_rows) - flips
    assert epochs["mean"]["pass"] == pytest.approx((2 * len(test_rows) - flips) / (2 * len(test_rows)))
    capsys.readouterr()
    assert export_main(["predictions", "inspect", str(log_path), "--output", str(preds), "--epoch", "0"]) == 2
    assert "epochs count from 1" in capsys.readouterr().err
