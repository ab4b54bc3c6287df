"""Abstention: PASS when nothing is to be clicked or counted, against the rest.

A zero-target item is one whose right answer is `COUNT(0)`, `DONE` or `SUBMIT(0)`
(gt_count == 0). An answer abstains when it is grammar-valid and claims nothing: a
COUNT of 0, or no CLICK token (and, for CLICK_COUNT, a SUBMIT of 0). False abstention
is abstaining on an item that has targets; its rate is over all non-zero items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES, MAIN_TEMPLATES, by_subset, mean, template_of


def is_zero_target(item: Mapping[str, Any]) -> bool:
    """True when the gold answer is COUNT(0), DONE or SUBMIT(0)."""
    return int(item.get("gt_count") or 0) == 0 and not item.get("gt_clicks")


def abstained(item: Mapping[str, Any]) -> bool:
    """True when the answer is valid and claims no target."""
    if item.get("format_valid") != 1:
        return False
    mode = item.get("task_mode")
    no_clicks = int(item.get("pred_click_count_raw") or 0) == 0
    if mode == "COUNT":
        return item.get("pred_count") == 0
    if mode == "CLICK":
        return no_clicks
    if mode == "CLICK_COUNT":
        return no_clicks and item.get("submit_count") == 0
    return False


def abstention_record(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """PASS on zero-target vs non-zero items, and abstention rates, for one group."""
    zero = [r for r in rows if is_zero_target(r)]
    nonzero = [r for r in rows if not is_zero_target(r)]
    return {
        "n_zero": len(zero),
        "n_nonzero": len(nonzero),
        "pass_zero": mean(r.get("pass") for r in zero),
        "pass_nonzero": mean(r.get("pass") for r in nonzero),
        "abstention_rate_zero": mean(int(abstained(r)) for r in zero),
        "false_abstention_rate": mean(int(abstained(r)) for r in nonzero),
    }


def abstention_summary(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Abstention per template (bridges included) and, over main templates, overall/per subset."""
    main = [r for r in items if template_of(r) in MAIN_TEMPLATES]
    templates = [t for t in ALL_TEMPLATES if any(template_of(r) == t for r in items)]
    return {
        "overall": abstention_record(main),
        "by_template": {
            t: abstention_record([r for r in items if template_of(r) == t]) for t in templates
        },
        "by_subset": {s: abstention_record(rows) for s, rows in by_subset(main).items()},
        "definition": "zero-target: gt_count == 0 (gold COUNT(0) / DONE / SUBMIT(0)); "
        "abstain: valid answer with no click and a zero count/submit",
    }
