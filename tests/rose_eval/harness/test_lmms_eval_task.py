"""The lmms-eval task folder and its functions, on a real generated release.

lmms-eval needs torch and is not installed by the test set-up, so its own loader runs only
where lmms-eval is importable (the one declared optional-package skip); everywhere else
the YAML is loaded the way lmms-eval loads it (``!function utils.X`` resolved against the
folder's utils.py, ``include`` merged) and the functions run on the release's Parquet docs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pytest
import yaml
from PIL import Image

from rose_eval.harness import lmms_eval_task as lmms
from rose_eval.harness.common import table1
from rose_eval.io import InputError
from rose_eval.score import score_item
from rose_eval.vocab import SUBSET_ORDER
from tests.rose_eval.harness.conftest import read_rows


class _Function:
    def __init__(self, dotted: str) -> None:
        self.dotted = dotted


class _TaskLoader(yaml.SafeLoader):
    """YAML with lmms-eval's ``!function`` tag kept as a name to resolve."""


_TaskLoader.add_constructor("!function", lambda loader, node: _Function(loader.construct_scalar(node)))


def load_task_yaml(path: Path) -> dict[str, Any]:
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_TaskLoader)  # noqa: S506 - SafeLoader subclass
    if "include" in config:
        base = load_task_yaml(path.parent / config.pop("include"))
        config = {**base, **config}
    return config


