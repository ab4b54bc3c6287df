"""Per-item records -> the evaluator's summary (evaluation_summary.json's content).

Every summary is a table of :mod:`rose_eval.summaries` (output key -> population, field,
reducer); the keys, their order and the values are the public v0.1 evaluator's. Means sum
plain floats left to right in record order, so every number is bit-identical to v0.1's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose_eval.percent import COUNT, FRACTION, TEXT, percent_view
from rose_eval.summaries import (
    Population,
    Stat,
    Table,
    count,
    differs,
    equals,
    group_by,
    group_by_field,
    is_present,
    macro,
    mean,
    share_positive,
    summarize,
)
from rose_eval.vocab import (
    SUBSET_ORDER,
    TEMPLATE_NAMES,
    TEMPLATE_ORDER,
    TEMPLATE_SHORT,
    template_of,
)

Row = Mapping[str, Any]
T1_TEMPLATE = TEMPLATE_ORDER[0]
ACTION_TEMPLATES = TEMPLATE_ORDER[2:]


# ---- the metric block of one group (overall, per subset, template, mode, region type) -----

GROUP_POPULATIONS: dict[str, Population] = {
    "count": Population(equals(1), "count_applicable"),
    "count_parsed": Population(is_present, "pred_count", within="count"),
    "click": Population(equals(1), "click_applicable"),
    "submit": Population(equals(1), "submit_applicable"),
    "local": Population(differs(T1_TEMPLATE), "task_template"),
    "exclusion": Population(equals("EXCLUSION"), "region_type"),
}
GROUP_TABLE: Table = (
    Stat("n", reduce=count),
    Stat("pass_rate", "pass"),
    Stat("unified_soft", "unified_soft"),
    Stat("valid_rate", "format_valid"),
    Stat("format_error_rate", "format_error"),
    Stat("api_error_rate", "api_error"),
    Stat("n_count_applicable", population="count", reduce=count),
    Stat("count_exact_rate", "count_exact", "count"),
    Stat("count_mae_parsed", "count_mae", "count_parsed"),
    Stat("count_bias_parsed", "count_bias", "count_parsed"),
    Stat("count_soft", "count_soft", "count"),
    Stat("n_click_applicable", population="click", reduce=count),
    *(Stat(f"{name}_rate" if name.startswith("click_exact") else name, name, "click")
      for name in ("click_exact_set", "click_exact_set_strict", "click_precision", "click_recall",
                   "click_f1", "click_f1_strict", "click_iou", "click_iou_strict")),
    Stat("region_ok_rate", "region_ok", "click"),
    *(Stat(f"{name}_sample_rate", f"{name}_count", "click", share_positive)
      for name in ("region_violation", "invalid_coordinate", "duplicate_click", "over_click",
                   "under_click")),
    Stat("near_miss_rate", "near_miss_rate", "click"),
    Stat("n_submit_applicable", population="submit", reduce=count),
    Stat("submit_exact_rate", "submit_exact", "submit"),
    Stat("click_submit_consistency_rate", "click_submit_consistency", "submit"),
    Stat("global_default_error_rate", "global_default_error", "local"),
    Stat("n_exclusion", population="exclusion", reduce=count),
    Stat("exclusion_failure_rate", "exclusion_failure", "exclusion"),
)


def summary_for(rows: Sequence[Row]) -> dict[str, Any]:
    """The metric block of one group of per-item records (``{"n": 0}`` for none)."""
    return summarize(rows, GROUP_TABLE, GROUP_POPULATIONS) if rows else {"n": 0}


def group_summary(rows: Sequence[Row], key: str) -> dict[str, dict[str, Any]]:
    """summary_for per value of ``key`` (as text), values sorted."""
    groups = group_by_field(rows, key)
    return {value: summary_for(groups[value]) for value in sorted(groups)}


# ---- the paper's tables -------------------------------------------------------------------

def _by_known_subset(rows: Sequence[Row]) -> dict[str, list[Row]]:
    groups = group_by(rows, lambda row: row.get("rose_subset"))
    return {subset: groups.get(subset, []) for subset in SUBSET_ORDER}


TABLE1_SUBSET: Table = (
    Stat("n", reduce=count),
    Stat("PASS", "pass"),
    Stat("SOFT", "unified_soft"),
    Stat("VALID", "format_valid"),
)
TABLE2_POPULATIONS: dict[str, Population] = {
    **{t: Population(TEMPLATE_NAMES[t].__contains__, "task_template") for t in TEMPLATE_ORDER},
    "click": GROUP_POPULATIONS["click"],
}
TABLE2_SUBSET: Table = (
    *(Stat(TEMPLATE_SHORT[t], "pass", t) for t in TEMPLATE_ORDER),
    Stat("C-F1", "click_f1_strict", "click"),
    Stat("R-OK", "region_ok", "click"),
)


def paper_table1(rows: Sequence[Row]) -> dict[str, Any]:
    """Table 1: per-subset item means of PASS / SOFT / VALID and their subset macros."""
    by_subset = {s: summarize(members, TABLE1_SUBSET)
                 for s, members in _by_known_subset(rows).items()}
    return {
        "by_subset": by_subset,
        "Avg. PASS": macro(record["PASS"] for record in by_subset.values()),
        "Avg. SOFT": macro(record["SOFT"] for record in by_subset.values()),
        "VALID": macro(record["VALID"] for record in by_subset.values()),
    }


def paper_table2(rows: Sequence[Row]) -> dict[str, Any]:
    """Table 2: each entry an equal-subset macro; Avg. PASS the mean of the five templates."""
    per_subset = [summarize(members, TABLE2_SUBSET, TABLE2_POPULATIONS)
                  for members in _by_known_subset(rows).values()]
    table = {entry.key: macro(record[entry.key] for record in per_subset) for entry in TABLE2_SUBSET}
    table["Avg. PASS"] = macro(table[TEMPLATE_SHORT[t]] for t in TEMPLATE_ORDER)
    return table


CONDITIONED_NOTE = (
    "Computed only from scenes for which both sampled T1 and action rows are "
    "available. A random partial run may have a small denominator."
)


def scene_conditioned_action(rows: Sequence[Row]) -> dict[str, Any]:
    """Action-template PASS on the scenes whose T1 passed, per subset and as subset macros."""
    by_subset: dict[str, dict[str, Any]] = {}
    for subset, members in _by_known_subset(rows).items():
        templates = group_by(members, template_of)
        solved = {str(r.get("scene_id")) for r in templates.get(T1_TEMPLATE, ())
                  if r.get("pass") == 1}
        record: dict[str, Any] = {"n_t1_correct_scenes": len(solved)}
        for template in ACTION_TEMPLATES:
            kept = [r.get("pass") for r in templates.get(template, ())
                    if str(r.get("scene_id")) in solved]
            record[TEMPLATE_SHORT[template]] = {"n": len(kept), "pass_rate": mean(kept)}
        by_subset[subset] = record
    shorts = [TEMPLATE_SHORT[t] for t in ACTION_TEMPLATES]
    macros = {short: macro(r[short]["pass_rate"] for r in by_subset.values()) for short in shorts}
    macros["Action Avg."] = macro(macros.values())
    return {"by_subset": by_subset, "macro": macros, "note": CONDITIONED_NOTE}


# What every leaf of paper_metrics is, for its percentage view.
PAPER_LEAF_KINDS: dict[str, str] = {
    **dict.fromkeys(("PASS", "SOFT", "VALID", "Avg. PASS", "Avg. SOFT", "C-F1", "R-OK",
                     "Action Avg.", "pass_rate", *TEMPLATE_SHORT.values()), FRACTION),
    **dict.fromkeys(("n", "n_t1_correct_scenes"), COUNT),
    "note": TEXT,
}


# ---- coverage and the whole summary ---------------------------------------------------------

def coverage_rows(metadata_rows: Sequence[Row], eval_rows: Sequence[Row]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Expected vs evaluated items per subset and per main template."""
    def tally(rows: Sequence[Row], read) -> Counter:
        return Counter(read(row) for row in rows)

    def line(expected: int, evaluated: int) -> dict[str, Any]:
        return {"expected": expected, "evaluated": evaluated,
                "coverage_rate": evaluated / expected if expected else None}

    def subset_of(row: Row) -> str:
        return str(row.get("rose_subset"))

    want_subset, got_subset = tally(metadata_rows, subset_of), tally(eval_rows, subset_of)
    want_template, got_template = tally(metadata_rows, template_of), tally(eval_rows, template_of)
    by_subset = [{"rose_subset": s, **line(want_subset[s], got_subset[s])} for s in SUBSET_ORDER]
    by_template = [{"task_template": t, "task_short": TEMPLATE_SHORT[t],
                    **line(want_template[t], got_template[t])} for t in TEMPLATE_ORDER]
    return by_subset, by_template


