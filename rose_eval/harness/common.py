"""What the harness adapters share: the strict verdict per item, Table 1 over verdicts,
image facts, the guard on benchmark-changing settings, and predictions with a manifest.

Scoring always goes through :func:`rose_eval.score.score_item` and aggregation through
:func:`rose_eval.aggregate.paper_table1`, the functions ``rose-eval`` itself uses, so a
harness reports the numbers ``rose-eval`` would (rows are ordered by item id first, as
``rose-eval`` orders them, so even float sums agree bit for bit).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from rose_eval import __version__
from rose_eval.aggregate import paper_table1
from rose_eval.atomic import write_atomic
from rose_eval.runners.accounting import Prices, manifest_notes
from rose_eval.runners.openai_compat import IMAGE_FORMATS, PROMPT_ORDERS, ImageOptions
from rose_eval.runners.predictions import Usage, manifest_path_for, write_manifest
from rose_eval.score import score_item
from rose_eval.vocab import PROTOCOL_VERSION, SUBSET_ORDER, SUBSET_SHORT

PAPER_ORDER = PROMPT_ORDERS[0]  # text prompt_global, the image, text prompt_local
DETAILS: tuple[str, ...] = ("original", "high", "auto", "low")


# ---------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """One item scored by rose-eval's scorer, reduced to what harness metrics need."""

    item_id: str
    rose_subset: str
    task_template: str
    passed: int
    valid: int
    soft: float
    parse_error: str | None
    api_error: int

    def as_eval_row(self) -> dict[str, Any]:
        """The per-item record keys rose-eval's aggregation reads."""
        return {"item_id": self.item_id, "rose_subset": self.rose_subset,
                "task_template": self.task_template, "pass": self.passed,
                "format_valid": self.valid, "unified_soft": self.soft,
                "parse_error": self.parse_error, "api_error": self.api_error}


def verdict(row: Mapping[str, Any], raw_text: str | None, error: str | None = None) -> Verdict:
    """Score one answer against its metadata row with rose-eval's strict scorer."""
    record = score_item(row, {"raw_text": raw_text, "error": error})
    return Verdict(item_id=str(record["item_id"]), rose_subset=str(record["rose_subset"]),
                   task_template=str(record["task_template"]), passed=int(record["pass"]),
                   valid=int(record["format_valid"]), soft=float(record["unified_soft"]),
                   parse_error=record["parse_error"], api_error=int(record["api_error"]))


