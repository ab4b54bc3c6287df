"""Per-item scoring: metadata row + prediction -> the public evaluator's per-item record.

Every field of the public v0.1 evaluator's per_item_eval.jsonl rows is produced, in the
same order and with identical values. Scoring is driven by ``task_mode`` (and
``region_type`` for EXCLUSION), so bridge templates score too; ``global_default_error``
stays keyed on the template names T2-T5, as in the public evaluator.

Deliberate differences (documented): the dataset card's ``T5_CLICK_EXCLUSION_SUBMIT``
is written as ``T5_CLICK_COUNT_EXCLUSION``; inputs on which the public evaluator crashes
are scored instead (an unhashable ``error`` counts as an API error; a count too large
for a float gets count_soft 0.0).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rose_eval.protocol import Cell, ParsedAnswer, parse_answer
from rose_eval.regions import region_cells
from rose_eval.registry import Registry
from rose_eval.vocab import canonical_template

COORD_LABEL = re.compile(r"\s*R\s*(\d+)\s*,\s*C\s*(\d+)\s*", re.IGNORECASE)
COORD_IN_TEXT = re.compile(r"R\s*(\d+)\s*,\s*C\s*(\d+)", re.IGNORECASE)

GLOBAL_DEFAULT_TEMPLATES = frozenset({
    "T2_COUNT_LOCAL_NUMERIC",
    "T3_CLICK_LOCAL_NUMERIC",
    "T4_CLICK_VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION",
})
NO_API_ERROR = frozenset({None, "", "None"})


def parse_coord(value: Any) -> Cell:
    """A coordinate given as [r, c] / (r, c) or as the label 'R<r>,C<c>'."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    match = COORD_LABEL.fullmatch(str(value))
    if not match:
        raise ValueError(f"Invalid coordinate label: {value}")
    return int(match.group(1)), int(match.group(2))


def coord_set(values: Any) -> frozenset[Cell]:
    """A set of cells from a list of coordinates or a free-form string of labels."""
    if values is None:
        return frozenset()
    if isinstance(values, str):
        return frozenset((int(r), int(c)) for r, c in COORD_IN_TEXT.findall(values))
    if isinstance(values, (list, tuple, range)):
        return frozenset(parse_coord(value) for value in values)
    raise ValueError(f"Unsupported coordinate collection: {type(values).__name__}")


def coord_label(cell: Cell) -> str:
    """'R<r>,C<c>'."""
    return f"R{cell[0]},C{cell[1]}"


def _labels_sorted(cells: frozenset[Cell] | set[Cell]) -> list[str]:
    return sorted(coord_label(cell) for cell in cells)


@dataclass(frozen=True)
class ItemTruth:
    """What scoring needs from one metadata row, validated once."""

    row: Mapping[str, Any]
    task_mode: str
    task_template: str
    region_type: str
    rows: int
    cols: int
    region: frozenset[Cell]
    gt_count: int
    gt_clicks: frozenset[Cell]
    all_targets: frozenset[Cell]
    region_targets: frozenset[Cell]

    @property
    def out_region_targets(self) -> frozenset[Cell]:
        return self.all_targets - self.region_targets


def item_truth(row: Mapping[str, Any]) -> ItemTruth:
    """Read the scoring fields of a metadata row; raises ValueError/KeyError/TypeError."""
    return ItemTruth(
        row=row,
        task_mode=str(row.get("task_mode")),
        task_template=canonical_template(str(row.get("task_template"))),
        region_type=str(row.get("region_type")),
        rows=int(row["rows"]),
        cols=int(row["cols"]),
        region=region_cells(row),
        gt_count=int(row.get("ground_truth_count") or 0),
        gt_clicks=coord_set(row.get("ground_truth_clicks") or []),
        all_targets=coord_set(row.get("all_target_cells") or row.get("target_cells") or []),
        region_targets=coord_set(
            row.get("region_target_cells") or row.get("ground_truth_clicks") or []
        ),
    )


