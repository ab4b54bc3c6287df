"""Per-item scoring: a metadata row and a prediction -> one per-item record.

The record's columns and their order are the public v0.1 evaluator's per_item_eval.jsonl
(:data:`PER_ITEM_FIELDS`); its values are identical. A record is assembled from blocks,
one concern each (who the item is, what was answered, the count, the clicks, the region,
the typical mistakes, the gold cells), in column order. Scoring is driven by the task
mode's rule (:data:`TASK_MODE_RULES`); ``global_default_error`` is defined for the main
templates T2-T5 only, as in v0.1, so bridge templates score like their mode.

Deliberate differences (documented): the dataset card's ``T5_CLICK_EXCLUSION_SUBMIT`` is
written as ``T5_CLICK_COUNT_EXCLUSION``; inputs on which the public evaluator crashes are
scored instead (an unhashable ``error`` counts as an API error; a count too large for a
float gets count_soft 0.0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from rose_eval.protocol import Cell, ParsedAnswer, cell_label, parse_answer
from rose_eval.registry import Registry
from rose_eval.truth import ItemTruth, item_truth

__all__ = ["PER_ITEM_FIELDS", "TASK_MODE_RULES", "assess", "count_soft", "passes", "score_item",
           "score_parsed"]

GLOBAL_DEFAULT_TEMPLATES = frozenset({
    "T2_COUNT_LOCAL_NUMERIC",
    "T3_CLICK_LOCAL_NUMERIC",
    "T4_CLICK_VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION",
})
NO_API_ERROR = frozenset({None, "", "None"})


class _LabelCache(dict):
    """cell -> its label, filled on first use (a release repeats a few hundred cells)."""

    def __missing__(self, cell: Cell) -> str:
        label = cell_label(cell)
        if len(self) < 100_000:  # answers may name any cell: keep the cache bounded
            self[cell] = label
        return label


_label = _LabelCache().__getitem__


def _labels(cells: frozenset[Cell]) -> list[str]:
    return sorted(map(_label, cells))


def set_agreement(pred: frozenset[Cell], gold: frozenset[Cell]) -> tuple[float, float, float, float]:
    """(precision, recall, F1, IoU) of a predicted click set against the gold set.

    Two empty sets agree perfectly (all 1.0); one empty set against a non-empty one not at
    all (all 0.0).
    """
    if not pred or not gold:
        agree = 0.0 if pred or gold else 1.0
        return agree, agree, agree, agree
    hits = len(pred & gold)
    if not hits:
        return 0.0, 0.0, 0.0, 0.0
    precision = hits / len(pred)
    recall = hits / len(gold)
    f1 = 2.0 * precision * recall / (precision + recall)
    return precision, recall, f1, hits / (len(pred) + len(gold) - hits)


def near_misses(missed: frozenset[Cell], pred: frozenset[Cell], radius: int) -> int:
    """How many missed gold cells have a predicted click within L1 distance ``radius``."""
    if not missed or not pred:
        return 0
    return sum(any(abs(r - pr) + abs(c - pc) <= radius for pr, pc in pred) for r, c in missed)


def count_soft(error_abs: int | None) -> float:
    """1 / (1 + |error|); 0 when there is no count (or it is too large for a float)."""
    if error_abs is None:
        return 0.0
    try:
        return 1.0 / (1.0 + float(error_abs))
    except OverflowError:
        return 0.0


def api_error_flag(error: Any) -> int:
    """1 when the prediction carries a non-empty error."""
    try:
        return int(error not in NO_API_ERROR)
    except TypeError:  # unhashable (a JSON list or object): certainly an error
        return 1


class Clicks(NamedTuple):
    """The CLICK actions of an answer against the grid."""

    raw: tuple[Cell, ...]  # as answered, in order
    in_grid: tuple[Cell, ...]
    off_grid: tuple[Cell, ...]
    unique: frozenset[Cell]  # distinct in-grid clicks

    @property
    def duplicates(self) -> int:
        return len(self.in_grid) - len(self.unique)


def read_clicks(parsed: ParsedAnswer, rows: int, cols: int) -> Clicks:
    """Split an answer's clicks into in-grid and off-grid ones."""
    in_grid = tuple(c for c in parsed.click_actions if 1 <= c[0] <= rows and 1 <= c[1] <= cols)
    if len(in_grid) == len(parsed.click_actions):
        return Clicks(parsed.click_actions, in_grid, (), frozenset(in_grid))
    off_grid = tuple(c for c in parsed.click_actions
                     if not (1 <= c[0] <= rows and 1 <= c[1] <= cols))
    return Clicks(parsed.click_actions, in_grid, off_grid, frozenset(in_grid))


