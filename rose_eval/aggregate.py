"""Aggregation of per-item records into the public evaluator's summary numbers.

Plain Python floats summed left to right in the public evaluator's row order, so that
every number (and every rounded table cell) is identical to v0.1's. Means skip values
that are None, empty or not convertible to float.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER, TEMPLATE_SHORT, canonical_template

Row = Mapping[str, Any]
T1_TEMPLATE = TEMPLATE_ORDER[0]
ACTION_TEMPLATES = TEMPLATE_ORDER[2:]

PERCENT_KEYS = frozenset({
    "PASS", "SOFT", "VALID", "Avg. PASS", "Avg. SOFT", "C-F1", "R-OK",
    *TEMPLATE_SHORT.values(), "Action Avg.",
})


def as_float(value: Any) -> float | None:
    """float(value), or None for None, '' and anything float() rejects."""
    if value is None or value == "":
        return None
    try:
        return float(value)
    except Exception:
        return None


def mean(values: Iterable[Any]) -> float | None:
    """Mean of the float-convertible values (None when there are none)."""
    values = list(values)
    try:  # fast path for plain numbers; same result as the careful path below
        floats = [float(v) for v in values if v is not None and v != ""]
    except Exception:
        floats = [f for f in map(as_float, values) if f is not None]
    if not floats:
        return None
    return sum(floats) / len(floats)


def _flag(value: Any) -> int:
    return int((value or 0) > 0)


def summary_for(rows: Sequence[Row]) -> dict[str, Any]:
    """The public evaluator's metric block for one group of per-item records."""
    if not rows:
        return {"n": 0}
    count_rows = [r for r in rows if r.get("count_applicable") == 1]
    click_rows = [r for r in rows if r.get("click_applicable") == 1]
    submit_rows = [r for r in rows if r.get("submit_applicable") == 1]
    exclusion_rows = [r for r in rows if r.get("region_type") == "EXCLUSION"]
    parsed_counts = [r for r in count_rows if r.get("pred_count") is not None]

    def avg(group: Sequence[Row], key: str) -> float | None:
        return mean(r.get(key) for r in group)

    def share(group: Sequence[Row], key: str) -> float | None:
        return mean(_flag(r.get(key)) for r in group)

    return {
        "n": len(rows),
        "pass_rate": avg(rows, "pass"),
        "unified_soft": avg(rows, "unified_soft"),
        "valid_rate": avg(rows, "format_valid"),
        "format_error_rate": avg(rows, "format_error"),
        "api_error_rate": avg(rows, "api_error"),
        "n_count_applicable": len(count_rows),
        "count_exact_rate": avg(count_rows, "count_exact"),
        "count_mae_parsed": avg(parsed_counts, "count_mae"),
        "count_bias_parsed": avg(parsed_counts, "count_bias"),
        "count_soft": avg(count_rows, "count_soft"),
        "n_click_applicable": len(click_rows),
        "click_exact_set_rate": avg(click_rows, "click_exact_set"),
        "click_exact_set_strict_rate": avg(click_rows, "click_exact_set_strict"),
        "click_precision": avg(click_rows, "click_precision"),
        "click_recall": avg(click_rows, "click_recall"),
        "click_f1": avg(click_rows, "click_f1"),
        "click_f1_strict": avg(click_rows, "click_f1_strict"),
        "click_iou": avg(click_rows, "click_iou"),
        "click_iou_strict": avg(click_rows, "click_iou_strict"),
        "region_ok_rate": avg(click_rows, "region_ok"),
        "region_violation_sample_rate": share(click_rows, "region_violation_count"),
        "invalid_coordinate_sample_rate": share(click_rows, "invalid_coordinate_count"),
        "duplicate_click_sample_rate": share(click_rows, "duplicate_click_count"),
        "over_click_sample_rate": share(click_rows, "over_click_count"),
        "under_click_sample_rate": share(click_rows, "under_click_count"),
        "near_miss_rate": avg(click_rows, "near_miss_rate"),
        "n_submit_applicable": len(submit_rows),
        "submit_exact_rate": avg(submit_rows, "submit_exact"),
        "click_submit_consistency_rate": avg(submit_rows, "click_submit_consistency"),
        "global_default_error_rate": avg(
            [r for r in rows if r.get("task_template") != T1_TEMPLATE], "global_default_error"
        ),
        "n_exclusion": len(exclusion_rows),
        "exclusion_failure_rate": avg(exclusion_rows, "exclusion_failure"),
    }


