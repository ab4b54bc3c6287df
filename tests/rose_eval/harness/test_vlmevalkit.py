"""VLMEvalKit: release -> TSV -> (answers in its result format) -> rose-eval, round trip."""

from __future__ import annotations

import base64
import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.cli.export import main as rose_export
from rose_eval.harness.vlmevalkit import (
    TSV_COLUMNS,
    dataset_class_source,
    read_result_file,
    score_result_file,
)
from rose_eval.io import InputError
from tests.rose_eval.harness.conftest import read_rows


def resolve_references(frame: pd.DataFrame) -> dict[str, str]:
    """VLMEvalKit's rule: an ``image`` of at most 64 characters is another row's index."""
    images = {str(i): str(v) for i, v in zip(frame["index"], frame["image"], strict=True)}
    return {i: images[v] if len(v) <= 64 else v for i, v in images.items()}


@pytest.fixture(scope="module")
def tsv(release, tmp_path_factory) -> Path:
    """``rose-export vlmevalkit`` with the dataset class written into a VLMEvalKit-like tree."""
    root = tmp_path_factory.mktemp("vlmevalkit")
    out = root / "LMUData" / "ROSE_test.tsv"
    assert rose_export(["vlmevalkit", str(release), str(out),
                        "--dataset_class", str(root / "VLMEvalKit/vlmeval/dataset/rose.py")]) == 0
    return out


def dataset_class_file(tsv: Path) -> Path:
    return tsv.parents[1] / "VLMEvalKit/vlmeval/dataset/rose.py"


# What VLMEvalKit writes for a failed request: the OpenAI wrapper's fail_msg (trailing space
# and all), and BaseAPI.chat_inner's when every conversation turn failed.
FAILED = ("Failed to obtain answer via API. ",
          "Failed to obtain answer via API.: Failed with all possible conversation turns.")