def table1(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """rose-eval's Table 1 (per-subset PASS/SOFT/VALID and macro averages) over eval rows."""
    return paper_table1(sorted(rows, key=lambda r: str(r["item_id"])))


def subset_key(subset: str) -> str:
    """Short metric name of a subset: 'ROSE-ChineseGlyph' -> 'ChineseGlyph'."""
    return SUBSET_SHORT.get(subset, subset)


def pass_by_subset(table: Mapping[str, Any]) -> dict[str, float]:
    """{short subset name: PASS} for the subsets that have items, plus 'avg' (Avg. PASS)."""
    by_subset = table["by_subset"]
    out = {subset_key(s): by_subset[s]["PASS"] for s in SUBSET_ORDER
           if by_subset[s]["PASS"] is not None}
    out["avg"] = table["Avg. PASS"]
    return out


# ---------------------------------------------------------------------------- images


def image_facts(data: bytes) -> dict[str, Any]:
    """Format, pixel size and sha256 of encoded image bytes (header only, no decode)."""
    with Image.open(io.BytesIO(data)) as image:
        fmt, (width, height) = (image.format or "unknown").lower(), image.size
    return {"format": fmt, "width": width, "height": height,
            "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


@dataclass(frozen=True)
class ImageSettings:
    """How a harness hands the image and prompts to the model (rose-run's image options,
    plus the provider's detail level)."""

    options: ImageOptions = ImageOptions()
    detail: str = "original"
    prompt_order: str = PAPER_ORDER

    def record(self) -> dict[str, Any]:
        """The settings as a manifest records them."""
        opts = self.options
        return {"image_format": opts.image_format,
                "jpeg_quality": opts.jpeg_quality if opts.image_format == "jpeg" else None,
                "max_long_side": opts.max_long_side or None, "blank": opts.blank,
                "detail": self.detail, "prompt_order": self.prompt_order}


class BenchmarkChangeError(ValueError):
    """Settings that change what the benchmark measures, asked for without the opt-in."""


def deviations(settings: ImageSettings) -> list[str]:
    """Every way ``settings`` departs from the benchmark (empty for the standard run)."""
    out: list[str] = []
    opts = settings.options
    if opts.image_format not in IMAGE_FORMATS:
        raise ValueError(f"image_format must be one of {', '.join(IMAGE_FORMATS)}, "
                         f"got {opts.image_format!r}")
    if settings.detail not in DETAILS:
        raise ValueError(f"detail must be one of {', '.join(DETAILS)}, got {settings.detail!r}")
    if settings.prompt_order not in PROMPT_ORDERS:
        raise ValueError(f"prompt_order must be one of {', '.join(PROMPT_ORDERS)}, "
                         f"got {settings.prompt_order!r}")
    if opts.max_long_side < 0 or not 1 <= opts.jpeg_quality <= 100:
        raise ValueError("max_long_side must be >= 0 and jpeg_quality 1-100")
    if opts.image_format == "jpeg":
        out.append(f"images re-encoded as JPEG (quality {opts.jpeg_quality}), lossy")
    if settings.detail == "low":
        out.append("detail=low: the provider shrinks the image to 512 px, cells become unreadable")
    if settings.detail == "auto":
        out.append("detail=auto: the provider may choose low detail")
    if opts.max_long_side:
        out.append(f"images downscaled to a long side of at most {opts.max_long_side} px")
    if opts.blank:
        out.append("images replaced by blank white images (text-only control)")
    if settings.prompt_order != PAPER_ORDER:
        out.append(f"prompt order {settings.prompt_order} instead of the paper's {PAPER_ORDER}")
    return out


def guard(settings: ImageSettings, *, allow: bool, who: str) -> list[str]:
    """Refuse benchmark-changing settings unless ``allow``; when allowed, warn loudly."""
    found = deviations(settings)
    if found and not allow:
        raise BenchmarkChangeError(
            f"{who}: these settings change the benchmark: {'; '.join(found)}; pass "
            "allow_benchmark_changes=true to run them as a control (recorded in the manifest)")
    for item in found:
        print(f"{who}: WARNING: benchmark changed: {item}; PASS is not comparable to ROSE",
              file=sys.stderr)
    return found


# ---------------------------------------------------------------------------- predictions


@dataclass(frozen=True)
class Prediction:
    """One row of the public predictions format."""

    item_id: str
    model: str
    raw_text: str | None
    error: str | None = None
    epoch: int | None = None  # a harness's repeat (inspect epochs); None: written without the field
    # What the harness logged of the response, in rose-run's row fields (each written only when known).
    latency_s: float | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    response_model: str | None = None
    reasoning: str | None = None


def tool_record() -> dict[str, Any]:
    """Who wrote a predictions file (recorded in every manifest)."""
    return {"name": "rose-export", "package": "rose-toolkit", "version": __version__,
            "protocol_version": PROTOCOL_VERSION}


def _row(prediction: Prediction) -> dict[str, Any]:
    row = {k: v for k, v in asdict(prediction).items() if v is not None or k in ("raw_text", "error")}
    if isinstance(row.get("usage"), dict):
        row["usage"] = {k: v for k, v in row["usage"].items() if v is not None}
    return row


def write_predictions(path: Path, predictions: Sequence[Prediction],
                      manifest: Mapping[str, Any]) -> Path:
    """Write the predictions JSONL and its manifest beside it, each atomically.

    The manifest gains the token accounting and the server identity summed from the rows
    (:mod:`rose_eval.runners.accounting`, as ``rose-run`` records them), so a converted run
    shows its usage and a model that changed midway the same way.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [_row(p) for p in predictions]
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    counts = {"items": len(predictions),
              "errors": sum(1 for p in predictions if p.error),
              "no_text": sum(1 for p in predictions if p.raw_text is None),
              "empty_text": sum(1 for p in predictions if p.raw_text == "")}
    write_atomic(path, text)
    manifest_path = manifest_path_for(path)
    write_manifest(manifest_path, {**manifest, "counts": counts, **manifest_notes(rows, Prices(), None),
                                   "tool": tool_record()})
    return manifest_path
