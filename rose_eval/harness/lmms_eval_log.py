"""lmms-eval ``--log_samples`` output of the rose tasks -> the predictions format.

lmms-eval writes one ``<date>_samples_<task>.jsonl`` per task under
``<output_path>/<model>/``, one JSON object per doc: ``doc_id``, ``target``,
``filtered_resps`` (and ``resps`` when they differ), hashes, the prompt as ``input`` and
every metric value ``process_results`` returned. Older versions also keep the ``doc``
(without its image columns). ROSE's metric values carry the item id and the answer text,
so the item id is read from them (or from ``doc``), the text from them or from
``filtered_resps``. A ``<date>_results.json`` beside the samples gives the model and
lmms-eval's settings for the manifest.

lmms-eval (from v0.7) strips ``<think>`` blocks before scoring unless
``--reasoning_tags none``; the raw output stays in ``resps``, and the predictions take it,
so rose-eval judges the answer as rose-run would (the manifest counts the changed ones).
lmms-eval's API wrappers (0.7.x) answer ``[LMMS_EVAL_REQUEST_FAILED after N retries]
<error>`` after their retries fail: such a row becomes an error row (``raw_text`` null,
``error`` the failure text), as rose-run writes a failed request, and the manifest counts
it (:mod:`rose_eval.harness.failures`). Older versions answered ``""``, which cannot be
told from an empty answer (counted as ``empty_text``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rose_eval.harness.common import Prediction
from rose_eval.harness.failures import harness_error
from rose_eval.harness.lmms_eval_task import METRICS
from rose_eval.io import InputError, read_jsonl

SAMPLES_GLOB = "*samples_rose_*.jsonl"
FIX = "pass the samples_rose_*.jsonl files (or their folder) that lmms-eval --log_samples wrote"
SECRET_KEY = re.compile(r"(key|token|secret|password)", re.IGNORECASE)


def sample_files(paths: Sequence[Path]) -> list[Path]:
    """The samples files named or found (recursively) in the folders named, sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(path.rglob(SAMPLES_GLOB)))
        elif path.is_file():
            found.append(path)
        else:
            raise InputError("lmms-eval samples file or folder not found", path, FIX)
    if not found:
        raise InputError("no lmms-eval samples files of the rose tasks", ", ".join(map(str, paths)), FIX)
    return found


def _first_text(value: Any) -> str | None:
    while isinstance(value, list) and value:
        value = value[0]
    return None if value is None or isinstance(value, list) else str(value)


def _item_and_texts(row: dict[str, Any]) -> tuple[Any, str | None, str | None, str | None]:
    """(item id, the model's raw answer, the answer lmms-eval scored, the request's error).

    lmms-eval keeps ``resps`` (the raw output) only when its filters changed it, e.g. by
    stripping a ``<think>`` block (the default from v0.7); rose-eval scores the raw output.
    A request that failed after lmms-eval's retries has its failure text where the answer
    would be (or, scored by this task's ``process_results``, an ``error`` in the record):
    it becomes the error, with no answer text.
    """
    record = next((row[m] for m in METRICS if isinstance(row.get(m), dict)), None)
    doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    item_id = (record or {}).get("item_id") or doc.get("item_id")
    scored = (record["raw_text"] if record is not None and "raw_text" in record
              else _first_text(row.get("filtered_resps")))
    raw = _first_text(row["resps"]) if "resps" in row else scored
    error = ((record or {}).get("error") or harness_error("lmms-eval", raw)
             or harness_error("lmms-eval", scored)
             or harness_error("lmms-eval", _first_text(row.get("filtered_resps"))))
    if error:
        return item_id, None, None, str(error)
    return item_id, raw, scored, None


def _scrub(model_args: Any) -> Any:
    """model_args with the values of key/token/secret-like arguments removed."""
    if isinstance(model_args, str):
        return ",".join(f"{k}=[REDACTED]" if SECRET_KEY.search(k) else f"{k}={v}"
                        for k, _, v in (part.partition("=") for part in model_args.split(",")))
    if isinstance(model_args, dict):
        return {k: "[REDACTED]" if SECRET_KEY.search(str(k)) else v for k, v in model_args.items()}
    return model_args


def _results_facts(files: Iterable[Path]) -> dict[str, Any]:
    """Settings from the newest results JSON beside the samples files (empty if none)."""
    candidates = sorted({p for f in files for p in f.parent.glob("*results*.json")})
    if not candidates:
        return {}
    try:
        results = json.loads(candidates[-1].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {"results_file": str(candidates[-1]), "note": "unreadable"}
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    task_configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    return {
        "results_file": str(candidates[-1]),
        "model_name": results.get("model_name"),
        "model": config.get("model"),
        "model_args": _scrub(config.get("model_args")),
        "lmms_eval_version": results.get("lmms_eval_version"),
        "generation_kwargs": {task: cfg.get("generation_kwargs")
                              for task, cfg in task_configs.items() if isinstance(cfg, dict)},
        "n_samples": results.get("n-samples"),
    }


def convert(paths: Sequence[Path], *, model: str = "") -> tuple[list[Prediction], dict[str, Any]]:
    """Predictions and the manifest for lmms-eval samples files of the rose tasks."""
    files = sample_files(paths)
    facts = _results_facts(files)
    label = model.strip() or str(facts.get("model_name") or files[0].parent.name)
    predictions: list[Prediction] = []
    seen: dict[str, str] = {}
    filtered = failed = 0
    for path in files:
        for record in read_jsonl(path, role="lmms-eval samples"):
            item_id, text, scored, error = _item_and_texts(record.row)
            filtered += text != scored
            failed += error is not None
            if not item_id:
                raise InputError("sample without a ROSE item id (no rose metric values, no doc)",
                                 record.where, FIX)
            if str(item_id) in seen:
                raise InputError(f"item {item_id} appears twice, first at {seen[str(item_id)]}",
                                 record.where, "convert one run's samples files at a time")
            seen[str(item_id)] = record.where
            predictions.append(Prediction(str(item_id), label, text, error))
    manifest = {
        "harness": {"name": "lmms-eval", "samples_files": [str(f.resolve()) for f in files], **facts},
        "answered_by": {"model": facts.get("model_name") or label, "label": label},
        "sent": {
            "task_functions": "doc_to_messages: one user turn, text prompt_global + the released "
                              "PIL image at full size + text prompt_local; doc_to_visual + "
                              "doc_to_text (joined prompt) for simple models",
            "image_encoding": "chosen by the lmms-eval model wrapper (its OpenAI-compatible "
                              "wrappers send PNG at the size given, with no detail field)",
        },
        "notes": [f"{filtered} answer(s) changed by lmms-eval's filters before its scoring (e.g. a "
                  "<think> block stripped; pass --reasoning_tags none); the predictions keep the "
                  "raw output, as rose-run records it",
                  f"{failed} request(s) failed after lmms-eval's retries (its failure text "
                  "[LMMS_EVAL_REQUEST_FAILED ...] in place of the answer): error rows, no "
                  "raw_text; see counts.errors",
                  "lmms-eval before 0.7 answers '' after its retries fail, which cannot be told "
                  "from an empty answer; see counts.empty_text",
                  "lmms-eval's OpenAI-compatible wrappers send no image detail level: the "
                  "provider's default applies (OpenAI: auto, which may choose low)"],
    }
    return predictions, manifest
