"""Reading release metadata and predictions, with precise one-line errors.

Everything structural (unreadable files, bad JSON, missing or repeated ids, rows the
scorer cannot read) raises :class:`InputError`, which the CLI prints as one line.
Answer-level faults (odd ``raw_text``, unknown ids) are not errors here.

A split's metadata rows are found and read by :mod:`rose_eval.split_rows` (JSONL or
Parquet); this module holds the error and record types, the JSONL and predictions readers.
Files are streamed and each row keeps only the fields the evaluator reads
(:data:`METADATA_FIELDS`, :data:`PREDICTION_FIELDS`): a release row's prompts and
descriptive fields are dropped as soon as the line is parsed, which keeps a full test
split's memory small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from rose_eval.jsonl import NOT_OBJECT, UNDECODABLE, UNREADABLE, JsonlFault, jsonl_objects

# Metadata fields read by scoring, the per-item records, coverage and the analyses.
METADATA_FIELDS = frozenset({
    "item_id", "scene_id", "image_id", "split", "rose_subset", "primitive_type",
    "task_template", "task_mode", "region_type", "region_params", "region_case", "cue_type",
    "difficulty", "rows", "cols", "ground_truth_count", "ground_truth_clicks",
    "ground_truth_formal_answer", "all_target_cells", "target_cells", "region_target_cells",
    "source_item_id", "source_click_item_id", "control",
})
PREDICTION_FIELDS = frozenset({"item_id", "model", "raw_text", "error", "finish_reason", "epoch"})
# Harness hook: a VLMEvalKit result file is read as prediction rows (rose_eval.harness).
RESULT_FILE_SUFFIXES = (".xlsx", ".tsv")
JSONL_FIX = {
    UNREADABLE: "check the file's permissions",
    UNDECODABLE: "re-save the file as UTF-8",
    NOT_OBJECT: "write one JSON object per line",
}


class InputError(Exception):
    """A structural input fault: what went wrong, where (file[:line]) and how to fix it."""

    def __init__(self, what: str, where: str | Path, fix: str) -> None:
        super().__init__(what)
        self.what = what
        self.where = str(where)
        self.fix = fix

    def one_line(self) -> str:
        text = f"{self.what} ({self.where}); {self.fix}"
        return " ".join(text.split())


class Record(NamedTuple):
    """One JSON object from an input file, with where it came from."""

    where: str  # "file:line" (JSONL) or "file:row N" (Parquet)
    row: dict[str, Any]


def read_jsonl(path: Path, *, role: str, fields: frozenset[str] | None = None) -> list[Record]:
    """Every non-blank line of a JSONL file as a JSON object, keeping ``fields`` (None: all).

    ``role`` names the file in errors ("metadata", "predictions").
    """
    if not path.is_file():
        raise InputError(f"{role} file not found", path, f"check the {role} path")
    records: list[Record] = []
    wanted = None if fields is None else tuple(fields)
    try:
        for line, row in jsonl_objects(path):
            if wanted is not None:
                row = {key: row[key] for key in wanted if key in row}
            records.append(Record(f"{path}:{line}", row))
    except JsonlFault as fault:
        fix = JSONL_FIX.get(fault.kind, "write one JSON object per line")
        raise InputError(fault.what, fault.where, fix) from None
    return records


def drop_nulls(value: Any) -> Any:
    """Remove null-valued keys from dicts, at any depth (Parquet's struct padding)."""
    if isinstance(value, dict):
        return {key: drop_nulls(child) for key, child in value.items() if child is not None}
    if isinstance(value, list):
        return [drop_nulls(child) for child in value]
    return value


def read_predictions(path: Path) -> list[Record]:
    """Prediction rows (item_id, model, raw_text, error) of a predictions JSONL file, or of a
    VLMEvalKit result file (.xlsx/.tsv; its reader is loaded only for such a file)."""
    if path.suffix.lower() in RESULT_FILE_SUFFIXES:
        from rose_eval.harness.vlmevalkit import read_result_file

        return read_result_file(path)
    return read_jsonl(path, role="predictions", fields=PREDICTION_FIELDS)


def rows_of_split(records: Iterable[Record], split: str) -> list[Record]:
    """Rows whose 'split' equals the requested split (rows without one are kept)."""
    return [rec for rec in records if str(rec.row.get("split", split)) == split]


def index_by_item_id(records: Iterable[Record], *, role: str) -> dict[str, Record]:
    """Records by str(item_id); a missing or repeated id is an InputError."""
    index: dict[str, Record] = {}
    for rec in records:
        value = rec.row.get("item_id")
        if value is None:
            raise InputError(f"{role} row without item_id", rec.where,
                             "give every row an item_id")
        key = str(value)
        first = index.setdefault(key, rec)
        if first is not rec:
            place = first.where.rsplit(":", 1)[1]
            place = place if place.startswith("row") else f"line {place}"
            raise InputError(f"duplicate item_id {key!r}, first at {place}", rec.where,
                             f"keep one {role} row per item_id")
    return index


def run_model(rows: Iterable[Mapping[str, Any]], override: str, source: Path) -> str:
    """The run's model name: --model, else the one name the predictions give, else the file stem.

    Names are compared stripped; blank and missing names do not count. Two or more
    different names are an InputError.
    """
    if override.strip():
        return override.strip()
    names = {name for name in (_model_name(row) for row in rows) if name}
    if len(names) > 1:
        shown = ", ".join(sorted(names)[:5])
        raise InputError(f"several model names in one predictions file: {shown}", source,
                         "pass --model NAME to label the run")
    return names.pop() if names else source.stem


def _model_name(row: Mapping[str, Any]) -> str:
    value = row.get("model")
    return "" if value is None else str(value).strip()