def precision_recall_f1(pred: frozenset[Cell], gold: frozenset[Cell]) -> tuple[float, float, float]:
    """Click-set precision, recall and F1 (both empty -> 1, one empty -> 0)."""
    if not pred and not gold:
        return 1.0, 1.0, 1.0
    if not pred or not gold:
        return 0.0, 0.0, 0.0
    hits = len(pred & gold)
    precision = hits / len(pred)
    recall = hits / len(gold)
    f1 = 2.0 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def jaccard(pred: frozenset[Cell], gold: frozenset[Cell]) -> float:
    """Click-set IoU (both empty -> 1)."""
    if not pred and not gold:
        return 1.0
    union = pred | gold
    return len(pred & gold) / len(union) if union else 0.0


def near_miss_count(missed: frozenset[Cell], pred: frozenset[Cell], radius: int) -> int:
    """Missed targets with some predicted click within L1 distance ``radius``."""
    return sum(
        1 for r, c in missed if any(abs(r - pr) + abs(c - pc) <= radius for pr, pc in pred)
    )


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


def _split_in_grid(clicks: tuple[Cell, ...], rows: int, cols: int) -> tuple[list[Cell], list[Cell]]:
    inside: list[Cell] = []
    outside: list[Cell] = []
    for cell in clicks:
        (inside if 1 <= cell[0] <= rows and 1 <= cell[1] <= cols else outside).append(cell)
    return inside, outside


@dataclass(frozen=True)
class Answer:
    """What a mode rule reads about one scored answer."""

    truth: ItemTruth
    parsed: ParsedAnswer
    clicks: frozenset[Cell]  # distinct in-grid clicks
    clean: bool  # valid grammar, nothing out of grid, no duplicate
    click_f1_strict: float | None
    count_soft: float | None
    consistency: int | None  # SUBMIT(n) == number of distinct clicks

    @property
    def clicks_exact(self) -> bool:
        return self.clean and self.clicks == self.truth.gt_clicks


@dataclass(frozen=True)
class ModeRule:
    """How one task_mode is scored: which parts apply, PASS, SOFT, global default."""

    clicks: bool
    counts: bool
    submits: bool
    count_of: Callable[[ParsedAnswer], int | None]
    passed: Callable[[Answer], bool]
    soft: Callable[[Answer], float]
    global_default: Callable[[bool, bool], bool]  # (clicked all targets, counted all)


TASK_MODE_RULES: Registry[ModeRule] = Registry("task mode")
TASK_MODE_RULES.add("COUNT", ModeRule(
    clicks=False, counts=True, submits=False,
    count_of=lambda parsed: parsed.pred_count,
    passed=lambda a: a.parsed.format_valid and a.parsed.pred_count == a.truth.gt_count,
    soft=lambda a: a.count_soft or 0.0,
    global_default=lambda click_global, count_global: count_global,
))
TASK_MODE_RULES.add("CLICK", ModeRule(
    clicks=True, counts=False, submits=False,
    count_of=lambda parsed: None,
    passed=lambda a: a.clicks_exact,
    soft=lambda a: a.click_f1_strict or 0.0,
    global_default=lambda click_global, count_global: click_global,
))
TASK_MODE_RULES.add("CLICK_COUNT", ModeRule(
    clicks=True, counts=True, submits=True,
    count_of=lambda parsed: parsed.submit_count,
    passed=lambda a: (a.clicks_exact and a.parsed.submit_count == a.truth.gt_count
                      and a.parsed.submit_count == len(a.clicks)),
    soft=lambda a: ((a.click_f1_strict or 0.0) + (a.count_soft or 0.0)
                    + float(a.consistency or 0)) / 3.0,
    global_default=lambda click_global, count_global: click_global or count_global,
))
UNKNOWN_MODE = ModeRule(  # an unknown task_mode: nothing applies, never passes
    clicks=False, counts=False, submits=False, count_of=lambda parsed: None,
    passed=lambda a: False, soft=lambda a: 0.0,
    global_default=lambda click_global, count_global: False,
)


