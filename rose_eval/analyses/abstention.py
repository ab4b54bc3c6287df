"""Abstention: PASS when nothing is to be clicked or counted, against the rest.

A zero-target item is one whose right answer is `COUNT(0)`, `DONE` or `SUBMIT(0)`
(gt_count == 0). An answer abstains when it is grammar-valid and claims nothing: a
COUNT of 0, or no CLICK token (and, for CLICK_COUNT, a SUBMIT of 0). False abstention
is abstaining on an item that has targets; its rate is over all non-zero items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES, MAIN_TEMPLATES, by_subset
from rose_eval.summaries import Population, Stat, Table, count, equals, group_by_field, summarize
from rose_eval.vocab import template_of

Row = Mapping[str, Any]


def is_zero_target(item: Row) -> bool:
    """True when the gold answer is COUNT(0), DONE or SUBMIT(0)."""
    return int(item.get("gt_count") or 0) == 0 and not item.get("gt_clicks")


def abstained(item: Row) -> bool:
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


# The rows of this table are facts: {"zero", "abstained", "pass", "rose_subset", "template"}.
POPULATIONS: dict[str, Population] = {
    "zero": Population(equals(True), "zero"),
    "nonzero": Population(equals(False), "zero"),
}
TABLE: Table = (
    Stat("n_zero", population="zero", reduce=count),
    Stat("n_nonzero", population="nonzero", reduce=count),
    Stat("pass_zero", "pass", "zero"),
    Stat("pass_nonzero", "pass", "nonzero"),
    Stat("abstention_rate_zero", "abstained", "zero"),
    Stat("false_abstention_rate", "abstained", "nonzero"),
)


def abstention_facts(item: Row) -> dict[str, Any]:
    """What the abstention table reads about one per-item record."""
    return {"zero": is_zero_target(item), "abstained": int(abstained(item)),
            "pass": item.get("pass"), "rose_subset": item.get("rose_subset"),
            "task_template": template_of(item)}


def abstention_summary(items: Sequence[Row]) -> dict[str, Any]:
    """Abstention per template (bridges included) and, over main templates, overall/per subset."""
    facts = [abstention_facts(item) for item in items]
    templates = group_by_field(facts, "task_template")
    main = [f for f in facts if f["task_template"] in MAIN_TEMPLATES]

    def table(rows: Sequence[Row]) -> dict[str, Any]:
        return summarize(rows, TABLE, POPULATIONS)

    return {
        "overall": table(main),
        "by_template": {t: table(templates[t]) for t in ALL_TEMPLATES if t in templates},
        "by_subset": {s: table(rows) for s, rows in by_subset(main).items()},
        "definition": "zero-target: gt_count == 0 (gold COUNT(0) / DONE / SUBMIT(0)); "
        "abstain: valid answer with no click and a zero count/submit",
    }
