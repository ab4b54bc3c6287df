"""Region kinds: their cells, their prompt phrases, and case-aware sampling.

Kinds are registered by name in :data:`REGION_KINDS`. Numeric kinds (ROW_RANGE,
COL_RANGE, RECTANGLE, VISUAL_REGION) are axis-aligned boxes with 1-based inclusive
bounds; GLOBAL is the whole grid; EXCLUSION is the complement of a numeric box.

A region's *case* says how it meets the scene's exception cells: ``zero`` (none inside),
``all`` (every one inside) or ``partial``. For EXCLUSION the case describes the
permitted cells (outside the excluded box). Sampling aims for a wanted case with a
bounded number of random draws, then enumerates every candidate region; when no region
of the wanted case exists it picks one of the nearest feasible case and labels it
``fallback_<got>_wanted_<wanted>``. There is no unbounded loop anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from rose_eval.registry import Registry
from rose_gen.core.schema import Cell, RegionSpec

CASES: tuple[str, ...] = ("zero", "partial", "all")
# Distance between cases, used to pick the nearest feasible case on fallback.
_CASE_RANK = {"zero": 0, "partial": 1, "all": 2}


class RegionError(ValueError):
    """A region cannot be built for this grid (e.g. it would be larger than the grid)."""


@dataclass(frozen=True)
class RegionSizes:
    """Size limits of numeric regions (v0.1's T3 sizes by default).

    Row/column ranges span ``line_min``..``line_max`` lines and at most half the grid
    (``floor(rows/2)`` or ``floor(cols/2)``); rectangles are ``rect_min``..``rect_max``
    cells on each side. ``attempts`` random draws are tried before enumerating.
    """

    line_min: int = 1
    line_max: int = 4
    rect_min: int = 2
    rect_max: int = 6
    attempts: int = 24

    def to_json(self) -> dict[str, int]:
        return {
            "line_min": self.line_min,
            "line_max": self.line_max,
            "rect_min": self.rect_min,
            "rect_max": self.rect_max,
            "attempts": self.attempts,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RegionSizes:
        return cls(**{k: int(v) for k, v in data.items()})


@dataclass(frozen=True)
class Candidates:
    """All boxes of one kind on one grid: ``boxes`` is (N, 4) of r1, r2, c1, c2;
    ``group`` gives each box's size class (sizes are drawn uniformly, then positions),
    sorted; ``starts`` and ``counts`` where each class begins in ``boxes`` and its size."""

    boxes: np.ndarray
    group: np.ndarray
    n_groups: int
    starts: np.ndarray
    counts: np.ndarray


class RegionKind(Protocol):
    """What a region kind provides."""

    name: str

    def mask(self, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
        """Boolean (rows, cols) array, True on the region's cells."""
        ...

    def phrase(self, params: Mapping[str, Any]) -> str:
        """Location phrase for COUNT/CLICK sentences (EXCLUSION: the ``<excluded>`` text)."""
        ...


REGION_KINDS: Registry[RegionKind] = Registry("region kind")


def _span(word: str, plural: str, a: int, b: int) -> str:
    return f"{word} {a}" if a == b else f"{plural} {a} to {b}"


@dataclass(frozen=True)
class BoxKind:
    """A numeric region: ``axis`` is ``rows`` (ROW_RANGE), ``cols`` (COL_RANGE) or
    ``rect`` (RECTANGLE, VISUAL_REGION)."""

    name: str
    axis: str

    # -- geometry -----------------------------------------------------------------
    def box(self, params: Mapping[str, Any], rows: int, cols: int) -> tuple[int, int, int, int]:
        """(r1, r2, c1, c2), 1-based inclusive."""
        if self.axis == "rows":
            return int(params["r1"]), int(params["r2"]), 1, cols
        if self.axis == "cols":
            return 1, rows, int(params["c1"]), int(params["c2"])
        return int(params["r1"]), int(params["r2"]), int(params["c1"]), int(params["c2"])

    def params_of(self, box: Sequence[int]) -> dict[str, int]:
        """v0.1 region_params for a box."""
        r1, r2, c1, c2 = (int(v) for v in box)
        if self.axis == "rows":
            return {"r1": r1, "r2": r2}
        if self.axis == "cols":
            return {"c1": c1, "c2": c2}
        return {"r1": r1, "r2": r2, "c1": c1, "c2": c2}

    def mask(self, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
        r1, r2, c1, c2 = self.box(params, rows, cols)
        if not (1 <= r1 <= r2 <= rows and 1 <= c1 <= c2 <= cols):
            raise RegionError(f"{self.name} {dict(params)} lies outside a {rows}x{cols} grid")
        out = np.zeros((rows, cols), dtype=bool)
        out[r1 - 1 : r2, c1 - 1 : c2] = True
        return out

    # -- words --------------------------------------------------------------------
    def noun(self, params: Mapping[str, Any]) -> str:
        """The region named without a preposition (``rows 3 to 5``, ``the cells from ...``)."""
        if self.axis == "rows":
            return _span("row", "rows", int(params["r1"]), int(params["r2"]))
        if self.axis == "cols":
            return _span("column", "columns", int(params["c1"]), int(params["c2"]))
        return "the cells " + self._from_to(params)

    @staticmethod
    def _from_to(params: Mapping[str, Any]) -> str:
        return (
            f"from row {params['r1']} column {params['c1']}"
            f" to row {params['r2']} column {params['c2']}"
        )

    def phrase(self, params: Mapping[str, Any]) -> str:
        if self.name == "VISUAL_REGION":
            return "inside the highlighted region"
        if self.axis == "rect":
            return self._from_to(params)
        return "in " + self.noun(params)

    # -- enumeration --------------------------------------------------------------
    def size_classes(self, rows: int, cols: int, sizes: RegionSizes) -> list[tuple[int, int]]:
        """Allowed (height, width) pairs on this grid; empty when none fits."""
        if self.axis == "rows":
            top = min(sizes.line_max, rows // 2)
            return [(h, cols) for h in range(sizes.line_min, top + 1)]
        if self.axis == "cols":
            top = min(sizes.line_max, cols // 2)
            return [(rows, w) for w in range(sizes.line_min, top + 1)]
        return [
            (h, w)
            for h in range(sizes.rect_min, min(sizes.rect_max, rows) + 1)
            for w in range(sizes.rect_min, min(sizes.rect_max, cols) + 1)
        ]

    def candidates(self, rows: int, cols: int, sizes: RegionSizes) -> Candidates:
        """Every box of every allowed size on a rows x cols grid (cached, read-only arrays)."""
        return _candidates(self, rows, cols, sizes)

    def _enumerate(self, rows: int, cols: int, sizes: RegionSizes) -> Candidates:
        classes = self.size_classes(rows, cols, sizes)
        if not classes:
            raise RegionError(
                f"no {self.name} of the configured sizes fits a {rows}x{cols} grid"
                f" (sizes {sizes.to_json()})"
            )
        # Class by class, then r1, then c1: every box of class g is one position of its
        # (rows - h + 1) x (cols - w + 1) grid of top-left corners, in row-major order.
        heights, widths = (np.array(v, dtype=np.int64) for v in zip(*classes, strict=True))
        across = cols - widths + 1
        sizes_g = (rows - heights + 1) * across
        group = np.repeat(np.arange(len(classes), dtype=np.int64), sizes_g)
        local = np.arange(group.size, dtype=np.int64) - np.repeat(np.cumsum(sizes_g) - sizes_g, sizes_g)
        r1 = local // across[group] + 1
        c1 = local % across[group] + 1
        boxes = np.stack([r1, r1 + heights[group] - 1, c1, c1 + widths[group] - 1], axis=1)
        starts = np.searchsorted(group, np.arange(len(classes)))
        counts = np.bincount(group, minlength=len(classes))
        for arr in (boxes, group, starts, counts):
            arr.flags.writeable = False
        return Candidates(boxes, group, len(classes), starts, counts)


@lru_cache(maxsize=4096)
def _candidates(kind: BoxKind, rows: int, cols: int, sizes: RegionSizes) -> Candidates:
    return kind._enumerate(rows, cols, sizes)


@dataclass(frozen=True)
class GlobalKind:
    """The whole grid."""

    name: str = "GLOBAL"

    def mask(self, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
        return np.ones((rows, cols), dtype=bool)

    def phrase(self, params: Mapping[str, Any]) -> str:
        return "in the whole grid"


@dataclass(frozen=True)
class ExclusionKind:
    """Every cell outside an excluded ROW_RANGE / COL_RANGE / RECTANGLE."""

    name: str = "EXCLUSION"

    def inner(self, params: Mapping[str, Any]) -> tuple[BoxKind, Mapping[str, Any]]:
        kind = REGION_KINDS.get(params["exclude_type"])
        if not isinstance(kind, BoxKind) or kind.name == "VISUAL_REGION":
            raise RegionError(f"EXCLUSION cannot exclude a {params['exclude_type']}")
        return kind, params["exclude_params"]

    def mask(self, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
        kind, inner = self.inner(params)
        return ~kind.mask(inner, rows, cols)

    def phrase(self, params: Mapping[str, Any]) -> str:
        """The ``<excluded>`` text of the T5 sentence (``rows 3 to 5``, ...)."""
        kind, inner = self.inner(params)
        return kind.noun(inner)


for _kind in (
    BoxKind("ROW_RANGE", "rows"),
    BoxKind("COL_RANGE", "cols"),
    BoxKind("RECTANGLE", "rect"),
    BoxKind("VISUAL_REGION", "rect"),
    GlobalKind(),
    ExclusionKind(),
):
    REGION_KINDS.add(_kind.name, _kind)


# -- cases --------------------------------------------------------------------------


def region_mask(region_type: str, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
    """Boolean (rows, cols) mask of a region given by its v0.1 type and params."""
    return REGION_KINDS.get(region_type).mask(params, rows, cols)


def region_phrase(region_type: str, params: Mapping[str, Any]) -> str:
    """The prompt phrase of a region given by its v0.1 type and params."""
    return REGION_KINDS.get(region_type).phrase(params)


def case_of(inside: int, total: int) -> str:
    """``zero`` / ``partial`` / ``all`` for ``inside`` of ``total`` exception cells."""
    if inside == 0:
        return "zero"
    return "all" if inside == total else "partial"


def fallback_label(got: str, wanted: str) -> str:
    """The region_case label: the case itself, or ``fallback_<got>_wanted_<wanted>``."""
    return got if got == wanted else f"fallback_{got}_wanted_{wanted}"


def target_mask(rows: int, cols: int, targets: Sequence[Cell]) -> np.ndarray:
    """Boolean (rows, cols) array, True on the exception cells."""
    out = np.zeros((rows, cols), dtype=bool)
    if targets:
        idx = np.asarray(targets, dtype=int) - 1
        out[idx[:, 0], idx[:, 1]] = True
    return out


def _prefix_sums(targets: np.ndarray) -> np.ndarray:
    """(rows + 1, cols + 1) 2-D prefix sums of a target mask (row and column 0 are zero)."""
    p = np.zeros((targets.shape[0] + 1, targets.shape[1] + 1), dtype=np.int64)
    p[1:, 1:] = targets.astype(np.int64).cumsum(0).cumsum(1)
    return p


def _box_counts(boxes: np.ndarray, targets: np.ndarray, prefix: np.ndarray | None = None) -> np.ndarray:
    """Number of target cells inside each 1-based inclusive box (2-D prefix sums, ``prefix``
    when the caller has them)."""
    p = _prefix_sums(targets) if prefix is None else prefix
    r1, r2, c1, c2 = boxes.T
    return p[r2, c2] - p[r1 - 1, c2] - p[r2, c1 - 1] + p[r1 - 1, c1 - 1]


def _case_codes(inside: np.ndarray, total: int) -> np.ndarray:
    """0 zero, 1 partial, 2 all (vectorised :func:`case_of`)."""
    return np.where(inside == 0, 0, np.where(inside == total, 2, 1))


def _sample_box(
    kind: BoxKind,
    rng: np.random.Generator,
    rows: int,
    cols: int,
    targets: np.ndarray,
    wanted_rank: int,
    sizes: RegionSizes,
    complement: bool,
) -> tuple[np.ndarray, int]:
    """A box whose (optionally complemented) case is ``wanted_rank`` if any exists, else one
    of the nearest feasible case. Returns (box, got_rank). Consumes a fixed number of draws."""
    cand = kind.candidates(rows, cols, sizes)
    total = int(targets.sum())
    prefix = _prefix_sums(targets)

    def codes_of(boxes: np.ndarray) -> np.ndarray:
        inside = _box_counts(boxes, targets, prefix)
        return _case_codes(total - inside if complement else inside, total)

    # Bounded random attempts: a size class uniformly, then a position uniformly.
    group_draw = rng.integers(0, cand.n_groups, size=sizes.attempts)
    pos_draw = rng.random(sizes.attempts)
    fallback_draw = rng.random()
    picks = cand.starts[group_draw] + (pos_draw * cand.counts[group_draw]).astype(int)
    picked = codes_of(cand.boxes[picks])  # only the drawn boxes: usually one of them has the case
    hits = np.flatnonzero(picked == wanted_rank)
    if hits.size:
        return cand.boxes[picks[hits[0]]], int(picked[hits[0]])
    # Enumerate: the wanted case if it exists at all, else the nearest feasible case(s).
    codes = codes_of(cand.boxes)
    distance = np.abs(codes - wanted_rank)
    pool = np.flatnonzero(distance == distance.min())
    idx = pool[min(int(fallback_draw * pool.size), pool.size - 1)]
    return cand.boxes[idx], int(codes[idx])


def sample_region(
    region_type: str,
    rng: np.random.Generator,
    rows: int,
    cols: int,
    targets: Sequence[Cell],
    wanted_case: str,
    sizes: RegionSizes = RegionSizes(),
    exclude_type: str | None = None,
) -> RegionSpec:
    """Draw one region of ``region_type`` aiming for ``wanted_case`` (truthfully labelled).

    For EXCLUSION, ``exclude_type`` names the excluded box kind and the case describes
    the permitted cells. GLOBAL takes no draws.
    """
    if wanted_case not in _CASE_RANK:
        raise RegionError(f"unknown region case {wanted_case!r}; known: {', '.join(CASES)}")
    tmask = target_mask(rows, cols, targets)
    if region_type == "GLOBAL":
        got = case_of(int(tmask.sum()), int(tmask.sum()))
        return RegionSpec("GLOBAL", {}, fallback_label(got, wanted_case), wanted_case)
    if region_type == "EXCLUSION":
        if exclude_type is None:
            raise RegionError("EXCLUSION needs an exclude_type (ROW_RANGE, COL_RANGE, RECTANGLE)")
        kind = REGION_KINDS.get(exclude_type)
        if not isinstance(kind, BoxKind) or kind.name == "VISUAL_REGION":
            raise RegionError(f"EXCLUSION cannot exclude a {exclude_type}")
        box, got = _sample_box(
            kind, rng, rows, cols, tmask, _CASE_RANK[wanted_case], sizes, complement=True
        )
        params = {"exclude_type": kind.name, "exclude_params": kind.params_of(box)}
        return RegionSpec("EXCLUSION", params, fallback_label(CASES[got], wanted_case), wanted_case)
    kind = REGION_KINDS.get(region_type)
    if not isinstance(kind, BoxKind):
        raise RegionError(f"cannot sample a region of type {region_type}")
    box, got = _sample_box(kind, rng, rows, cols, tmask, _CASE_RANK[wanted_case], sizes, False)
    return RegionSpec(kind.name, kind.params_of(box), fallback_label(CASES[got], wanted_case), wanted_case)