def group_summary(rows: Sequence[Row], key: str) -> dict[str, dict[str, Any]]:
    """summary_for per value of ``key`` (as a string), keys sorted."""
    buckets: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        buckets[str(row.get(key))].append(row)
    return {value: summary_for(buckets[value]) for value in sorted(buckets)}


def macro_over_subsets(rows: Sequence[Row], selector: Callable[[Row], bool],
                       value_key: str) -> float | None:
    """Mean over subsets (in SUBSET_ORDER) of the per-subset item mean; empty subsets skipped."""
    per_subset = [
        mean(r.get(value_key) for r in rows if r.get("rose_subset") == subset and selector(r))
        for subset in SUBSET_ORDER
    ]
    return mean(v for v in per_subset if v is not None)


def paper_table1(rows: Sequence[Row]) -> dict[str, Any]:
    """Table 1: per-subset PASS / SOFT / VALID and their macro averages."""
    by_subset: dict[str, dict[str, Any]] = {}
    for subset in SUBSET_ORDER:
        members = [r for r in rows if r.get("rose_subset") == subset]
        by_subset[subset] = {
            "n": len(members),
            "PASS": mean(r.get("pass") for r in members),
            "SOFT": mean(r.get("unified_soft") for r in members),
            "VALID": mean(r.get("format_valid") for r in members),
        }

    def macro(key: str) -> float | None:
        return mean(by_subset[s][key] for s in SUBSET_ORDER if by_subset[s][key] is not None)

    return {"by_subset": by_subset, "Avg. PASS": macro("PASS"), "Avg. SOFT": macro("SOFT"),
            "VALID": macro("VALID")}


def _is_click(row: Row) -> bool:
    return row.get("click_applicable") == 1


def paper_table2(rows: Sequence[Row]) -> dict[str, Any]:
    """Table 2: template PASS (macro over subsets), C-F1, R-OK and Avg. PASS."""
    template_pass: dict[str, float | None] = {
        TEMPLATE_SHORT[template]: macro_over_subsets(
            rows, lambda r, t=template: r.get("task_template") == t, "pass"
        )
        for template in TEMPLATE_ORDER
    }
    return {
        **template_pass,
        "C-F1": macro_over_subsets(rows, _is_click, "click_f1_strict"),
        "R-OK": macro_over_subsets(rows, _is_click, "region_ok"),
        "Avg. PASS": mean(v for v in template_pass.values() if v is not None),
    }


CONDITIONED_NOTE = (
    "Computed only from scenes for which both sampled T1 and action rows are "
    "available. A random partial run may have a small denominator."
)


def scene_conditioned_action(rows: Sequence[Row]) -> dict[str, Any]:
    """Action-template PASS on scenes whose T1 passed (over the rows present)."""
    by_subset: dict[str, dict[str, Any]] = {}
    for subset in SUBSET_ORDER:
        members = [r for r in rows if r.get("rose_subset") == subset]
        t1_passed = {
            str(r.get("scene_id")) for r in members
            if r.get("task_template") == T1_TEMPLATE and r.get("pass") == 1
        }
        record: dict[str, Any] = {"n_t1_correct_scenes": len(t1_passed)}
        for template in ACTION_TEMPLATES:
            matched = [r for r in members if r.get("task_template") == template
                       and str(r.get("scene_id")) in t1_passed]
            record[TEMPLATE_SHORT[template]] = {
                "n": len(matched), "pass_rate": mean(r.get("pass") for r in matched),
            }
        by_subset[subset] = record

    macro: dict[str, float | None] = {}
    for template in ACTION_TEMPLATES:
        short = TEMPLATE_SHORT[template]
        macro[short] = mean(by_subset[s][short]["pass_rate"] for s in SUBSET_ORDER
                            if by_subset[s][short]["pass_rate"] is not None)
    macro["Action Avg."] = mean(v for v in list(macro.values()) if v is not None)
    return {"by_subset": by_subset, "macro": macro, "note": CONDITIONED_NOTE}


