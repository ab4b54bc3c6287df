"""rose-run --epochs k against a real local server, then rose-eval on the repeated run."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_eval.cli.eval import main as eval_main
from rose_eval.cli.run import main as run_main

from .conftest import ok_reply

PUBLIC = ("per_item_eval.jsonl", "error_cases.jsonl", "summary_by_subset.csv", "summary_by_template.csv",
          "coverage_by_subset_template.csv", "table1_row.txt", "table2_row.txt", "evaluation_summary.json")
SEED = 42
WRONG = "COUNT(99)"
# Which epochs (1..3) item k of the release answers right: the designed disagreement.
RIGHT_IN = {0: {1, 2, 3}, 1: set(), 2: {2, 3}, 3: {1, 3}}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release

    out = tmp_path_factory.mktemp("epochs_release") / "release"
    small = [f"subset.{s}.{k}={v}" for s in ("glyph", "pixel_edit") for k, v in (("scenes", 4), ("dev_scenes", 1))]
    generate_release(load_config([f"output_dir={out}", "progress=false", "profile=mini", "workers=1",
                                  "subsets=[glyph,pixel_edit]", *small]))
    return out


def _pixels(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as picture:
        return hashlib.sha256(np.asarray(picture.convert("RGB")).tobytes()).hexdigest()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Script:
    """Recognises the item (image bytes, local prompt) and answers by its index and the epoch
    the request's seed names; ``fail`` answers HTTP 500 to some (item, epoch) pairs."""

    def __init__(self, release: Path, fail: set[tuple[str, int]] = frozenset()) -> None:
        self.main = _rows(release / "metadata_test.jsonl")
        self.index = {r["item_id"]: k for k, r in enumerate(self.main)}
        self.by_key = {(_pixels((release / r["image"]).read_bytes()),
                        r["prompt_local"].strip()): r for r in self.main}
        self.fail = set(fail)
        self.asked: list[tuple[str, int, str]] = []  # (item, epoch, body)

    def __call__(self, _i, body, _headers):
        parts = body["messages"][0]["content"]
        data = base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1])
        row = self.by_key[(_pixels(data), parts[2]["text"])]
        epoch = body["seed"] - SEED + 1
        self.asked.append((row["item_id"], epoch, json.dumps(body, sort_keys=True)))
        if (row["item_id"], epoch) in self.fail:
            return 500, {}, {"error": {"message": "overloaded"}}, 0.0
        right = epoch in RIGHT_IN[self.index[row["item_id"]] % 4]
        return ok_reply(row["ground_truth_formal_answer"] if right else WRONG)


def _run(release: Path, server, out: Path, *extra: str) -> int:
    return run_main(["--dataset_root", str(release), "--split", "test", "--model", "sampler", "--base_url",
                     server.url, "--output", str(out), "--no_progress", "--concurrency", "3",
                     "--temperature", "0.7", "--epochs", "3", "--seed", str(SEED), "--max_retries", "0",
                     *extra])


@pytest.fixture(scope="module")
def repeated(release, tmp_path_factory):
    """One rose-run --epochs 3 whose first attempt fails some epoch-2 requests, resumed."""
    from .conftest import chat_servers

    tmp = tmp_path_factory.mktemp("epochs")
    out = tmp / "preds.jsonl"
    with chat_servers() as start:
        ids = [r["item_id"] for r in _rows(release / "metadata_test.jsonl")]
        script = Script(release, fail={(i, 2) for i in ids[::5]})
        server = start(script)
        first = _run(release, server, out)
        after_first, flaky = _rows(out), list(script.asked)
        script.fail.clear()  # the endpoint recovers
        script.asked.clear()
        second = _run(release, server, out)
    return {"out": out, "ids": ids, "flaky": flaky, "healthy": script.asked, "codes": (first, second),
            "after_first": after_first, "tmp": tmp, "release": release}


def test_every_item_is_asked_once_per_epoch_with_distinct_requests(repeated):
    flaky, ids = repeated["flaky"], repeated["ids"]
    assert repeated["codes"] == (1, 0)
    assert sorted((i, e) for i, e, _ in flaky) == sorted((i, e) for i in ids for e in (1, 2, 3))
    bodies: dict[str, set[str]] = {}
    for item, _epoch, body in flaky:
        bodies.setdefault(item, set()).add(body)
    # The epochs' requests differ (only in their seed): no request cache can fold them into one.
    assert all(len(b) == 3 for b in bodies.values())
    seeds = {json.loads(b)["seed"] for b in bodies[ids[0]]}
    assert seeds == {SEED, SEED + 1, SEED + 2}


