"""Region kinds -> sets of 1-based (row, col) cells, as the public v0.1 evaluator reads them.

Bounds are inclusive and, as in the public evaluator, a range region is *not* clipped to
the grid (only EXCLUSION, being "the grid minus a region", is). Raises KeyError,
TypeError or ValueError on malformed parameters; io turns those into one-line errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rose_eval.registry import Registry

Cell = tuple[int, int]
RegionBuilder = Callable[[int, int, Mapping[str, Any]], frozenset[Cell]]

REGION_KINDS: Registry[RegionBuilder] = Registry("region kind")


MAX_REGION_CELLS = 1_000_000  # far above any real grid (<= 18 x 18); guards memory


def _block(r1: int, r2: int, c1: int, c2: int) -> frozenset[Cell]:
    if max(0, r2 - r1 + 1) * max(0, c2 - c1 + 1) > MAX_REGION_CELLS:
        raise ValueError(f"region R{r1}..R{r2} x C{c1}..C{c2} is absurdly large")
    return frozenset((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))


@REGION_KINDS.register("GLOBAL")
def global_cells(rows: int, cols: int, params: Mapping[str, Any]) -> frozenset[Cell]:
    """Every cell of the grid."""
    return _block(1, rows, 1, cols)


@REGION_KINDS.register("ROW_RANGE")
def row_range_cells(rows: int, cols: int, params: Mapping[str, Any]) -> frozenset[Cell]:
    """Rows r1..r2, all columns."""
    return _block(int(params["r1"]), int(params["r2"]), 1, cols)


@REGION_KINDS.register("COL_RANGE")
def col_range_cells(rows: int, cols: int, params: Mapping[str, Any]) -> frozenset[Cell]:
    """Columns c1..c2, all rows."""
    return _block(1, rows, int(params["c1"]), int(params["c2"]))


def _rectangle(rows: int, cols: int, params: Mapping[str, Any]) -> frozenset[Cell]:
    r1, r2 = int(params["r1"]), int(params["r2"])
    c1, c2 = int(params["c1"]), int(params["c2"])
    return _block(r1, r2, c1, c2)


REGION_KINDS.register("RECTANGLE")(_rectangle)
REGION_KINDS.register("VISUAL_REGION")(_rectangle)


@REGION_KINDS.register("EXCLUSION")
def exclusion_cells(rows: int, cols: int, params: Mapping[str, Any]) -> frozenset[Cell]:
    """The grid minus the region {exclude_type, exclude_params}."""
    excluded = region_cells_for(rows, cols, str(params["exclude_type"]),
                                dict(params["exclude_params"]))
    return global_cells(rows, cols, params) - excluded


def region_cells_for(rows: int, cols: int, region_type: str,
                     params: Mapping[str, Any]) -> frozenset[Cell]:
    """Cells of one region kind with its parameters."""
    if region_type not in REGION_KINDS:
        raise ValueError(f"Unknown region_type: {region_type}")
    return REGION_KINDS.get(region_type)(rows, cols, params)


def region_cells(row: Mapping[str, Any]) -> frozenset[Cell]:
    """Permitted cells of a metadata row (rows, cols, region_type, region_params)."""
    params = dict(row.get("region_params") or {})
    return region_cells_for(int(row["rows"]), int(row["cols"]), str(row.get("region_type")),
                            params)