METRIC_NOTES = {
    "PASS": (
        "Strict exact success: formal grammar must be valid and the "
        "count/click set/submission must be exactly correct."
    ),
    "VALID": "Exact formal-grammar validity, independent of semantic correctness.",
    "SOFT": (
        "COUNT=count soft; CLICK=strict click F1; "
        "CLICK_COUNT=mean(strict click F1, count soft, click-submit consistency)."
    ),
    "Table 1": (
        "Subset scores are item means. Avg. PASS/SOFT and VALID are "
        "macro averages over visual subsets with available rows."
    ),
    "Table 2": (
        "Each template PASS, C-F1, and R-OK is macro-averaged over "
        "visual subsets with available rows. Avg. PASS is the mean of "
        "the five template PASS values."
    ),
}
PARTIAL_WARNING = (
    "Metrics from a sampled run are diagnostic and are not directly "
    "comparable to the full official test results."
)
EVALUATOR_NAME = "ROSE release evaluator v1"


@dataclass(frozen=True)
class RunInfo:
    """What identifies an evaluation run: model, split, inputs and how they matched."""

    model: str
    display_name: str
    split: str
    dataset_repo_id: str
    metadata_path: Path
    predictions_path: Path
    allow_partial: bool
    num_expected: int
    num_prediction_rows: int
    missing_item_ids: tuple[str, ...] = ()
    extra_item_ids: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.missing_item_ids and not self.extra_item_ids