class Scored(NamedTuple):
    """Everything the blocks read about one answered item."""

    truth: ItemTruth
    parsed: ParsedAnswer
    prediction: Mapping[str, Any]
    rule: ModeRule
    clicks: Clicks
    clean: bool  # valid grammar, nothing off the grid, no click twice
    count: int | None  # the number the mode answers with (COUNT(n) or SUBMIT(n))
    count_soft: float | None
    f1_strict: float | None
    consistency: int | None  # SUBMIT(n) equals the number of distinct clicks
    near_miss_l1: int

    @property
    def clicks_exact(self) -> bool:
        return self.clean and self.clicks.unique == self.truth.gt_clicks


@dataclass(frozen=True)
class ModeRule:
    """How one task_mode is scored: which parts apply, PASS, SOFT, global default."""

    clicks: bool
    counts: bool
    submits: bool
    count_of: Callable[[ParsedAnswer], int | None]
    passed: Callable[[Scored], bool]
    soft: Callable[[Scored], float]
    global_default: Callable[[bool, bool], bool]  # (clicked all targets, counted all)


TASK_MODE_RULES: Registry[ModeRule] = Registry("task mode")
TASK_MODE_RULES.add("COUNT", ModeRule(
    clicks=False, counts=True, submits=False,
    count_of=lambda parsed: parsed.pred_count,
    passed=lambda s: s.parsed.format_valid and s.parsed.pred_count == s.truth.gt_count,
    soft=lambda s: s.count_soft or 0.0,
    global_default=lambda click_global, count_global: count_global,
))
TASK_MODE_RULES.add("CLICK", ModeRule(
    clicks=True, counts=False, submits=False,
    count_of=lambda parsed: None,
    passed=lambda s: s.clicks_exact,
    soft=lambda s: s.f1_strict or 0.0,
    global_default=lambda click_global, count_global: click_global,
))
TASK_MODE_RULES.add("CLICK_COUNT", ModeRule(
    clicks=True, counts=True, submits=True,
    count_of=lambda parsed: parsed.submit_count,
    passed=lambda s: (s.clicks_exact and s.parsed.submit_count == s.truth.gt_count
                      and s.parsed.submit_count == len(s.clicks.unique)),
    soft=lambda s: ((s.f1_strict or 0.0) + (s.count_soft or 0.0) + float(s.consistency or 0)) / 3.0,
    global_default=lambda click_global, count_global: click_global or count_global,
))
UNKNOWN_MODE = ModeRule(  # an unknown task_mode: nothing applies, never passes
    clicks=False, counts=False, submits=False, count_of=lambda parsed: None,
    passed=lambda s: False, soft=lambda s: 0.0,
    global_default=lambda click_global, count_global: False,
)


def mode_rule(task_mode: str) -> ModeRule:
    """The scoring rule of a task mode (UNKNOWN_MODE for anything unregistered)."""
    return TASK_MODE_RULES.get(task_mode) if task_mode in TASK_MODE_RULES else UNKNOWN_MODE


# ---- blocks: each returns its columns, in PER_ITEM_FIELDS order -----------------------------

def _identity(s: Scored) -> dict[str, Any]:
    row, truth = s.truth.row, s.truth
    return {
        "item_id": row.get("item_id"), "scene_id": row.get("scene_id"),
        "image_id": row.get("image_id"), "model": s.prediction.get("model"),
        "rose_subset": row.get("rose_subset"), "rose_split": row.get("split"),
        "primitive_type": row.get("primitive_type"), "task_template": truth.task_template,
        "task_mode": truth.task_mode, "region_type": truth.region_type,
        "region_case": row.get("region_case"), "cue_type": row.get("cue_type"),
        "difficulty": row.get("difficulty"), "rows": truth.rows, "cols": truth.cols,
        "region_cell_count": truth.region.size,
    }


