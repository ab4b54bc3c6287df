"""Perception-to-action gap and action retention on T1-correct scenes.

Definitions followed:
- template PASS: the public evaluator's Table 2 (`demo/evaluate_rose.py`,
  `paper_table2` / `macro_over_subsets`): item mean per subset, equal mean over subsets;
- Counting Avg. = mean(G-Cnt, L-Cnt); Action Avg. = mean(L-Clk, V-Clk, Excl. C+S);
  Delta = Counting Avg. - Action Avg. (the ROSE project page's gap figure);
- retention: `scene_conditioned_action` of the public evaluator: per subset, action
  rows whose scene has a passed T1 row; template values macro over subsets, and
  Action Avg. = mean of the three template values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import (
    ACTION_TEMPLATES,
    COUNTING_TEMPLATES,
    T1,
    TEMPLATE_ORDER,
    TEMPLATE_SHORT,
    by_subset,
    macro,
    mean,
    template_of,
)


def template_pass(items: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Table 2 PASS per template (short names): macro over subsets of item means."""
    grouped = by_subset(items)
    return {
        TEMPLATE_SHORT[t]: macro(
            mean(row.get("pass") for row in rows if template_of(row) == t)
            for rows in grouped.values()
        )
        for t in TEMPLATE_ORDER
    }


def action_retention(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Action-template PASS on scenes whose T1 passed, per subset and macro."""
    per_subset: dict[str, Any] = {}
    for subset, rows in by_subset(items).items():
        t1_correct = {
            str(row.get("scene_id"))
            for row in rows
            if template_of(row) == T1 and row.get("pass") == 1
        }
        record: dict[str, Any] = {"n_t1_correct_scenes": len(t1_correct)}
        for template in ACTION_TEMPLATES:
            matched = [
                row
                for row in rows
                if template_of(row) == template and str(row.get("scene_id")) in t1_correct
            ]
            record[TEMPLATE_SHORT[template]] = {
                "n": len(matched),
                "pass_rate": mean(row.get("pass") for row in matched),
            }
        per_subset[subset] = record
    macro_values = {
        TEMPLATE_SHORT[t]: macro(r[TEMPLATE_SHORT[t]]["pass_rate"] for r in per_subset.values())
        for t in ACTION_TEMPLATES
    }
    return {
        "macro": {**macro_values, "Action Avg.": macro(macro_values.values())},
        "by_subset": per_subset,
    }


def perception_action_gap(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counting Avg., Action Avg., their difference, and action retention given T1."""
    per_template = template_pass(items)
    counting = macro(per_template[TEMPLATE_SHORT[t]] for t in COUNTING_TEMPLATES)
    action = macro(per_template[TEMPLATE_SHORT[t]] for t in ACTION_TEMPLATES)
    retention = action_retention(items)
    return {
        "template_pass": per_template,
        "Counting Avg.": counting,
        "Action Avg.": action,
        "Delta": None if counting is None or action is None else counting - action,
        "retention_given_t1_pass": retention,
        "Action Avg. | T1 pass": retention["macro"]["Action Avg."],
    }
