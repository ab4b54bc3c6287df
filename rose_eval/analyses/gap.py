"""Perception-to-action gap and action retention on T1-correct scenes.

The template PASS values are the evaluator's Table 2 (equal-subset macros of item means);
Counting Avg. is the mean of G-Cnt and L-Cnt, Action Avg. the mean of L-Clk, V-Clk and
Excl. C+S, and Delta = Counting Avg. - Action Avg. (the ROSE project page's gap figure).
Retention is the evaluator's scene-conditioned action table: per subset, the action rows
of scenes whose T1 passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.aggregate import paper_table2, scene_conditioned_action
from rose_eval.analyses._rows import ACTION_TEMPLATES, COUNTING_TEMPLATES
from rose_eval.summaries import difference, macro
from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT


def perception_action_gap(items: Sequence[Mapping[str, Any]],
                          paper: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Counting Avg., Action Avg., their difference, and action retention given T1.

    ``paper``: the evaluator's paper_metrics for these items, when already computed.
    """
    table2 = paper["table2"] if paper else paper_table2(items)
    retention = (paper["scene_conditioned_action_available_rows"] if paper
                 else scene_conditioned_action(items))
    per_template = {TEMPLATE_SHORT[t]: table2[TEMPLATE_SHORT[t]] for t in TEMPLATE_ORDER}
    counting = macro(per_template[TEMPLATE_SHORT[t]] for t in COUNTING_TEMPLATES)
    action = macro(per_template[TEMPLATE_SHORT[t]] for t in ACTION_TEMPLATES)
    return {
        "template_pass": per_template,
        "Counting Avg.": counting,
        "Action Avg.": action,
        "Delta": difference(counting, action),
        "retention_given_t1_pass": {"macro": retention["macro"],
                                    "by_subset": retention["by_subset"]},
        "Action Avg. | T1 pass": retention["macro"]["Action Avg."],
    }