def _answer(s: Scored) -> dict[str, Any]:
    error = s.prediction.get("error")
    valid = int(s.parsed.format_valid)
    return {
        "raw_text": s.prediction.get("raw_text"), "api_error": api_error_flag(error),
        "api_error_text": error, "format_valid": valid, "format_error": 1 - valid,
        "parse_error": s.parsed.parse_error,
        "invalid_action_tokens": list(s.parsed.invalid_action_tokens),
        "pass": int(s.rule.passed(s)), "unified_soft": s.rule.soft(s),
        "count_applicable": int(s.rule.counts), "click_applicable": int(s.rule.clicks),
        "submit_applicable": int(s.rule.submits),
    }


def _count(s: Scored) -> dict[str, Any]:
    gold, answered = s.truth.gt_count, s.count
    exact = (0 if answered is None else int(answered == gold)) if s.rule.counts else None
    return {
        "gt_count": gold, "pred_count": answered, "count_exact": exact,
        "count_mae": None if answered is None else abs(answered - gold),
        "count_bias": None if answered is None else answered - gold,
        "count_soft": s.count_soft,
    }


def _click_sets(s: Scored) -> dict[str, Any]:
    clicks, gold, applies = s.clicks, s.truth.gt_clicks, s.rule.clicks
    precision, recall, f1, iou = set_agreement(clicks.unique, gold)
    same = clicks.unique == gold
    return {
        "gt_clicks": _labels(gold),
        "pred_clicks_all": list(map(_label, clicks.raw)),
        "pred_clicks_valid": list(map(_label, clicks.in_grid)),
        "pred_clicks_valid_unique": _labels(clicks.unique),
        "pred_clicks_invalid": list(map(_label, clicks.off_grid)),
        "pred_click_count_raw": len(clicks.raw),
        "pred_click_count_valid": len(clicks.in_grid),
        "pred_click_count_unique": len(clicks.unique),
        "invalid_coordinate_count": len(clicks.off_grid) if applies else None,
        "duplicate_click_count": clicks.duplicates if applies else None,
        "click_exact_set": int(same) if applies else None,
        "click_exact_set_strict": int(s.clean and same) if applies else None,
        "click_precision": precision if applies else None,
        "click_recall": recall if applies else None,
        "click_f1": f1 if applies else None,
        "click_f1_strict": s.f1_strict,
        "click_iou": iou if applies else None,
        "click_iou_strict": (iou if s.clean else 0.0) if applies else None,
    }


def _submit(s: Scored) -> dict[str, Any]:
    submitted = s.parsed.submit_count
    exact = (0 if submitted is None else int(submitted == s.truth.gt_count)) if s.rule.submits else None
    return {"submit_count": submitted, "submit_exact": exact,
            "click_submit_consistency": s.consistency}


def _region(s: Scored) -> dict[str, Any]:
    truth, pred = s.truth, s.clicks.unique
    if not s.rule.clicks:
        return dict.fromkeys(REGION_FIELDS)
    outside = sum(not truth.region.contains(cell) for cell in pred)
    missed = truth.gt_clicks - pred
    near = near_misses(missed, pred, s.near_miss_l1)
    return {
        "region_violation_count": outside, "region_ok": int(not outside),
        "outside_distractor_hit_count": len(pred & truth.out_region_targets),
        "missed_target_count": len(missed),
        "false_positive_count": len(pred - truth.gt_clicks),
        "over_click_count": max(0, len(pred) - truth.gt_count),
        "under_click_count": max(0, truth.gt_count - len(pred)),
        "near_miss_count": near, "near_miss_rate": near / max(1, len(truth.gt_clicks)),
    }


REGION_FIELDS = ("region_violation_count", "region_ok", "outside_distractor_hit_count",
                 "missed_target_count", "false_positive_count", "over_click_count",
                 "under_click_count", "near_miss_count", "near_miss_rate")


def _mistakes(s: Scored) -> dict[str, Any]:
    """Answering for the whole grid on a local task; using an excluded target."""
    truth, pred, answered = s.truth, s.clicks.unique, s.count
    n_targets = len(truth.all_targets)
    counted_all = answered is not None and truth.gt_count != n_targets and answered == n_targets
    clicked_all = truth.gt_clicks != truth.all_targets and pred == truth.all_targets
    global_default = (int(s.rule.global_default(clicked_all, counted_all))
                      if truth.task_template in GLOBAL_DEFAULT_TEMPLATES else 0)
    if truth.region_type != "EXCLUSION":
        exclusion = 0
    elif s.rule.clicks:
        exclusion = int(not pred.isdisjoint(truth.out_region_targets))
    else:
        exclusion = int(counted_all)
    return {"global_default_error": global_default, "exclusion_failure": exclusion}