def mode_rule(task_mode: str) -> ModeRule:
    """The scoring rule of a task mode (UNKNOWN_MODE for anything unregistered)."""
    return TASK_MODE_RULES.get(task_mode) if task_mode in TASK_MODE_RULES else UNKNOWN_MODE


def _global_default_error(truth: ItemTruth, rule: ModeRule, pred_set: frozenset[Cell],
                          pred_count: int | None) -> int:
    """Answered the whole grid's targets where a local answer was asked (T2-T5 only)."""
    if truth.task_template not in GLOBAL_DEFAULT_TEMPLATES:
        return 0
    global_count = len(truth.all_targets)
    count_global = (pred_count is not None and truth.gt_count != global_count
                    and pred_count == global_count)
    click_global = truth.gt_clicks != truth.all_targets and pred_set == truth.all_targets
    return int(rule.global_default(click_global, count_global))


def _exclusion_failure(truth: ItemTruth, pred_set: frozenset[Cell], pred_count: int | None,
                       click_applicable: bool) -> int:
    """Clicked an excluded target (or counted the whole grid) on an EXCLUSION item."""
    if truth.region_type != "EXCLUSION":
        return 0
    if click_applicable:
        return int(bool(pred_set & truth.out_region_targets))
    if pred_count is not None and truth.gt_count != len(truth.all_targets):
        return int(pred_count == len(truth.all_targets))
    return 0