def resolve(function: _Function, folder: Path) -> Any:
    module_name, name = function.dotted.rsplit(".", 1)
    spec = importlib.util.spec_from_file_location(module_name, folder / f"{module_name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.fixture(scope="module")
def folder(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lmms") / "tasks"
    written = lmms.write_task_folder(release, out)
    assert set(written) == {"_default_template_yaml", "rose.yaml", "rose_test.yaml", "rose_dev.yaml", "utils.py"}
    return out


@pytest.fixture(scope="module")
def docs(folder, tmp_path_factory) -> list[dict[str, Any]]:
    """The test split's docs as lmms-eval gets them: datasets' parquet loader on data_files."""
    config = load_task_yaml(folder / "rose_test.yaml")
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   cache_dir=str(tmp_path_factory.mktemp("hf_cache")))
    return [dict(doc) for doc in loaded[config["test_split"]]]


@pytest.mark.optional_dependency("lmms-eval", module="lmms_eval")  # needs torch (tests/skip_policy.py)
def test_lmms_eval_loads_the_task_folder(folder):
    """Optional-package skip: lmms-eval (torch) is not part of the test set-up."""
    import lmms_eval.tasks as tasks
    manager = tasks.TaskManager(include_path=str(folder))
    assert {"rose_test", "rose_dev"} <= set(manager.all_subtasks) and "rose" in manager.all_groups
    task = manager.load_task_or_group(["rose_test"])["rose_test"]
    assert len(task.test_docs()) == 25
    assert [m["metric"] for m in task.config.metric_list] == list(lmms.METRICS)


def test_yaml_points_at_the_release_and_names_existing_functions(folder, release):
    for split in ("test", "dev"):
        config = load_task_yaml(folder / f"rose_{split}.yaml")
        assert config["task"] == f"rose_{split}" and config["test_split"] == split
        assert config["dataset_path"] == "parquet" and config["output_type"] == "generate_until"
        data_file = Path(config["dataset_kwargs"]["data_files"][split])
        assert data_file == (release / "data" / f"{split}.parquet").resolve() and data_file.is_file()
        assert [m["metric"] for m in config["metric_list"]] == list(lmms.METRICS)
        functions = [v for v in config.values() if isinstance(v, _Function)]
        functions += [m["aggregation"] for m in config["metric_list"]]
        assert len(functions) == 4 + len(lmms.METRICS)  # doc_to_visual, _text, _messages, process_results
        for function in functions:
            assert resolve(function, folder) is getattr(lmms, function.dotted.split(".")[1])
    group = yaml.safe_load((folder / "rose.yaml").read_text(encoding="utf-8"))
    assert group == {"group": "rose", "task": ["rose_test", "rose_dev"]}
    assert "__ROSE" not in "".join(p.read_text(encoding="utf-8") for p in folder.iterdir() if p.is_file())


def test_visuals_are_the_released_images_at_full_size(docs, release, test_rows):
    rows = {r["item_id"]: r for r in test_rows}
    assert sorted(d["item_id"] for d in docs) == sorted(rows)
    for doc in docs:
        visuals = lmms.doc_to_visual(doc)
        assert len(visuals) == 1 and isinstance(visuals[0], Image.Image)
        with Image.open(release / rows[doc["item_id"]]["image"]) as original:
            assert visuals[0].size == original.size
            assert np.array_equal(np.asarray(visuals[0]), np.asarray(original))


def test_messages_keep_the_papers_order(docs, test_rows):
    rows = {r["item_id"]: r for r in test_rows}
    for doc in docs:
        row = rows[doc["item_id"]]
        (message,) = lmms.doc_to_messages(doc)
        first, image, last = message["content"]
        assert message["role"] == "user"
        assert first == {"type": "text", "text": row["prompt_global"].strip()}
        assert image["type"] == "image" and image["url"].size == lmms.doc_to_visual(doc)[0].size
        assert last == {"type": "text", "text": row["prompt_local"].strip()}
        assert lmms.doc_to_text(doc) == row["prompt_global"].strip() + "\n" + row["prompt_local"].strip()
    (message,) = lmms.doc_to_messages(docs[0], {"prompt_order": "image_first"})  # not an option
    assert [p["type"] for p in message["content"]] == ["text", "image", "text"]


def _answers(row: dict[str, Any]) -> dict[str, str]:
    gold = row["ground_truth_formal_answer"]
    wrong = f"COUNT({row['ground_truth_count'] + 1})" if row["task_mode"] == "COUNT" else \
        gold.replace("DONE", "CLICK(R1,C1); DONE").replace("SUBMIT(", "CLICK(R99,C99); SUBMIT(")
    return {"right": gold, "wrong": wrong, "malformed": "The odd ones: " + gold.lower()}


def test_process_results_equals_rose_eval_scorer(docs, test_rows):
    rows = {r["item_id"]: r for r in test_rows}
    for doc in docs:
        row = rows[doc["item_id"]]
        for kind, answer in _answers(row).items():
            result = lmms.process_results(doc, [answer])
            assert set(result) == set(lmms.METRICS)
            record = result["pass"]
            expected = score_item(row, {"raw_text": answer})
            assert record["pass"] == expected["pass"] and record["format_valid"] == expected["format_valid"]
            assert record["unified_soft"] == expected["unified_soft"]
            assert record["parse_error"] == expected["parse_error"]
            assert record["item_id"] == row["item_id"] and record["raw_text"] == answer
            assert record["pass"] == (kind == "right")
            assert record["format_valid"] == (kind != "malformed")


def test_aggregations_are_table1(docs):
    records, passed = [], {s: [] for s in SUBSET_ORDER}
    for i, doc in enumerate(sorted(docs, key=lambda d: d["item_id"])):
        right = i % 3 != 0
        answer = doc["ground_truth_formal_answer"] if right else "nonsense"
        records.append(lmms.process_results(doc, [answer])["pass"])
        passed[doc["rose_subset"]].append(right)
    shares = {s: sum(v) / len(v) for s, v in passed.items()}
    for subset in SUBSET_ORDER:
        short = subset.removeprefix("ROSE-")
        assert getattr(lmms, f"aggregate_pass_{short}")(records) == shares[subset]
    assert lmms.aggregate_pass(records) == sum(shares.values()) / 5
    assert lmms.aggregate_valid(records) == table1(records)["VALID"] < 1
    assert lmms.aggregate_soft(records) == table1(records)["Avg. SOFT"]


def test_task_folder_needs_the_releases_parquet(tmp_path):
    (tmp_path / "release").mkdir()
    with pytest.raises(InputError, match=r"no data/dev.parquet, data/test.parquet") as caught:
        lmms.write_task_folder(tmp_path / "release", tmp_path / "tasks")
    assert "export.parquet=true" in caught.value.one_line()
    assert not (tmp_path / "tasks").exists()


def test_written_files_are_the_packaged_ones_with_the_path_filled(folder, release):
    packaged = lmms.task_folder_files()
    data_dir = (release / "data").resolve().as_posix()
    for name, text in packaged.items():
        assert (folder / name).read_text(encoding="utf-8") == text.replace(lmms.DATA_PLACEHOLDER, data_dir)
    assert json.dumps(sorted(packaged))  # names are plain strings
    assert read_rows(release / "metadata_dev.jsonl")  # the dev split the rose_dev task points at exists
