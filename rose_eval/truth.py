"""The gold side of one item: what scoring needs from a metadata row, read and checked once.

Coordinates in metadata come as label lists (``["R2,C5", ...]``), as ``[row, col]``
pairs, or as one free-form string holding labels; all are read through the protocol's
cell grammar. Field fallbacks follow the public v0.1 evaluator: targets from
``all_target_cells`` else ``target_cells``; region targets from ``region_target_cells``
else ``ground_truth_clicks``; an empty or missing field is an empty set.

Parsed labels are cached (a release repeats the same few hundred labels thousands of
times); the cache holds only immutable values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from rose_eval.protocol import Cell, cells_in_text, read_cell_label
from rose_eval.regions import Region, region_for
from rose_eval.vocab import canonical_template

Cells = frozenset[Cell]
_LABEL_CACHE: dict[str, Cell] = {}
_CACHE_LIMIT = 100_000


class TruthError(ValueError):
    """A metadata row whose scoring fields cannot be read; the message says which and why."""


def _cell(value: Any) -> Cell:
    """One coordinate: a ``[row, col]`` pair or a label."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    text = str(value)
    cached = _LABEL_CACHE.get(text)
    if cached is not None:
        return cached
    cell = read_cell_label(text)
    if cell is None:
        raise TruthError(f"{text!r} is not a cell label like 'R2,C5' or a [row, col] pair")
    if len(_LABEL_CACHE) < _CACHE_LIMIT:
        _LABEL_CACHE[text] = cell
    return cell


def cells_of(value: Any) -> Cells:
    """A metadata coordinate collection as a set of cells (None or empty -> empty set)."""
    if not value:
        return frozenset()
    if isinstance(value, str):
        return frozenset(cells_in_text(value))
    if isinstance(value, (list, tuple)):
        return frozenset(map(_cell, value))
    raise TruthError(f"coordinates must be a list or a string, got {type(value).__name__}")


class ItemTruth(NamedTuple):
    """The scoring fields of one metadata row."""

    row: Mapping[str, Any]
    task_mode: str
    task_template: str
    region_type: str
    rows: int
    cols: int
    region: Region
    gt_count: int
    gt_clicks: Cells
    all_targets: Cells
    region_targets: Cells

    @property
    def out_region_targets(self) -> Cells:
        """Targets the item's region leaves out (the distractors of a local task)."""
        return self.all_targets - self.region_targets


def item_truth(row: Mapping[str, Any]) -> ItemTruth:
    """Read a row's scoring fields; raises KeyError, TypeError or ValueError when it cannot."""
    rows, cols = int(row["rows"]), int(row["cols"])
    region_type = str(row.get("region_type"))
    params = dict(row.get("region_params") or {})
    gt_clicks = cells_of(row.get("ground_truth_clicks"))
    own_region_targets = row.get("region_target_cells")
    return ItemTruth(
        row=row,
        task_mode=str(row.get("task_mode")),
        task_template=canonical_template(str(row.get("task_template"))),
        region_type=region_type,
        rows=rows,
        cols=cols,
        region=region_for(rows, cols, region_type, params),
        gt_count=int(row.get("ground_truth_count") or 0),
        gt_clicks=gt_clicks,
        all_targets=cells_of(row.get("all_target_cells") or row.get("target_cells")),
        region_targets=cells_of(own_region_targets) if own_region_targets else gt_clicks,
    )
