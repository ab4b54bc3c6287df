"""Small helpers shared by the analyses: template names, None-aware means, grouping.

The analyses read per-item evaluation records (the public evaluator's
per_item_eval.jsonl fields). These helpers keep the public conventions in one place:
means skip None, macro averages run over the subsets that have rows, and the dataset
card's alias for template 5 is read as the evaluator's name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rose_eval.vocab import (
    BRIDGE_TEMPLATES,
    SUBSET_ORDER,
    TEMPLATE_ORDER,
    TEMPLATE_SHORT,
    canonical_template,
    ordered_subsets,
)

T1, T2, T3, T4, T5 = TEMPLATE_ORDER
T1B_GLOBAL_CLICK, T2B_MATCHED_LOCAL_COUNT = BRIDGE_TEMPLATES
COUNTING_TEMPLATES: tuple[str, ...] = (T1, T2)
ACTION_TEMPLATES: tuple[str, ...] = (T3, T4, T5)
MAIN_TEMPLATES = frozenset(TEMPLATE_ORDER)
ALL_TEMPLATES: tuple[str, ...] = (*TEMPLATE_ORDER, *BRIDGE_TEMPLATES)

__all__ = [
    "ACTION_TEMPLATES",
    "ALL_TEMPLATES",
    "COUNTING_TEMPLATES",
    "MAIN_TEMPLATES",
    "SUBSET_ORDER",
    "T1",
    "T1B_GLOBAL_CLICK",
    "T2",
    "T2B_MATCHED_LOCAL_COUNT",
    "T3",
    "T4",
    "T5",
    "TEMPLATE_ORDER",
    "TEMPLATE_SHORT",
    "by_subset",
    "macro",
    "mean",
    "ordered_subsets",
    "template_of",
]


def template_of(row: Mapping[str, Any]) -> str:
    """The row's task template under the evaluator's name (aliases resolved)."""
    return canonical_template(str(row.get("task_template")))


def mean(values: Iterable[Any]) -> float | None:
    """Mean of the numeric values, skipping None and blanks; None when nothing is left."""
    kept: list[float] = []
    for value in values:
        if value is None or value == "":
            continue
        try:
            kept.append(float(value))
        except (TypeError, ValueError):
            continue
    return sum(kept) / len(kept) if kept else None


def macro(values: Iterable[float | None]) -> float | None:
    """Equal-weight mean over the groups that have a value (the public macro rule)."""
    return mean(v for v in values if v is not None)


def by_subset(
    rows: Sequence[Mapping[str, Any]],
    keep: Callable[[Mapping[str, Any]], bool] = lambda row: True,
) -> dict[str, list[Mapping[str, Any]]]:
    """Rows grouped by rose_subset, restricted to the known subsets, in paper order."""
    buckets: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        subset = str(row.get("rose_subset"))
        if subset in SUBSET_ORDER and keep(row):
            buckets[subset].append(row)
    return {subset: buckets[subset] for subset in SUBSET_ORDER if subset in buckets}