def test_rows_keep_item_ids_and_carry_the_epoch_and_resume_per_epoch(repeated):
    ids, rows = repeated["ids"], _rows(repeated["out"])
    failed = {(i, 2) for i in ids[::5]}
    # The first run wrote a failed row for each failing (item, epoch); the resumed run asked
    # exactly those again, nothing else.
    assert {(r["item_id"], r["epoch"]) for r in repeated["after_first"] if r["error"]} == failed
    assert sorted((i, e) for i, e, _ in repeated["healthy"]) == sorted(failed)
    assert len(rows) == 3 * len(ids)
    assert sorted((r["item_id"], r["epoch"]) for r in rows) == sorted((i, e) for i in ids for e in (1, 2, 3))
    assert all(r["error"] is None for r in rows)
    manifest = json.loads(repeated["out"].with_name("preds.manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["config"]["repeats"] == {"epochs": 3, "seed": SEED, "seed_of_epoch": "seed + epoch - 1"}
    assert manifest["counts"]["answers"] == 3 * len(ids)


def test_rose_eval_scores_each_epoch_mean_and_agreement(repeated):
    ids, out_dir = repeated["ids"], repeated["tmp"] / "eval"
    assert eval_main(["--dataset_root", str(repeated["release"]), "--split", "test", "--predictions",
                      str(repeated["out"]), "--out_dir", str(out_dir), "--n_boot", "200"]) == 0
    epochs = json.loads((out_dir / "epochs.json").read_text())
    # By the script: item k passes in epoch e exactly when e is in RIGHT_IN[k % 4].
    expected = [sum(e in RIGHT_IN[k % 4] for k in range(len(ids))) / len(ids) for e in (1, 2, 3)]
    assert [e["pass"] for e in epochs["per_epoch"]] == pytest.approx(expected)
    assert epochs["mean"]["pass"] == pytest.approx(sum(expected) / 3)
    same = sum(k % 4 in (0, 1) for k in range(len(ids)))
    assert (epochs["agreement"]["items"], epochs["agreement"]["same_verdict"]) == (len(ids), same)
    assert 0 < epochs["agreement"]["share"] < 1
    assert epochs["even"] is True
    # Epochs are rows of their scene: as many scenes as one epoch has, three times the rows.
    assert epochs["intervals"]["n_scenes"] == {"ROSE-ChineseGlyph": 3, "ROSE-PixelEdit": 3}
    assert epochs["intervals"]["table1"]["Avg. PASS"]["point"] == pytest.approx(
        sum(e["table1/Avg. PASS"] for e in epochs["per_epoch"]) / 3)
    # The eight public files are those of epoch 1 scored alone (a file without epoch fields).
    alone = repeated["tmp"] / "epoch1.jsonl"
    alone.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "epoch"}) + "\n"
                             for r in _rows(repeated["out"]) if r["epoch"] == 1))
    ref = repeated["tmp"] / "eval_epoch1"
    assert eval_main(["--dataset_root", str(repeated["release"]), "--split", "test", "--predictions",
                      str(alone), "--out_dir", str(ref), "--n_boot", "200", "--model", "sampler"]) == 0
    for name in PUBLIC[:-1]:
        assert (out_dir / name).read_bytes() == (ref / name).read_bytes(), name
    summaries = [json.loads((folder / PUBLIC[-1]).read_text()) for folder in (out_dir, ref)]
    assert [s.pop("predictions_jsonl") for s in summaries] == [str(repeated["out"]), str(alone)]
    assert summaries[0] == summaries[1]  # the input's path aside
    assert not (ref / "epochs.json").exists()


def test_rose_eval_refuses_uneven_epochs_unless_allowed(repeated, capsys):
    rows = _rows(repeated["out"])
    cut = repeated["tmp"] / "cut.jsonl"
    dropped = next(r for r in rows if r["epoch"] == 3)
    cut.write_text("".join(json.dumps(r) + "\n" for r in rows if r is not dropped))
    args = ["--dataset_root", str(repeated["release"]), "--split", "test", "--predictions", str(cut),
            "--n_boot", "50"]
    capsys.readouterr()
    assert eval_main([*args, "--out_dir", str(repeated["tmp"] / "refused")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "uneven" in err[0] and "--allow_uneven_epochs" in err[0]
    assert not (repeated["tmp"] / "refused").exists()
    out = repeated["tmp"] / "allowed"
    assert eval_main([*args, "--out_dir", str(out), "--allow_uneven_epochs"]) == 0
    epochs = json.loads((out / "epochs.json").read_text())
    assert epochs["even"] is False and epochs["per_epoch"][2]["items"] == len(repeated["ids"]) - 1
    assert epochs["agreement"]["items"] == len(repeated["ids"]) - 1


@pytest.mark.parametrize("extra, needle", [
    (["--temperature", "0"], "needs --temperature > 0"),
    (["--extra_body", '{"seed": 1}'], "remove 'seed' from --extra_body"),
])
def test_repeats_that_would_repeat_the_same_request_are_refused(release, chat_server, tmp_path, capsys,
                                                                extra, needle):
    server = chat_server(lambda *_: ok_reply("COUNT(1)"))
    capsys.readouterr()
    assert _run(release, server, tmp_path / "p.jsonl", *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert server.count == 0 and not (tmp_path / "p.jsonl").exists()


def test_solver_epochs_need_randomness(release, tmp_path, capsys):
    base = ["--dataset_root", str(release), "--split", "test", "--no_progress", "--epochs", "2"]
    capsys.readouterr()
    assert run_main([*base, "--solver", "oracle", "--output", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no randomness" in err[0]
    out = tmp_path / "r.jsonl"
    assert run_main([*base, "--solver", "random", "--output", str(out)]) == 0
    rows = _rows(out)
    by_epoch = {e: {r["item_id"]: r["raw_text"] for r in rows if r["epoch"] == e} for e in (1, 2)}
    assert by_epoch[1].keys() == by_epoch[2].keys()
    assert by_epoch[1] != by_epoch[2]  # epoch 2 draws with seed + 1
    # Epoch 1 is the single run with the same seed.
    single = tmp_path / "single.jsonl"
    assert run_main([*base[:-2], "--solver", "random", "--output", str(single)]) == 0
    assert {r["item_id"]: r["raw_text"] for r in _rows(single)} == by_epoch[1]
    assert all("epoch" not in r for r in _rows(single))
