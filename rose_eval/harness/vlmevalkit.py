"""VLMEvalKit: the dataset TSV ROSE exports, and the result file it answers with.

``rose-export vlmevalkit RELEASE OUT.tsv`` writes one row per task row of a split, in
VLMEvalKit's dataset form: ``index``; ``image``, the released PNG's bytes in base64 at the
first row that shows it and, at every later row showing the same image, the ``index`` of
that first row (VLMEvalKit resolves an ``image`` of at most 64 characters as another
row's index); ``question`` (the joined prompt), ``answer`` (the formal answer),
``category`` (the subset), ``split``, ``item_id``, ``image_id``, ``prompt_global``,
``prompt_local`` and ``rose_row`` (the metadata row as JSON, so the dataset class can
score inside VLMEvalKit). The dataset class VLMEvalKit needs ships as text
(``vlmevalkit_dataset/rose_dataset.py.txt``, never imported here) and
``--dataset_class PATH`` writes it where VLMEvalKit imports it: it saves the PNG bytes as
they are (VLMEvalKit's default re-saves images as JPEG) and asks in the paper's order.

A VLMEvalKit result file (``<model>_<dataset>.xlsx``, or ``.tsv`` with
``PRED_FORMAT=tsv``) has the dataset columns minus ``image`` plus ``prediction``;
:func:`read_result_file` turns it into prediction rows for rose-eval (``.tsv`` with the
standard library, ``.xlsx`` with openpyxl from the ``vlmevalkit`` extra).
"""

from __future__ import annotations

import base64
import csv
import json
import sys
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from rose_eval.atomic import atomic_output, write_atomic
from rose_eval.harness.common import image_facts, table1, verdict
from rose_eval.harness.failures import harness_error
from rose_eval.io import InputError, Record
from rose_eval.runners.dataset import load_split
from rose_eval.runners.openai_compat import prompt_parts

TSV_COLUMNS: tuple[str, ...] = ("index", "image", "question", "answer", "category", "split",
                                "item_id", "image_id", "prompt_global", "prompt_local", "rose_row")
DATASET_PREFIX = "ROSE_"
DATASET_CLASS = "vlmevalkit_dataset/rose_dataset.py.txt"
WRAPPER_WARNING = (
    "VLMEvalKit does not record how its model wrapper sent the images; its API wrappers "
    "default to JPEG, img_size=512 and img_detail='low', which change ROSE (run them with "
    "img_size=-1, img_detail='high'; see docs/running.md, 'Run ROSE in your harness')")


# ---------------------------------------------------------------------------- export


def _tsv_rows(release: Path, split: str) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """TSV cells per task row, and facts about each image the first time it is written."""
    loaded = load_split(release, split)
    first_index: dict[Path, int] = {}
    for index, item in enumerate(loaded.items):
        row = item.row
        prompt_global, prompt_local = prompt_parts(row)
        if item.image_path in first_index:
            image_cell, facts = str(first_index[item.image_path]), {}
        else:
            data = item.image_path.read_bytes()
            first_index[item.image_path] = index
            image_cell, facts = base64.b64encode(data).decode("ascii"), image_facts(data)
        cells = [str(index), image_cell, "\n".join(p for p in (prompt_global, prompt_local) if p),
                 str(row.get("ground_truth_formal_answer") or ""), str(row.get("rose_subset") or ""),
                 split, item.item_id, str(row.get("image_id") or item.image_path.stem),
                 prompt_global, prompt_local, json.dumps(row, ensure_ascii=False, sort_keys=True)]
        yield cells, facts


