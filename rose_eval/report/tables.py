"""The public evaluator's output files, rendered to bytes (pure) and written atomically.

Byte formats: JSON with ``ensure_ascii=False, indent=2`` and no final newline; JSONL one
``ensure_ascii=False`` object per line; CSV with a UTF-8 BOM (``utf-8-sig``) and the
csv module's default dialect; LaTeX rows ending in a newline. Lone surrogates (which the
public evaluator cannot encode and crashes on) are written as JSON escapes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rose_eval.vocab import SUBSET_ORDER, SUBSET_SHORT, TEMPLATE_ORDER, TEMPLATE_SHORT

PER_ITEM = "per_item_eval.jsonl"
ERROR_CASES = "error_cases.jsonl"
SUMMARY = "evaluation_summary.json"
SUBSET_CSV = "summary_by_subset.csv"
TEMPLATE_CSV = "summary_by_template.csv"
COVERAGE_CSV = "coverage_by_subset_template.csv"
TABLE1 = "table1_row.txt"
TABLE2 = "table2_row.txt"
PARITY_FILES = (PER_ITEM, ERROR_CASES, SUMMARY, SUBSET_CSV, TEMPLATE_CSV, COVERAGE_CSV,
                TABLE1, TABLE2)

TABLE2_KEYS = ("G-Cnt", "L-Cnt", "L-Clk", "V-Clk", "Excl. C+S", "C-F1", "R-OK", "Avg. PASS")

MODEL_DISPLAY = {
    "qwen3-vl-flash": "Qwen3-VL-Flash",
    "qwen3-vl-plus": "Qwen3-VL-Plus",
    "qwen3.6-plus": "Qwen3.6-Plus",
    "claude46sonnet": "Claude-Sonnet-4.6",
    "claude-sonnet-4.6": "Claude-Sonnet-4.6",
    "claude48opus": "Claude-Opus-4.8",
    "claude-opus-4.8": "Claude-Opus-4.8",
    "glm-4.6v": "GLM-4.6V",
    "glm46v": "GLM-4.6V",
    "glm-5v-turbo": "GLM-5V-Turbo",
    "glm5vturbo": "GLM-5V-Turbo",
    "gemini31pro": "Gemini-3.1-Pro",
    "gemini-3.1-pro": "Gemini-3.1-Pro",
    "gpt55none": "GPT-5.5",
    "gpt-5.5": "GPT-5.5",
    "human": "Human",
}


def display_model_name(model: str, override: str) -> str:
    """--display_name, else the paper's display name for a known model id, else the id."""
    return override.strip() or MODEL_DISPLAY.get(model, model)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def json_bytes(obj: Any) -> bytes:
    """Indented JSON document, no final newline."""
    return _utf8(json.dumps(obj, ensure_ascii=False, indent=2))


def jsonl_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """One JSON object per line."""
    return _utf8("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def csv_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """CSV with a BOM; columns are the union of keys in first-seen order."""
    if not rows:
        return b""
    fields: dict[str, None] = {}
    for row in rows:
        fields.update(dict.fromkeys(row))
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(fields))
    writer.writeheader()
    writer.writerows(rows)
    return b"\xef\xbb\xbf" + _utf8(buffer.getvalue())


def fmt_pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage with ``digits`` decimals; '--' when absent."""
    return "--" if value is None else f"{100.0 * value:.{digits}f}"


def table1_row(model_name: str, table1: Mapping[str, Any], digits: int) -> str:
    """The LaTeX Table 1 row: PASS/SOFT per subset, then Avg. PASS, Avg. SOFT, VALID."""
    cells: list[str] = []
    for subset in SUBSET_ORDER:
        record = table1["by_subset"][subset]
        cells += [fmt_pct(record.get("PASS"), digits), fmt_pct(record.get("SOFT"), digits)]
    cells += [fmt_pct(table1.get(key), digits) for key in ("Avg. PASS", "Avg. SOFT", "VALID")]
    return model_name + "\n& " + " & ".join(cells) + " \\\\"


def table2_row(model_name: str, table2: Mapping[str, Any], digits: int) -> str:
    """The LaTeX Table 2 row: five template PASS values, C-F1, R-OK, Avg. PASS."""
    cells = [fmt_pct(table2.get(key), digits) for key in TABLE2_KEYS]
    return model_name + "\n& " + " & ".join(cells) + " \\\\"


def subset_csv_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {"rose_subset": s, "subset_short": SUBSET_SHORT[s], **summary["by_subset"].get(s, {"n": 0})}
        for s in SUBSET_ORDER
    ]


def template_csv_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {"task_template": t, "task_short": TEMPLATE_SHORT[t],
         **summary["by_template"].get(t, {"n": 0})}
        for t in TEMPLATE_ORDER
    ]


def coverage_csv_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    coverage = summary["coverage"]
    return ([{"group": "subset", **row} for row in coverage["by_subset"]]
            + [{"group": "template", **row} for row in coverage["by_template"]])


def render_outputs(eval_rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], *,
                   digits: int) -> dict[str, bytes]:
    """Every parity output file name -> its bytes."""
    name = summary["display_name"]
    paper = summary["paper_metrics"]
    return {
        PER_ITEM: jsonl_bytes(eval_rows),
        ERROR_CASES: jsonl_bytes(row for row in eval_rows if row.get("pass") != 1),
        SUMMARY: json_bytes(summary),
        SUBSET_CSV: csv_bytes(subset_csv_rows(summary)),
        TEMPLATE_CSV: csv_bytes(template_csv_rows(summary)),
        COVERAGE_CSV: csv_bytes(coverage_csv_rows(summary)),
        TABLE1: _utf8(table1_row(name, paper["table1"], digits) + "\n"),
        TABLE2: _utf8(table2_row(name, paper["table2"], digits) + "\n"),
    }


def write_outputs_atomically(out_dir: Path, files: Mapping[str, bytes]) -> None:
    """Write files into a temporary sibling directory, then move them into ``out_dir``.

    A new ``out_dir`` appears by one rename; into an existing one each file is replaced
    atomically and other files there are left alone. A failure leaves no partial set.
    """
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = out_dir.parent / f".{out_dir.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
    staging.mkdir()
    try:
        for file_name, data in files.items():
            (staging / file_name).write_bytes(data)
        if not out_dir.exists():
            os.rename(staging, out_dir)
            return
        if not out_dir.is_dir():
            raise NotADirectoryError(f"{out_dir} exists and is not a directory")
        for file_name in files:
            os.replace(staging / file_name, out_dir / file_name)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
