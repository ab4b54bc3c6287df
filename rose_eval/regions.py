"""Region kinds -> region shapes over 1-based (row, col) cells, as the public v0.1 evaluator reads them.

A shape answers the two questions scoring asks (how many cells, does it hold this cell)
in constant time, without listing its cells: a :class:`Block` of rows r1..r2 and columns
c1..c2 (inclusive and, as in v0.1, *not* clipped to the grid), or an :class:`Outside`, the
grid minus another shape (EXCLUSION; clipped by construction). :meth:`Region.cells` lists
them when a set is wanted. Raises KeyError, TypeError or ValueError on malformed
parameters; the CLI turns those into one-line errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from rose_eval.registry import Registry

Cell = tuple[int, int]
MAX_REGION_CELLS = 1_000_000  # far above any real grid (<= 18 x 18): larger is corrupt metadata


def _span(low: int, high: int) -> int:
    return max(0, high - low + 1)


class Block(NamedTuple):
    """Rows r1..r2 x columns c1..c2, inclusive (build with :func:`block`)."""

    r1: int
    r2: int
    c1: int
    c2: int

    @property
    def size(self) -> int:
        return _span(self.r1, self.r2) * _span(self.c1, self.c2)

    def contains(self, cell: Cell) -> bool:
        return self.r1 <= cell[0] <= self.r2 and self.c1 <= cell[1] <= self.c2

    def size_within(self, rows: int, cols: int) -> int:
        """How many of its cells lie on a rows x cols grid."""
        return (_span(max(self.r1, 1), min(self.r2, rows))
                * _span(max(self.c1, 1), min(self.c2, cols)))

    def cells(self) -> frozenset[Cell]:
        return frozenset((r, c) for r in range(self.r1, self.r2 + 1)
                         for c in range(self.c1, self.c2 + 1))


def block(r1: int, r2: int, c1: int, c2: int) -> Block:
    """A Block, refused when it is absurdly large (corrupt metadata)."""
    shape = Block(r1, r2, c1, c2)
    if shape.size > MAX_REGION_CELLS:
        raise ValueError(f"region R{r1}..R{r2} x C{c1}..C{c2} is absurdly large")
    return shape


class Outside(NamedTuple):
    """The cells of a rows x cols grid that ``inner`` does not hold."""

    rows: int
    cols: int
    inner: Region

    @property
    def size(self) -> int:
        return _span(1, self.rows) * _span(1, self.cols) - self.inner.size_within(self.rows, self.cols)

    def contains(self, cell: Cell) -> bool:
        on_grid = 1 <= cell[0] <= self.rows and 1 <= cell[1] <= self.cols
        return on_grid and not self.inner.contains(cell)

    def size_within(self, rows: int, cols: int) -> int:
        if (rows, cols) != (self.rows, self.cols):
            return len({cell for cell in self.cells() if 1 <= cell[0] <= rows and 1 <= cell[1] <= cols})
        return self.size

    def cells(self) -> frozenset[Cell]:
        return block(1, self.rows, 1, self.cols).cells() - self.inner.cells()


Region = Block | Outside
RegionBuilder = Callable[[int, int, Mapping[str, Any]], Region]
REGION_KINDS: Registry[RegionBuilder] = Registry("region kind")


@REGION_KINDS.register("GLOBAL")
def whole_grid(rows: int, cols: int, params: Mapping[str, Any]) -> Region:
    """Every cell of the grid."""
    return block(1, rows, 1, cols)


@REGION_KINDS.register("ROW_RANGE")
def row_range(rows: int, cols: int, params: Mapping[str, Any]) -> Region:
    """Rows r1..r2, all columns."""
    return block(int(params["r1"]), int(params["r2"]), 1, cols)


@REGION_KINDS.register("COL_RANGE")
def col_range(rows: int, cols: int, params: Mapping[str, Any]) -> Region:
    """Columns c1..c2, all rows."""
    return block(1, rows, int(params["c1"]), int(params["c2"]))


def rectangle(rows: int, cols: int, params: Mapping[str, Any]) -> Region:
    """Rows r1..r2 x columns c1..c2."""
    return block(int(params["r1"]), int(params["r2"]), int(params["c1"]), int(params["c2"]))


REGION_KINDS.add("RECTANGLE", rectangle)
REGION_KINDS.add("VISUAL_REGION", rectangle)


@REGION_KINDS.register("EXCLUSION")
def exclusion(rows: int, cols: int, params: Mapping[str, Any]) -> Region:
    """The grid minus the region {exclude_type, exclude_params}."""
    inner = region_for(rows, cols, str(params["exclude_type"]), dict(params["exclude_params"]))
    whole_grid(rows, cols, params)  # the grid itself must be a sane size
    return Outside(rows, cols, inner)


def region_for(rows: int, cols: int, region_type: str, params: Mapping[str, Any]) -> Region:
    """The shape of one region kind with its parameters."""
    if region_type not in REGION_KINDS:
        raise ValueError(f"region_type {region_type!r} is not one of {', '.join(REGION_KINDS)}")
    return REGION_KINDS.get(region_type)(rows, cols, params)


def region_cells_for(rows: int, cols: int, region_type: str,
                     params: Mapping[str, Any]) -> frozenset[Cell]:
    """The cells of one region kind with its parameters."""
    return region_for(rows, cols, region_type, params).cells()


def region_cells(row: Mapping[str, Any]) -> frozenset[Cell]:
    """Permitted cells of a metadata row (rows, cols, region_type, region_params)."""
    params = dict(row.get("region_params") or {})
    return region_cells_for(int(row["rows"]), int(row["cols"]), str(row.get("region_type")),
                            params)