def build_summary(eval_rows: Sequence[Row], metadata_rows: Sequence[Row],
                  run: RunInfo) -> dict[str, Any]:
    """evaluation_summary.json's content, keys in the public evaluator's order."""
    by_subset, by_template = coverage_rows(metadata_rows, eval_rows)
    paper = {
        "table1": paper_table1(eval_rows),
        "table2": paper_table2(eval_rows),
        "scene_conditioned_action_available_rows": scene_conditioned_action(eval_rows),
    }
    coverage = {
        "complete_submission": run.complete,
        "allow_partial": run.allow_partial,
        "num_expected": run.num_expected,
        "num_prediction_rows": run.num_prediction_rows,
        "num_evaluated": len(eval_rows),
        "num_missing": len(run.missing_item_ids),
        "num_extra": len(run.extra_item_ids),
        "coverage_rate": len(eval_rows) / run.num_expected,
        "by_subset": by_subset,
        "by_template": by_template,
        "missing_item_ids": list(run.missing_item_ids),
        "extra_item_ids": list(run.extra_item_ids),
    }
    return {
        "evaluator": EVALUATOR_NAME,
        "model": run.model,
        "display_name": run.display_name,
        "split": run.split,
        "dataset_repo_id": run.dataset_repo_id,
        "metadata_jsonl": str(run.metadata_path),
        "predictions_jsonl": str(run.predictions_path),
        "coverage": coverage,
        "overall": summary_for(eval_rows),
        **{f"by_{name}": group_summary(eval_rows, key) for name, key in (
            ("subset", "rose_subset"), ("template", "task_template"),
            ("task_mode", "task_mode"), ("region_type", "region_type"))},
        "paper_metrics": paper,
        "paper_metrics_percent": percent_view(paper, PAPER_LEAF_KINDS),
        "metric_notes": {**METRIC_NOTES, "partial_warning": None if run.complete else PARTIAL_WARNING},
    }
