"""The analyses' shared vocabulary: template groups and grouping by subset.

The analyses read per-item evaluation records (the public per_item_eval.jsonl fields).
Means and macros are :mod:`rose_eval.summaries`' (one definition for the whole evaluator);
templates are read under the evaluator's names (:func:`rose_eval.vocab.template_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rose_eval.summaries import group_by
from rose_eval.vocab import BRIDGE_TEMPLATES, SUBSET_ORDER, TEMPLATE_ORDER, template_of

T1, T2, T3, T4, T5 = TEMPLATE_ORDER
T1B_GLOBAL_CLICK, T2B_MATCHED_LOCAL_COUNT = BRIDGE_TEMPLATES
COUNTING_TEMPLATES: tuple[str, ...] = (T1, T2)
ACTION_TEMPLATES: tuple[str, ...] = (T3, T4, T5)
MAIN_TEMPLATES = frozenset(TEMPLATE_ORDER)
ALL_TEMPLATES: tuple[str, ...] = (*TEMPLATE_ORDER, *BRIDGE_TEMPLATES)


def by_subset(
    rows: Sequence[Mapping[str, Any]],
    keep: Callable[[Mapping[str, Any]], bool] = lambda row: True,
) -> dict[str, list[Mapping[str, Any]]]:
    """Rows grouped by rose_subset, restricted to the known subsets that have rows, in paper order."""
    groups = group_by((row for row in rows if keep(row)), lambda row: str(row.get("rose_subset")))
    return {subset: groups[subset] for subset in SUBSET_ORDER if subset in groups}


def by_template(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Rows grouped by task template (evaluator names), in first-seen order."""
    return group_by(rows, template_of)