def pct(value: float | None, digits: int = 4) -> float | None:
    """100 * value rounded (None stays None)."""
    return None if value is None else round(100.0 * value, digits)


def percentage_tree(value: Any) -> Any:
    """Copy of a nested result with rate-valued entries turned into percentages."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            if isinstance(child, (dict, list)):
                out[key] = percentage_tree(child)
            elif child is None:
                out[key] = None
            elif isinstance(child, (int, float)) and ("rate" in key.lower() or key in PERCENT_KEYS):
                out[key] = pct(float(child))
            else:
                out[key] = child
        return out
    if isinstance(value, list):
        return [percentage_tree(child) for child in value]
    return value


def coverage_rows(metadata_rows: Sequence[Row], eval_rows: Sequence[Row]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Expected vs evaluated item counts per subset and per main template."""
    def counts(rows: Sequence[Row], key: str, canon: Callable[[str], str] = str):
        return Counter(canon(str(r.get(key))) for r in rows)

    exp_sub, got_sub = counts(metadata_rows, "rose_subset"), counts(eval_rows, "rose_subset")
    exp_tpl = counts(metadata_rows, "task_template", canonical_template)
    got_tpl = counts(eval_rows, "task_template", canonical_template)

    def rate(evaluated: int, expected: int) -> float | None:
        return evaluated / expected if expected else None

    by_subset = [
        {"rose_subset": s, "expected": exp_sub.get(s, 0), "evaluated": got_sub.get(s, 0),
         "coverage_rate": rate(got_sub.get(s, 0), exp_sub.get(s, 0))}
        for s in SUBSET_ORDER
    ]
    by_template = [
        {"task_template": t, "task_short": TEMPLATE_SHORT[t], "expected": exp_tpl.get(t, 0),
         "evaluated": got_tpl.get(t, 0), "coverage_rate": rate(got_tpl.get(t, 0), exp_tpl.get(t, 0))}
        for t in TEMPLATE_ORDER
    ]
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


def build_summary(eval_rows: Sequence[Row], metadata_rows: Sequence[Row], *,
                  run: Mapping[str, Any]) -> dict[str, Any]:
    """evaluation_summary.json's content (key order as in the public evaluator).

    ``run`` holds: model, display_name, split, dataset_repo_id, metadata_jsonl,
    predictions_jsonl, allow_partial, num_expected, num_prediction_rows,
    missing_item_ids, extra_item_ids.
    """
    missing, extra = list(run["missing_item_ids"]), list(run["extra_item_ids"])
    complete = not missing and not extra
    cov_subset, cov_template = coverage_rows(metadata_rows, eval_rows)
    paper = {
        "table1": paper_table1(eval_rows),
        "table2": paper_table2(eval_rows),
        "scene_conditioned_action_available_rows": scene_conditioned_action(eval_rows),
    }
    return {
        "evaluator": EVALUATOR_NAME,
        "model": run["model"],
        "display_name": run["display_name"],
        "split": run["split"],
        "dataset_repo_id": run["dataset_repo_id"],
        "metadata_jsonl": run["metadata_jsonl"],
        "predictions_jsonl": run["predictions_jsonl"],
        "coverage": {
            "complete_submission": complete,
            "allow_partial": run["allow_partial"],
            "num_expected": run["num_expected"],
            "num_prediction_rows": run["num_prediction_rows"],
            "num_evaluated": len(eval_rows),
            "num_missing": len(missing),
            "num_extra": len(extra),
            "coverage_rate": len(eval_rows) / run["num_expected"],
            "by_subset": cov_subset,
            "by_template": cov_template,
            "missing_item_ids": missing,
            "extra_item_ids": extra,
        },
        "overall": summary_for(eval_rows),
        "by_subset": group_summary(eval_rows, "rose_subset"),
        "by_template": group_summary(eval_rows, "task_template"),
        "by_task_mode": group_summary(eval_rows, "task_mode"),
        "by_region_type": group_summary(eval_rows, "region_type"),
        "paper_metrics": paper,
        "paper_metrics_percent": percentage_tree(paper),
        "metric_notes": {**METRIC_NOTES, "partial_warning": None if complete else PARTIAL_WARNING},
    }