def score_parsed(truth: ItemTruth, parsed: ParsedAnswer, prediction: Mapping[str, Any], *,
                 near_miss_l1: int) -> dict[str, Any]:
    """The per-item record for an already parsed answer."""
    mode = truth.task_mode
    row = truth.row
    rule = mode_rule(mode)
    click_applicable, count_applicable, submit_applicable = rule.clicks, rule.counts, rule.submits

    valid_clicks, invalid_clicks = _split_in_grid(parsed.click_actions, truth.rows, truth.cols)
    pred_set = frozenset(valid_clicks)
    duplicates = len(valid_clicks) - len(pred_set)
    gold = truth.gt_clicks

    precision, recall, f1 = precision_recall_f1(pred_set, gold)
    iou = jaccard(pred_set, gold)
    clean = parsed.format_valid and not invalid_clicks and duplicates == 0
    f1_strict = (f1 if clean else 0.0) if click_applicable else None
    iou_strict = (iou if clean else 0.0) if click_applicable else None

    pred_count = rule.count_of(parsed)
    count_error = abs(pred_count - truth.gt_count) if pred_count is not None else None
    count_bias = pred_count - truth.gt_count if pred_count is not None else None
    if count_applicable:
        count_exact = int(pred_count == truth.gt_count) if pred_count is not None else 0
        soft_count = count_soft(count_error)
    else:
        count_exact = None
        soft_count = None

    click_exact = int(pred_set == gold) if click_applicable else None
    click_exact_strict = int(clean and pred_set == gold) if click_applicable else None

    submit_exact = None
    consistency = None
    if submit_applicable:
        submit = parsed.submit_count
        submit_exact = int(submit == truth.gt_count) if submit is not None else 0
        consistency = int(submit == len(pred_set)) if submit is not None else 0

    answer = Answer(truth, parsed, pred_set, clean, f1_strict, soft_count, consistency)
    passed = int(rule.passed(answer))
    unified_soft = rule.soft(answer)

    out_region = truth.out_region_targets
    violations = pred_set - truth.region
    missed = gold - pred_set
    near_miss = near_miss_count(missed, pred_set, near_miss_l1) if click_applicable else None

    def when_click(value: Any) -> Any:
        return value if click_applicable else None

    return {
        "item_id": row.get("item_id"),
        "scene_id": row.get("scene_id"),
        "image_id": row.get("image_id"),
        "model": prediction.get("model"),
        "rose_subset": row.get("rose_subset"),
        "rose_split": row.get("split"),
        "primitive_type": row.get("primitive_type"),
        "task_template": truth.task_template,
        "task_mode": mode,
        "region_type": truth.region_type,
        "region_case": row.get("region_case"),
        "cue_type": row.get("cue_type"),
        "difficulty": row.get("difficulty"),
        "rows": truth.rows,
        "cols": truth.cols,
        "region_cell_count": len(truth.region),
        "raw_text": prediction.get("raw_text"),
        "api_error": api_error_flag(prediction.get("error")),
        "api_error_text": prediction.get("error"),
        "format_valid": int(parsed.format_valid),
        "format_error": int(not parsed.format_valid),
        "parse_error": parsed.parse_error,
        "invalid_action_tokens": list(parsed.invalid_action_tokens),
        "pass": passed,
        "unified_soft": unified_soft,
        "count_applicable": int(count_applicable),
        "click_applicable": int(click_applicable),
        "submit_applicable": int(submit_applicable),
        "gt_count": truth.gt_count,
        "pred_count": pred_count,
        "count_exact": count_exact,
        "count_mae": count_error,
        "count_bias": count_bias,
        "count_soft": soft_count,
        "gt_clicks": _labels_sorted(gold),
        "pred_clicks_all": [coord_label(cell) for cell in parsed.click_actions],
        "pred_clicks_valid": [coord_label(cell) for cell in valid_clicks],
        "pred_clicks_valid_unique": _labels_sorted(pred_set),
        "pred_clicks_invalid": [coord_label(cell) for cell in invalid_clicks],
        "pred_click_count_raw": len(parsed.click_actions),
        "pred_click_count_valid": len(valid_clicks),
        "pred_click_count_unique": len(pred_set),
        "invalid_coordinate_count": when_click(len(invalid_clicks)),
        "duplicate_click_count": when_click(duplicates),
        "click_exact_set": click_exact,
        "click_exact_set_strict": click_exact_strict,
        "click_precision": when_click(precision),
        "click_recall": when_click(recall),
        "click_f1": when_click(f1),
        "click_f1_strict": f1_strict,
        "click_iou": when_click(iou),
        "click_iou_strict": iou_strict,
        "submit_count": parsed.submit_count,
        "submit_exact": submit_exact,
        "click_submit_consistency": consistency,
        "region_violation_count": when_click(len(violations)),
        "region_ok": when_click(int(not violations)),
        "outside_distractor_hit_count": when_click(len(pred_set & out_region)),
        "missed_target_count": when_click(len(missed)),
        "false_positive_count": when_click(len(pred_set - gold)),
        "over_click_count": when_click(max(0, len(pred_set) - truth.gt_count)),
        "under_click_count": when_click(max(0, truth.gt_count - len(pred_set))),
        "near_miss_count": near_miss,
        "near_miss_rate": (near_miss / max(1, len(gold))
                           if click_applicable and near_miss is not None else None),
        "global_default_error": _global_default_error(truth, rule, pred_set, pred_count),
        "exclusion_failure": _exclusion_failure(truth, pred_set, pred_count, click_applicable),
        "all_target_cells": _labels_sorted(truth.all_targets),
        "region_target_cells": _labels_sorted(truth.region_targets),
        "out_region_target_cells": _labels_sorted(out_region),
        "ground_truth_formal_answer": row.get("ground_truth_formal_answer"),
    }


def score_item(row: Mapping[str, Any], prediction: Mapping[str, Any] | None, *,
               near_miss_l1: int = 1) -> dict[str, Any]:
    """Score one prediction (None = no answer) against one metadata row."""
    prediction = prediction or {}
    truth = item_truth(row)
    parsed = parse_answer(prediction.get("raw_text"), truth.task_mode)
    return score_parsed(truth, parsed, prediction, near_miss_l1=near_miss_l1)
