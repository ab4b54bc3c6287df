"""Percentages: the one place a rate becomes a percentage, as a number or as text.

Rates are fractions in [0, 1] everywhere in the evaluator; reports show them as
percentages. :func:`percent_view` turns a result tree into its percentage view by the
tree's schema: a mapping from leaf key to kind (``FRACTION`` leaves become percentages
rounded to 4 decimals, ``COUNT`` and ``TEXT`` leaves are copied), so a new field must be
declared before it can be shown; an undeclared leaf is an error, not a silent guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FRACTION = "fraction"
COUNT = "count"
TEXT = "text"
JSON_DECIMALS = 4


def percent(value: float) -> float:
    """A rate as a percentage."""
    return 100.0 * value


def percent_text(value: float | None, digits: int = 1) -> str:
    """A rate as percentage text with ``digits`` decimals; ``--`` when there is none."""
    return "--" if value is None else f"{percent(value):.{digits}f}"


def percent_view(tree: Any, kinds: Mapping[str, str]) -> Any:
    """A copy of ``tree`` with every FRACTION leaf as a percentage (None stays None)."""
    if isinstance(tree, Mapping):
        return {key: _leaf(key, child, kinds) for key, child in tree.items()}
    if isinstance(tree, list):
        return [percent_view(child, kinds) for child in tree]
    return tree


def _leaf(key: str, value: Any, kinds: Mapping[str, str]) -> Any:
    if isinstance(value, (Mapping, list)):
        return percent_view(value, kinds)
    kind = kinds.get(key)
    if kind is None:
        raise KeyError(f"{key!r} has no declared kind in the percentage schema")
    if kind == FRACTION and value is not None:
        return round(percent(float(value)), JSON_DECIMALS)
    return value