def export_tsv(release: Path, out: Path, split: str = "test") -> dict[str, Any]:
    """Write the VLMEvalKit TSV of one split atomically; return its manifest."""
    out = out.expanduser().resolve()
    if out.suffix.lower() != ".tsv":
        raise InputError("the output must be a .tsv file", out,
                         f"name it like {DATASET_PREFIX}{split}.tsv (the dataset name VLMEvalKit sees)")
    images: list[dict[str, Any]] = []
    rows = 0
    with atomic_output(out, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(TSV_COLUMNS)
        for cells, facts in _tsv_rows(release, split):
            writer.writerow(cells)
            rows += 1
            if facts:
                images.append(facts)
    loaded_root = release.expanduser().resolve()
    return {
        "harness": {"name": "VLMEvalKit", "dataset_file": str(out), "dataset_name": out.stem,
                    "dataset_class": "RoseDataset (rose-export vlmevalkit --dataset_class PATH)"},
        "dataset": {"root": str(loaded_root), "split": split, "rows": rows},
        "sent": {"images": {"count": len(images),
                            "formats": sorted({f["format"] for f in images}),
                            "encoding": "the released PNG bytes, base64; repeated images "
                                        "refer to their first row's index",
                            "sha256": {f["sha256"]: [f["width"], f["height"]] for f in images}},
                 "prompt_order": "the dataset class asks prompt_global, image, prompt_local",
                 "warning": WRAPPER_WARNING},
    }


def dataset_class_source() -> str:
    """The VLMEvalKit dataset class, as the Python source to copy into VLMEvalKit."""
    return resources.files("rose_eval.harness").joinpath(DATASET_CLASS).read_text(encoding="utf-8")


def dataset_class_target(path: Path) -> Path:
    """Where ``--dataset_class`` writes the class: a .py file (checked before any writing)."""
    target = path.expanduser().resolve()
    if target.suffix != ".py" or target.is_dir():
        raise InputError("the dataset class must be written to a .py file", target,
                         "e.g. --dataset_class VLMEvalKit/vlmeval/dataset/rose.py")
    return target


def write_dataset_class(target: Path) -> Path:
    """Write the dataset class to ``target`` (see :func:`dataset_class_target`)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, dataset_class_source())
    return target


# ---------------------------------------------------------------------------- results


def _tsv_table(path: Path) -> Iterator[tuple[str, list[Any]]]:
    csv.field_size_limit(sys.maxsize)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            first_line = 1  # a quoted cell may span lines: name the line the row starts on
            for cells in reader:
                yield f"{path}:{first_line}", cells
                first_line = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise InputError(f"undecodable bytes (not UTF-8) at byte {exc.start}", path,
                         "save the result file as UTF-8") from None
    except csv.Error as exc:
        raise InputError(f"unreadable TSV: {exc}", path, "pass the file VLMEvalKit wrote") from None


def _xlsx_table(path: Path) -> Iterator[tuple[str, list[Any]]]:
    try:
        import openpyxl
    except ModuleNotFoundError:
        raise InputError("reading .xlsx needs openpyxl", path,
                         "pip install 'rose-toolkit[vlmevalkit]', or run VLMEvalKit with "
                         "PRED_FORMAT=tsv") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many types for a bad file
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"unreadable .xlsx: {first}", path, "pass the file VLMEvalKit wrote") from None
    try:
        for number, cells in enumerate(book.worksheets[0].iter_rows(values_only=True), start=1):
            yield f"{path}:row {number}", list(cells)
    finally:
        book.close()


def _model_from_name(path: Path) -> str:
    stem = path.stem
    at = stem.rfind("_" + DATASET_PREFIX)
    return stem[:at] if at > 0 else ""


def _result_rows(path: Path, needed: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, {column: cell}) for each non-empty row of a result file with ``needed`` columns."""
    if not path.is_file():
        raise InputError("predictions file not found", path, "check the predictions path")
    table = _xlsx_table(path) if path.suffix.lower() == ".xlsx" else _tsv_table(path)
    where, header = next(table, (str(path), []))
    names = [str(h).strip() if h is not None else "" for h in header]
    for column in needed:
        if column not in names:
            raise InputError(f"no '{column}' column in the header", where,
                             "pass VLMEvalKit's result file for a dataset exported by "
                             "'rose-export vlmevalkit' (it keeps item_id and adds prediction)")
    for where, cells in table:
        if any(c not in (None, "") for c in cells):
            values = (list(cells) + [None] * len(names))[:len(names)]
            yield where, dict(zip(names, values, strict=True))


def _answer(prediction: Any) -> tuple[str | None, str | None]:
    """(raw_text, error) of a prediction cell; VLMEvalKit's failure message is an error
    (``raw_text`` null), whatever its wrapper appended to it."""
    text = "" if prediction is None else str(prediction)
    error = harness_error("vlmevalkit", text)
    return (None, error) if error else (text, None)


def read_result_file(path: Path, warn: Callable[[str], None] | None = None) -> list[Record]:
    """Prediction rows ``{item_id, model, raw_text, error}`` from a VLMEvalKit result file."""
    model = _model_from_name(path)
    records: list[Record] = []
    for where, cells in _result_rows(path, ("item_id", "prediction")):
        item_id = cells["item_id"]
        raw_text, error = _answer(cells["prediction"])
        row: dict[str, Any] = {"item_id": None if item_id in (None, "") else str(item_id),
                               "raw_text": raw_text, "error": error}
        if model:
            row["model"] = model
        records.append(Record(where, row))
    (warn or _stderr)(f"rose-eval: warning: {WRAPPER_WARNING}")
    return records


def score_result_file(path: Path) -> dict[str, Any]:
    """rose-eval's Table 1 of a result file, scored against its own ``rose_row`` column.

    What the dataset class's ``evaluate`` reports inside VLMEvalKit; ``rose-eval`` with the
    release folder remains the reference (it also writes the official files).
    """
    rows = []
    for where, cells in _result_rows(path, ("rose_row", "prediction")):
        try:
            row = json.loads(str(cells["rose_row"]))
        except json.JSONDecodeError:
            raise InputError("rose_row is not JSON", where, "re-export with 'rose-export vlmevalkit'") from None
        rows.append(verdict(row, *_answer(cells["prediction"])).as_eval_row())
    return table1(rows)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)