def _answer(i: int, row: dict[str, Any]) -> str:
    return [row["ground_truth_formal_answer"], "COUNT(0)", "no idea", row["ground_truth_formal_answer"],
            FAILED[i // 5 % 2]][i % 5]


def _error(text: str) -> str | None:
    """The error row rose-export writes for VLMEvalKit's failure text (None for an answer)."""
    return f"VLMEvalKit: {' '.join(text.split())}" if text in FAILED else None


def test_tsv_holds_every_row_and_the_released_png_bytes(tsv, release, test_rows):
    frame = pd.read_csv(tsv, sep="\t")  # how VLMEvalKit loads a dataset TSV
    assert tuple(frame.columns) == TSV_COLUMNS and len(frame) == len(test_rows)
    assert list(frame["item_id"]) == [r["item_id"] for r in test_rows]
    assert list(frame["index"]) == list(range(len(test_rows)))
    assert set(frame["split"]) == {"test"}
    assert list(frame["category"]) == [r["rose_subset"] for r in test_rows]
    assert list(frame["answer"]) == [r["ground_truth_formal_answer"] for r in test_rows]
    images = resolve_references(frame)
    full = [v for v in frame["image"].astype(str) if len(v) > 64]
    assert len(full) == len({r["image"] for r in test_rows})  # each image written once
    for index, row in zip(frame["index"], test_rows, strict=True):
        data = base64.b64decode(images[str(index)])
        assert data == (release / row["image"]).read_bytes()
    for (_, line), row in zip(frame.iterrows(), test_rows, strict=True):
        assert json.loads(line["rose_row"]) == row
        assert line["prompt_global"] == row["prompt_global"].strip()
        assert line["question"] == row["prompt_global"].strip() + "\n" + row["prompt_local"].strip()
    manifest = json.loads(tsv.with_name("ROSE_test.manifest.json").read_text(encoding="utf-8"))
    assert manifest["sent"]["images"]["formats"] == ["png"] and manifest["dataset"]["rows"] == 25
    assert "img_detail" in manifest["sent"]["warning"]
    assert manifest["harness"]["dataset_class_file"] == str(dataset_class_file(tsv))
    assert dataset_class_file(tsv).read_text(encoding="utf-8") == dataset_class_source()


def test_dataset_class_source_is_lint_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--stdin-filename", "rose.py", "-"],
                          input=dataset_class_source(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "class RoseDataset(ImageBaseDataset)" in dataset_class_source()


def _result_frame(tsv: Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """What VLMEvalKit's inference writes: the dataset without ``image``, plus ``prediction``."""
    frame = pd.read_csv(tsv, sep="\t")
    frame["prediction"] = [str(_answer(i, r)) for i, r in enumerate(rows)]
    return frame.drop(columns=["image"])


@pytest.mark.parametrize("suffix", ["xlsx", "tsv"])
def test_round_trip_gives_the_same_pass_as_our_predictions(tsv, release, test_rows, tmp_path, suffix):
    result = tmp_path / f"GPT4o_ROSE_test.{suffix}"
    frame = _result_frame(tsv, test_rows)
    if suffix == "xlsx":
        frame.to_excel(result, index=False)
    else:
        frame.to_csv(result, sep="\t", index=False)
    ours = tmp_path / "ours.jsonl"
    ours.write_text("".join(json.dumps({"item_id": r["item_id"], "model": "GPT4o",
                                        "raw_text": None if _error(_answer(i, r)) else _answer(i, r),
                                        "error": _error(_answer(i, r))}) + "\n"
                            for i, r in enumerate(test_rows)), encoding="utf-8")
    outputs = {}
    for name, preds in (("vlm", result), ("ours", ours)):
        out = tmp_path / name
        assert rose_eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                               "--out_dir", str(out), "--no_analyses"]) == 0
        outputs[name] = out
    for file in ("per_item_eval.jsonl", "summary_by_subset.csv", "table1_row.txt", "table2_row.txt"):
        assert (outputs["vlm"] / file).read_bytes() == (outputs["ours"] / file).read_bytes(), file
    vlm = json.loads((outputs["vlm"] / "evaluation_summary.json").read_text())
    table1 = vlm["paper_metrics"]["table1"]
    assert table1 == json.loads((outputs["ours"] / "evaluation_summary.json").read_text())["paper_metrics"]["table1"]
    assert vlm["model"] == "GPT4o" and 0 < table1["Avg. PASS"] < 1
    assert vlm["overall"]["api_error_rate"] == sum(1 for i in range(25) if i % 5 == 4) / 25
    assert score_result_file(result) == table1  # the dataset class's own evaluate step


def test_result_file_reader_and_converter(tsv, test_rows, tmp_path, capsys):
    result = tmp_path / "m_ROSE_test.tsv"
    _result_frame(tsv, test_rows).to_csv(result, sep="\t", index=False)
    records = read_result_file(result, warn=print)
    assert "img_detail='high'" in capsys.readouterr().out
    assert [r.row["item_id"] for r in records] == [r["item_id"] for r in test_rows]
    assert records[4].row == {"item_id": test_rows[4]["item_id"], "raw_text": None,
                              "error": "VLMEvalKit: Failed to obtain answer via API.", "model": "m"}
    assert records[9].row["raw_text"] is None and records[9].row["error"] == \
        "VLMEvalKit: Failed to obtain answer via API.: Failed with all possible conversation turns."
    assert records[0].where == f"{result}:2"
    assert rose_export(["predictions", "vlmevalkit", str(result), "--output", str(tmp_path / "p.jsonl")]) == 0
    converted = read_rows(tmp_path / "p.jsonl")
    assert [(p["item_id"], p["raw_text"], p["error"]) for p in converted] == \
        [(r.row["item_id"], r.row["raw_text"], r.row["error"]) for r in records]
    manifest = json.loads((tmp_path / "p.manifest.json").read_text(encoding="utf-8"))
    failed = sum(1 for i in range(len(test_rows)) if i % 5 == 4)
    assert failed > 0 and manifest["counts"]["errors"] == failed
    assert manifest["counts"]["no_text"] == failed and manifest["notes"][0].startswith(f"{failed} request(s) failed")


def test_bad_result_files_are_one_line_errors(tsv, release, tmp_path, capsys, monkeypatch):
    def run(path: Path) -> str:
        code = rose_eval_main(["--dataset_root", str(release), "--predictions", str(path),
                               "--out_dir", str(tmp_path / "eval")])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and not (tmp_path / "eval").exists()
        return err[-1]

    assert "no 'prediction' column" in run(tsv)  # the dataset itself, not a result
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip")
    assert "unreadable .xlsx" in run(broken)
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    line = run(broken)
    assert "needs openpyxl" in line and "rose-toolkit[vlmevalkit]" in line and "PRED_FORMAT=tsv" in line


def test_export_refuses_bad_input_without_leaving_files(release, tmp_path, capsys):
    assert rose_export(["vlmevalkit", str(release), str(tmp_path / "ROSE_test.csv")]) == 2
    assert "must be a .tsv" in capsys.readouterr().err
    assert rose_export(["vlmevalkit", str(release), str(tmp_path / "ROSE_test.tsv"),
                        "--dataset_class", str(tmp_path / "rose.txt")]) == 2
    assert "must be written to a .py file" in capsys.readouterr().err
    assert rose_export(["vlmevalkit", str(tmp_path / "nope"), str(tmp_path / "ROSE_test.tsv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rose-export: error:") and "\n" not in err
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------- dataset class


def _stand_in_vlmeval(root: Path) -> None:
    """A stand-in for the two VLMEvalKit pieces the dataset class uses (VLMEvalKit needs
    torch, which the tests do not install): ``smp.LMUDataRoot``/``load`` and an
    ``ImageBaseDataset`` that loads the data and resolves image references as VLMEvalKit does."""

    class ImageBaseDataset:
        def __init__(self, dataset: str = "ROSE_test") -> None:
            self.dataset_name = dataset
            self.img_root = str(root / "images" / dataset)
            data = self.load_data(dataset)
            data["index"] = [str(x) for x in data["index"]]
            images = resolve_references(data)
            data["image"] = [images[i] for i in data["index"]]
            self.data = data

    smp = types.ModuleType("vlmeval.smp")
    smp.LMUDataRoot = lambda: str(root)
    smp.load = lambda path: pd.read_csv(path, sep="\t")
    image_base = types.ModuleType("vlmeval.dataset.image_base")
    image_base.ImageBaseDataset = ImageBaseDataset
    for name, module in (("vlmeval", types.ModuleType("vlmeval")), ("vlmeval.smp", smp),
                         ("vlmeval.dataset", types.ModuleType("vlmeval.dataset")),
                         ("vlmeval.dataset.image_base", image_base)):
        sys.modules[name] = module


def test_dataset_class_saves_png_bytes_asks_in_order_and_scores(tsv, release, test_rows, tmp_path, monkeypatch):
    for name in ("vlmeval", "vlmeval.smp", "vlmeval.dataset", "vlmeval.dataset.image_base"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    _stand_in_vlmeval(tsv.parent)
    spec = importlib.util.spec_from_file_location("rose_vlmeval_dataset", dataset_class_file(tsv))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dataset = module.RoseDataset("ROSE_test")
    assert module.RoseDataset.force_use_dataset_prompt is True
    for i, row in enumerate(test_rows):
        first, image, last = dataset.build_prompt(dataset.data.iloc[i])
        assert first == {"type": "text", "value": row["prompt_global"].strip()}
        assert last == {"type": "text", "value": row["prompt_local"].strip()}
        assert Path(image["value"]).read_bytes() == (release / row["image"]).read_bytes()
        with Image.open(image["value"]) as saved:
            assert saved.format == "PNG"
    result = tmp_path / "GPT4o_ROSE_test.xlsx"
    _result_frame(tsv, test_rows).to_excel(result, index=False)
    frame = dataset.evaluate(str(result))
    assert list(frame["subset"])[-1] == "Avg." and frame["PASS"].iloc[-1] == score_result_file(result)["Avg. PASS"]
    assert result.with_name("GPT4o_ROSE_test_rose_table1.csv").is_file()
    with pytest.raises(InputError):
        score_result_file(tsv)