def _gold_cells(s: Scored) -> dict[str, Any]:
    truth = s.truth
    return {
        "all_target_cells": _labels(truth.all_targets),
        "region_target_cells": _labels(truth.region_targets),
        "out_region_target_cells": _labels(truth.out_region_targets),
        "ground_truth_formal_answer": truth.row.get("ground_truth_formal_answer"),
    }


BLOCKS: tuple[Callable[[Scored], dict[str, Any]], ...] = (
    _identity, _answer, _count, _click_sets, _submit, _region, _mistakes, _gold_cells,
)
# The public per_item_eval.jsonl columns, in order: the blocks' columns, concatenated.
PER_ITEM_FIELDS: tuple[str, ...] = (
    "item_id", "scene_id", "image_id", "model", "rose_subset", "rose_split", "primitive_type",
    "task_template", "task_mode", "region_type", "region_case", "cue_type", "difficulty",
    "rows", "cols", "region_cell_count", "raw_text", "api_error", "api_error_text",
    "format_valid", "format_error", "parse_error", "invalid_action_tokens", "pass",
    "unified_soft", "count_applicable", "click_applicable", "submit_applicable", "gt_count",
    "pred_count", "count_exact", "count_mae", "count_bias", "count_soft", "gt_clicks",
    "pred_clicks_all", "pred_clicks_valid", "pred_clicks_valid_unique", "pred_clicks_invalid",
    "pred_click_count_raw", "pred_click_count_valid", "pred_click_count_unique",
    "invalid_coordinate_count", "duplicate_click_count", "click_exact_set",
    "click_exact_set_strict", "click_precision", "click_recall", "click_f1", "click_f1_strict",
    "click_iou", "click_iou_strict", "submit_count", "submit_exact", "click_submit_consistency",
    *REGION_FIELDS, "global_default_error", "exclusion_failure", "all_target_cells",
    "region_target_cells", "out_region_target_cells", "ground_truth_formal_answer",
)


def assess(truth: ItemTruth, parsed: ParsedAnswer, prediction: Mapping[str, Any], *,
           near_miss_l1: int) -> Scored:
    """Everything the record's blocks read about one parsed answer."""
    rule = mode_rule(truth.task_mode)
    clicks = read_clicks(parsed, truth.rows, truth.cols)
    clean = parsed.format_valid and not clicks.off_grid and clicks.duplicates == 0
    count = rule.count_of(parsed)
    consistency = None
    if rule.submits:
        submitted = parsed.submit_count
        consistency = 0 if submitted is None else int(submitted == len(clicks.unique))
    f1_strict = None
    if rule.clicks:
        f1_strict = set_agreement(clicks.unique, truth.gt_clicks)[2] if clean else 0.0
    return Scored(
        truth=truth, parsed=parsed, prediction=prediction, rule=rule, clicks=clicks,
        clean=clean, count=count,
        count_soft=count_soft(None if count is None else abs(count - truth.gt_count))
        if rule.counts else None,
        f1_strict=f1_strict, consistency=consistency, near_miss_l1=near_miss_l1,
    )


def passes(truth: ItemTruth, parsed: ParsedAnswer) -> bool:
    """Whether a parsed answer passes (the record's ``pass``, without building the record)."""
    scored = assess(truth, parsed, {}, near_miss_l1=0)
    return scored.rule.passed(scored)


def score_parsed(truth: ItemTruth, parsed: ParsedAnswer, prediction: Mapping[str, Any], *,
                 near_miss_l1: int) -> dict[str, Any]:
    """The per-item record of an already parsed answer."""
    scored = assess(truth, parsed, prediction, near_miss_l1=near_miss_l1)
    record: dict[str, Any] = {}
    for block in BLOCKS:
        record.update(block(scored))
    return record


def score_item(row: Mapping[str, Any], prediction: Mapping[str, Any] | None, *,
               near_miss_l1: int = 1) -> dict[str, Any]:
    """Score one prediction (None = no answer) against one metadata row."""
    prediction = prediction or {}
    truth = item_truth(row)
    parsed = parse_answer(prediction.get("raw_text"), truth.task_mode)
    return score_parsed(truth, parsed, prediction, near_miss_l1=near_miss_l1)
