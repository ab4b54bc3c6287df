"""Reading release metadata and predictions, with precise one-line errors.

Everything structural (unreadable files, bad JSON, missing or repeated ids, rows the
scorer cannot read) raises :class:`InputError`, which the CLI prints as one line.
Answer-level faults (odd ``raw_text``, unknown ids) are not errors here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line ends Python's text mode recognises
_BOM = b"\xef\xbb\xbf"


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


@dataclass(frozen=True)
class Record:
    """One JSON object from an input file, with where it came from."""

    where: str  # "file:line" (JSONL) or "file:row N" (Parquet)
    row: dict[str, Any]


def _decode(path: Path, data: bytes) -> str:
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", "replace")
        line = len(_NEWLINE.findall(before)) + 1
        line_start = max(data.rfind(b"\n", 0, exc.start), data.rfind(b"\r", 0, exc.start)) + 1
        raise InputError(
            f"undecodable bytes (not UTF-8) at byte {exc.start - line_start + 1} of the line",
            f"{path}:{line}",
            "re-save the file as UTF-8",
        ) from None


def read_jsonl(path: Path, *, role: str) -> list[Record]:
    """Every non-blank line of a JSONL file as a JSON object (role names the file in errors)."""
    if not path.is_file():
        raise InputError(f"{role} file not found", path, f"check the {role} path")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {role} file: {exc.strerror}", path,
                         "check the file's permissions") from None
    records: list[Record] = []
    for line_no, line in enumerate(_NEWLINE.split(_decode(path, data)), start=1):
        line = line.strip()
        if not line:
            continue
        where = f"{path}:{line_no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg} at column {exc.colno}", where,
                             "write one JSON object per line") from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", where,
                             "write one flat JSON object per line") from None
        if not isinstance(row, dict):
            raise InputError(f"expected a JSON object, got {_json_type(row)}", where,
                             "write one JSON object per line") from None
        records.append(Record(where, row))
    return records


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def drop_nulls(value: Any) -> Any:
    """Remove null-valued keys from dicts, at any depth (Parquet's struct padding)."""
    if isinstance(value, dict):
        return {key: drop_nulls(child) for key, child in value.items() if child is not None}
    if isinstance(value, list):
        return [drop_nulls(child) for child in value]
    return value


PARQUET_DROPPED_COLUMNS = ("image",)


def read_parquet(path: Path) -> list[Record]:
    """Rows of a Parquet metadata export, normalised to the JSONL row form."""
    if not path.is_file():
        raise InputError("metadata file not found", path, "check the metadata path")
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises many types for a damaged file
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"unreadable Parquet file: {first}", path,
                         "re-export the release or pass its metadata JSONL") from None
    keep = [name for name in table.column_names if name not in PARQUET_DROPPED_COLUMNS]
    rows = table.select(keep).to_pylist()
    return [Record(f"{path}:row {index}", drop_nulls(row)) for index, row in enumerate(rows, 1)]


def read_metadata(path: Path) -> list[Record]:
    """Metadata rows from a JSONL file or a Parquet export (chosen by suffix)."""
    if path.suffix.lower() == ".parquet":
        return read_parquet(path)
    return read_jsonl(path, role="metadata")


def resolve_metadata_path(*, dataset_root: Path | None, metadata: Path | None,
                          split: str) -> Path:
    """--metadata FILE, else DATASET_ROOT/metadata_{split}.jsonl, else its data/{split}.parquet."""
    if metadata is not None:
        return metadata.expanduser().resolve()
    if dataset_root is None:
        raise InputError("no metadata given", "command line",
                         "pass --dataset_root RELEASE_DIR or --metadata FILE "
                         "(rose-eval never downloads)")
    root = dataset_root.expanduser().resolve()
    jsonl = root / f"metadata_{split}.jsonl"
    parquet = root / "data" / f"{split}.parquet"
    if jsonl.exists() or not parquet.exists():
        if not jsonl.exists():
            raise InputError(f"missing release metadata metadata_{split}.jsonl", jsonl,
                             f"point --dataset_root at a release folder holding "
                             f"metadata_{split}.jsonl (or data/{split}.parquet), "
                             "or pass --metadata FILE")
        return jsonl
    return parquet


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
        if key in index:
            first = index[key].where.rsplit(":", 1)[1]
            first = first if first.startswith("row") else f"line {first}"
            raise InputError(f"duplicate item_id {key!r}, first at {first}", rec.where,
                             f"keep one {role} row per item_id")
        index[key] = rec
    return index


def infer_model(predictions: Iterable[Mapping[str, Any]], override: str, source: Path) -> str:
    """--model, else the one model name in the predictions, else the file's stem."""
    if override.strip():
        return override.strip()
    models = {
        str(row.get("model")).strip()
        for row in predictions
        if row.get("model") is not None and str(row.get("model")).strip()
    }
    if len(models) > 1:
        shown = ", ".join(sorted(models)[:5])
        raise InputError(f"several model names in one predictions file: {shown}", source,
                         "pass --model NAME to label the run")
    return next(iter(models)) if models else source.stem
