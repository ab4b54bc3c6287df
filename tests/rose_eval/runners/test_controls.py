"""Interface controls end to end: a generated release with controls, rose-run against a real
scripted endpoint on 127.0.0.1 (control items sent like any other; text_only without an
image), rose-eval's interface_controls decomposition equal to the designed one, the public
outputs untouched, and the built-in baselines on control items."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_eval.cli.eval import main as eval_main
from rose_eval.cli.run import main as run_main
from rose_eval.vocab import CONTROL_ORDER, TEMPLATE_ORDER

from .conftest import ok_reply

PUBLIC = ("per_item_eval.jsonl", "error_cases.jsonl", "summary_by_subset.csv", "summary_by_template.csv",
          "coverage_by_subset_template.csv", "table1_row.txt", "table2_row.txt")
WRONG = "I cannot tell."
# The designed pattern: which conditions a source item (its index k in release order) is answered right in.
RIGHT = {
    "standard": lambda k: k % 4 == 0,
    "coords_given": lambda k: k % 4 <= 1,
    "exceptions_given": lambda k: k % 4 <= 2,
    "text_only": lambda k: k % 8 != 7,
}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release

    out = tmp_path_factory.mktemp("controls_release") / "release"
    small = [f"subset.{s}.{k}={v}" for s in ("glyph", "pixel_edit") for k, v in (("scenes", 5), ("dev_scenes", 1))]
    config = load_config([f"output_dir={out}", "progress=false", "profile=mini_controls",
                          "subsets=[glyph,pixel_edit]", *small])
    return generate_release(config).path


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _pixels(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as picture:
        return hashlib.sha256(np.asarray(picture.convert("RGB")).tobytes()).hexdigest()


def _key(image_hash: str, prompt_local: str) -> tuple[str, str]:
    return image_hash, prompt_local.strip()


def _lookup(release: Path) -> tuple[dict[tuple[str, str], dict], list[dict]]:
    """(image pixels, prompt_local) -> row, for the main and control test rows; and the main rows."""
    main = _jsonl(release / "metadata_test.jsonl")
    rows = list(main)
    for control in CONTROL_ORDER:
        rows += _jsonl(release / f"analysis/controls/{control}/metadata_test.jsonl")
    table = {}
    for row in rows:
        image = "" if row["image"] is None else _pixels((release / row["image"]).read_bytes())
        key = _key(image, row["prompt_local"])
        assert key not in table, "two rows would get the same request"
        table[key] = row
    return table, main


def test_scripted_endpoint_yields_exactly_the_designed_decomposition(release, chat_server, tmp_path) -> None:
    table, main = _lookup(release)
    index = {row["item_id"]: k for k, row in enumerate(main)}
    seen: list[tuple[str, list[str]]] = []

    def script(_i, body, _headers):
        (message,) = body["messages"]
        kinds = [part["type"] for part in message["content"]]
        image = ""
        for part in message["content"]:
            if part["type"] == "image_url":
                image = _pixels(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
        row = table[_key(image, message["content"][-1]["text"])]
        seen.append((row["item_id"], kinds))
        condition = row.get("control") or "standard"
        k = index[row.get("source_item_id") or row["item_id"]]
        return ok_reply(row["answer"] if RIGHT[condition](k) else WRONG)

    server = chat_server(script)
    preds = tmp_path / "preds.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--model", "scripted", "--base_url",
                     server.url, "--output", str(preds), "--controls", "all", "--no_progress",
                     "--concurrency", "2"]) == 0
    assert len(seen) == 4 * len(main)
    for item_id, kinds in seen:  # text_only is sent without an image part, the others with one
        assert kinds == (["text", "text"] if item_id.endswith("__text_only") else ["text", "image_url", "text"])

    out = tmp_path / "eval"
    assert eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                      "--out_dir", str(out), "--n_boot", "300"]) == 0
    result = json.loads((out / "evaluation_summary.json").read_text())["analyses"]["interface_controls"]
    assert result["chain"] == ["standard", *CONTROL_ORDER]
    assert result["n_paired_items"] == len(main)

    def expected(rows: list[dict]) -> dict[str, float]:
        n = len(rows)
        rate = {c: 100.0 * sum(RIGHT[c](index[r["item_id"]]) for r in rows) / n for c in RIGHT}
        return {"pass_standard": rate["standard"], "pass_coords_given": rate["coords_given"],
                "pass_exceptions_given": rate["exceptions_given"], "pass_text_only": rate["text_only"],
                "lost_to_coordinate_reading": rate["coords_given"] - rate["standard"],
                "lost_to_perception": rate["exceptions_given"] - rate["coords_given"],
                "lost_to_image_modality": rate["text_only"] - rate["exceptions_given"],
                "lost_to_execution": 100.0 - rate["text_only"], "gap": 100.0 - rate["standard"]}

    for group, rows in [("all", main)] + [(t, [r for r in main if r["task_template"] == t]) for t in TEMPLATE_ORDER]:
        got = result["all"] if group == "all" else result["by_template"][group]
        assert got["n_items"] == len(rows)
        for name, value in expected(rows).items():
            assert got[name]["point"] == pytest.approx(value, abs=1e-6), (group, name)
            assert got[name]["lo"] <= got[name]["point"] <= got[name]["hi"]
    # the designed numbers overall: 25 % / 50 % / 75 % / 87.5 % of 40 items
    assert [result["all"][f"pass_{c}"]["point"] for c in RIGHT] == [25.0, 50.0, 75.0, 87.5]

    # the public outputs are those of the main items alone
    alone = tmp_path / "main_only.jsonl"
    alone.write_text("".join(line + "\n" for line in preds.read_text().splitlines()
                             if "__" not in json.loads(line)["item_id"]))
    ref = tmp_path / "eval_main"
    assert eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(alone),
                      "--out_dir", str(ref), "--n_boot", "300"]) == 0
    for name in PUBLIC:
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    a, b = (json.loads((d / "evaluation_summary.json").read_text()) for d in (out, ref))
    assert b["analyses"]["interface_controls"] is None
    a_an, b_an = a.pop("analyses"), b.pop("analyses")
    a.pop("predictions_path", None), b.pop("predictions_path", None)
    assert json.dumps(a, sort_keys=True).replace(str(preds), "P") == json.dumps(b, sort_keys=True).replace(str(alone), "P")
    assert {k: v for k, v in a_an.items() if k != "interface_controls"} == \
        {k: v for k, v in b_an.items() if k != "interface_controls"}

    # the same control answers given apart (--controls_predictions) give the same decomposition
    ctl = tmp_path / "controls.jsonl"
    ctl.write_text("".join(line + "\n" for line in preds.read_text().splitlines()
                           if "__" in json.loads(line)["item_id"]))
    apart = tmp_path / "eval_apart"
    assert eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(alone),
                      "--controls_predictions", str(ctl), "--out_dir", str(apart), "--n_boot", "300"]) == 0
    assert json.loads((apart / "evaluation_summary.json").read_text())["analyses"]["interface_controls"] == result


@pytest.mark.parametrize("solver", ["oracle", "random"])
def test_baselines_answer_control_items(release, tmp_path, solver) -> None:
    preds = tmp_path / "p.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--solver", solver, "--controls", "all",
                     "--output", str(preds), "--no_progress"]) == 0
    rows = _jsonl(preds)
    assert Counter(r["item_id"].rpartition("__")[2] if "__" in r["item_id"] else "standard" for r in rows) == \
        {"standard": 40, "coords_given": 40, "exceptions_given": 40, "text_only": 40}
    out = tmp_path / "e"
    assert eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                      "--out_dir", str(out), "--n_boot", "200"]) == 0
    got = json.loads((out / "evaluation_summary.json").read_text())["analyses"]["interface_controls"]["all"]
    if solver == "oracle":  # every control keeps its source's gold: the oracle passes all of them
        assert [got[f"pass_{c}"]["point"] for c in ("standard", *CONTROL_ORDER)] == [100.0] * 4


def test_bad_control_flags_are_one_line(release, tmp_path, capsys) -> None:
    status = run_main(["--dataset_root", str(release), "--split", "test", "--solver", "oracle", "--controls",
                       "nonsense", "--output", str(tmp_path / "p.jsonl")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "unknown control 'nonsense'" in err
    assert not (tmp_path / "p.jsonl").exists()
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text(json.dumps({"item_id": "NOPE__text_only", "model": "m", "raw_text": "COUNT(1)",
                                 "error": None}) + "\n")
    preds = tmp_path / "o.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--solver", "oracle",
                     "--output", str(preds), "--no_progress"]) == 0
    capsys.readouterr()
    status = eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                        "--controls_predictions", str(bogus), "--out_dir", str(tmp_path / "e")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "match no control row" in err
    assert not (tmp_path / "e").exists()


def test_cv_reads_the_grid_beside_the_labels(release, tmp_path) -> None:
    preds = tmp_path / "cv.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--solver", "cv", "--controls",
                     "coords_given", "--output", str(preds), "--no_progress"]) == 0
    answers = {r["item_id"]: r["raw_text"] for r in _jsonl(preds)}
    main = _jsonl(release / "metadata_test.jsonl")
    # the labelled image holds the same grid: the cv baseline gives the same answer on both
    assert all(answers[f"{r['item_id']}__coords_given"] == answers[r["item_id"]] for r in main)
    text = tmp_path / "cv_text.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--solver", "cv", "--controls",
                     "text_only", "--templates", "T1", "--output", str(text), "--no_progress"]) == 1
    failed = [r for r in _jsonl(text) if r["item_id"].endswith("__text_only")]
    assert failed and all(r["raw_text"] is None and "has none" in r["error"] for r in failed)


def test_label_margins_are_found_only_on_labelled_images(release) -> None:
    from rose_eval.controls import label_margins
    from rose_eval.runners.cv_grid import load_rgb

    for row in _jsonl(release / "analysis/controls/exceptions_given/metadata_test.jsonl")[::5]:
        assert label_margins(load_rgb(release / row["image"])) == tuple(row["control_grid_offset"])
    for row in _jsonl(release / "metadata_test.jsonl")[::5]:
        assert label_margins(load_rgb(release / row["image"])) == (0, 0)
