"""One small engine for every summary table: output key -> population, field, reducer.

A table is a tuple of entries evaluated in order over a group of per-item rows:

- :class:`Stat` reduces one field (a record key, or a function of the row) over a
  population, a named subset of the group (``None`` = every row);
- :class:`Derived` combines entries already computed (a difference, a complement).

Populations are tests on one field of a row (or on the whole row), optionally refining
another population; each is filtered once per group. Columns are read with C-level
getters (``operator.itemgetter``), which keeps a 5,560-item summary at a few milliseconds
per table. The evaluator's summary, the bridge controls and the consistency analysis are
all tables run by :func:`summarize`.

Means follow the public evaluator: values are converted with ``float``; None, ``""`` and
anything ``float`` refuses (text, an integer too large for a float) are left out; the sum
runs left to right in row order, so every mean is bit-identical to v0.1's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from itertools import compress
from typing import Any

Row = Mapping[str, Any]
Field = str | Callable[[Row], Any] | None


def _number(value: Any) -> float | None:
    """``value`` read as a float; None for a blank and for anything ``float()`` refuses."""
    if value is None or value == "":
        return None
    with suppress(TypeError, ValueError, OverflowError):
        return float(value)
    return None


def equals(value: Any) -> Callable[[Any], bool]:
    """A population test: the field equals ``value``."""
    return partial(operator.eq, value)


def differs(value: Any) -> Callable[[Any], bool]:
    """A population test: the field differs from ``value``."""
    return partial(operator.ne, value)


is_present: Callable[[Any], bool] = partial(operator.is_not, None)  # the field is not None


def mean(values: Iterable[Any]) -> float | None:
    """Mean of the values that are numbers (see the module docstring); None if there are none."""
    kept = list(filter(is_present, values))
    try:
        floats = list(map(float, kept))
    except Exception:  # noqa: BLE001 - a blank, a word or a huge int: take the careful path
        floats = [f for f in map(_number, kept) if f is not None]
    return sum(floats) / len(floats) if floats else None


def share_positive(values: Iterable[Any]) -> float | None:
    """Share of rows whose value is above zero (a missing value counts as zero)."""
    return mean(int((value or 0) > 0) for value in values)


def count(values: Sequence[Any]) -> int:
    """How many rows the population holds."""
    return len(values)


def difference(first: Any, second: Any) -> float | None:
    """first - second, or None when either is missing."""
    return None if first is None or second is None else float(first) - float(second)


def complement(value: Any) -> float | None:
    """1 - value, or None when it is missing."""
    return None if value is None else 1.0 - value


def macro(values: Iterable[float | None]) -> float | None:
    """Equal-weight mean of the groups that have a value."""
    return mean(value for value in values if value is not None)


@dataclass(frozen=True)
class Population:
    """The rows of a group that pass ``test`` (within another population, if named).

    ``test`` receives the row's ``field`` (or, with no field, the row itself).
    """

    test: Callable[[Any], bool]
    field: str | None = None
    within: str | None = None


@dataclass(frozen=True)
class Stat:
    """``key`` = ``reduce`` of ``field`` over ``population`` (``field`` None: the rows)."""

    key: str
    field: Field = None
    population: str | None = None
    reduce: Callable[[Sequence[Any]], Any] = mean


@dataclass(frozen=True)
class Derived:
    """``key`` = ``combine`` of entries computed earlier in the same table."""

    key: str
    inputs: tuple[str, ...]
    combine: Callable[..., Any]


Table = tuple[Stat | Derived, ...]


def column(rows: Sequence[Row], field: str) -> list[Any]:
    """The field of every row (None where a row lacks it)."""
    try:
        return list(map(operator.itemgetter(field), rows))
    except KeyError:
        return [row.get(field) for row in rows]


def field_values(rows: Sequence[Row], field: Field) -> list[Any]:
    """The field of every row (the rows themselves when ``field`` is None)."""
    if field is None:
        return list(rows)
    if isinstance(field, str):
        return column(rows, field)
    return list(map(field, rows))


def select(rows: Sequence[Row], population: Population) -> list[Row]:
    """The rows of a group that belong to a population (not counting ``within``)."""
    if population.field is None:
        return list(filter(population.test, rows))
    return list(compress(rows, map(population.test, column(rows, population.field))))


def summarize(rows: Sequence[Row], table: Table,
              populations: Mapping[str, Population] | None = None) -> dict[str, Any]:
    """Evaluate a table over one group of rows; keys in table order."""
    members: dict[str | None, Sequence[Row]] = {None: rows}

    def population(name: str | None) -> Sequence[Row]:
        if name not in members:
            spec = (populations or {})[name]
            members[name] = select(population(spec.within), spec)
        return members[name]

    out: dict[str, Any] = {}
    for entry in table:
        if isinstance(entry, Derived):
            out[entry.key] = entry.combine(*(out[name] for name in entry.inputs))
        else:
            out[entry.key] = entry.reduce(field_values(population(entry.population), entry.field))
    return out


def group_by(rows: Iterable[Row], key: Callable[[Row], Any]) -> dict[Any, list[Row]]:
    """Rows by key, groups in first-seen order."""
    groups: dict[Any, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def group_by_field(rows: Sequence[Row], field: str) -> dict[str, list[Row]]:
    """Rows by the text of one field (``str(value)``), groups in first-seen order."""
    groups: dict[str, list[Row]] = {}
    for value, row in zip(map(str, column(rows, field)), rows, strict=True):
        groups.setdefault(value, []).append(row)
    return groups
