"""The public evaluator's eight output files: their byte formats and the folder that holds them.

Byte formats: JSON with ``ensure_ascii=False, indent=2`` and no final newline; JSONL one
``ensure_ascii=False`` object per line; CSV with a UTF-8 byte order mark and the csv
module's default dialect; LaTeX rows ending in a newline. Lone surrogates (which the
public evaluator cannot encode and crashes on) are written as JSON escapes. The per-item
records are streamed to disk, each serialised once for both JSONL files; the folder is
replaced as a whole (:mod:`rose_eval.report.outdir`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rose_eval.percent import percent_text
from rose_eval.report.outdir import replace_directory
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

TABLE1_AVERAGES = ("Avg. PASS", "Avg. SOFT", "VALID")
TABLE2_KEYS = (*(TEMPLATE_SHORT[t] for t in TEMPLATE_ORDER), "C-F1", "R-OK", "Avg. PASS")
UNENCODABLE = "backslashreplace"  # a lone surrogate becomes its JSON escape text
CSV_BOM = b"\xef\xbb\xbf"

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
_RECORD_LINE = json.JSONEncoder(ensure_ascii=False).encode


def display_model_name(model: str, override: str) -> str:
    """--display_name, else the paper's display name for a known model id, else the id."""
    return override.strip() or MODEL_DISPLAY.get(model, model)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", UNENCODABLE)


def json_bytes(obj: Any) -> bytes:
    """Indented JSON document, no final newline."""
    return _utf8(json.dumps(obj, ensure_ascii=False, indent=2))


def csv_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """CSV with a byte order mark; columns are the union of keys in first-seen order."""
    if not rows:
        return b""
    columns = list({key: None for row in rows for key in row})
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return CSV_BOM + _utf8(buffer.getvalue())


def latex_row(model_name: str, values: Iterable[float | None], digits: int) -> str:
    """``<name>\\n& v1 & v2 ... \\\\``: rates as percentages with ``digits`` decimals."""
    return model_name + "\n& " + " & ".join(percent_text(v, digits) for v in values) + " \\\\"


def table1_row(model_name: str, table1: Mapping[str, Any], digits: int) -> str:
    """Table 1: PASS and SOFT per subset, then Avg. PASS, Avg. SOFT, VALID."""
    values: list[float | None] = []
    for subset in SUBSET_ORDER:
        record = table1["by_subset"][subset]
        values += [record.get("PASS"), record.get("SOFT")]
    return latex_row(model_name, [*values, *(table1.get(k) for k in TABLE1_AVERAGES)], digits)


def table2_row(model_name: str, table2: Mapping[str, Any], digits: int) -> str:
    """Table 2: five template PASS values, C-F1, R-OK, Avg. PASS."""
    return latex_row(model_name, (table2.get(k) for k in TABLE2_KEYS), digits)


def summary_csv_rows(summary: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The three CSV files' rows, by file name."""
    coverage = summary["coverage"]
    return {
        SUBSET_CSV: [{"rose_subset": s, "subset_short": SUBSET_SHORT[s],
                      **summary["by_subset"].get(s, {"n": 0})} for s in SUBSET_ORDER],
        TEMPLATE_CSV: [{"task_template": t, "task_short": TEMPLATE_SHORT[t],
                        **summary["by_template"].get(t, {"n": 0})} for t in TEMPLATE_ORDER],
        COVERAGE_CSV: [*({"group": "subset", **row} for row in coverage["by_subset"]),
                       *({"group": "template", **row} for row in coverage["by_template"])],
    }


def table_files(summary: Mapping[str, Any], digits: int) -> dict[str, bytes]:
    """The three CSV files and the two LaTeX rows, by name."""
    name, paper = summary["display_name"], summary["paper_metrics"]
    files = {file: csv_bytes(rows) for file, rows in summary_csv_rows(summary).items()}
    files[TABLE1] = _utf8(table1_row(name, paper["table1"], digits) + "\n")
    files[TABLE2] = _utf8(table2_row(name, paper["table2"], digits) + "\n")
    return files


def write_item_files(folder: Path, eval_rows: Iterable[Mapping[str, Any]]) -> None:
    """per_item_eval.jsonl (every record) and error_cases.jsonl (records that did not pass)."""
    def open_jsonl(name: str):
        return (folder / name).open("w", encoding="utf-8", errors=UNENCODABLE, newline="")

    with open_jsonl(PER_ITEM) as every, open_jsonl(ERROR_CASES) as failed:
        for row in eval_rows:
            line = _RECORD_LINE(row) + "\n"
            every.write(line)
            if row.get("pass") != 1:
                failed.write(line)


def write_outputs(out_dir: Path, eval_rows: Sequence[Mapping[str, Any]],
                  summary: Mapping[str, Any], digits: int, *,
                  before_summary: Callable[[], None] | None = None,
                  extra_files: Mapping[str, bytes] | None = None) -> None:
    """Write the eight files as one set into ``out_dir`` (replaced whole; see outdir).

    ``before_summary`` runs once the other seven files are written, just before the summary
    is (rose-eval completes the summary's analyses there). ``extra_files`` (name -> bytes,
    e.g. provenance.json) are written beside them, in the same swap.
    """
    def write(folder: Path) -> None:
        write_item_files(folder, eval_rows)
        for file_name, data in table_files(summary, digits).items():
            (folder / file_name).write_bytes(data)
        if before_summary is not None:
            before_summary()
        (folder / SUMMARY).write_bytes(json_bytes(summary))
        for file_name, data in (extra_files or {}).items():
            (folder / file_name).write_bytes(data)

    replace_directory(out_dir, write)
