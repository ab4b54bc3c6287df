"""Balanced answers (``profile=balanced``): no answer more likely than chance per template.

In v0.1's shape the answers are guessable from the prompt alone (a scene always has an
exception, a local count of 1 is the commonest answer, ...): the dev split's most frequent
answer per template scores far above uniform chance. A balanced subset draws its answers
first and builds the scene around them:

1. the global count ``n`` (T1's answer) uniform over ``0..max_count``, zero-exception scenes
   included (T1 ``COUNT(0)``, and every region empty);
2. for each region task (T2 row/column/box count, T3 click, T4 highlighted box, T5
   permitted cells) its answer count ``m`` from :func:`coupling`: uniform over
   ``0..local_max`` over the subset, never above ``n`` (the maximum-entropy conditional
   law with those margins, found by iterative proportional fitting);
3. every region drawn as the v0.1 sampler draws it (a size class uniformly, then a
   position) *without* looking at the exceptions, so the size the prompt states says
   nothing of the answer;
4. the exception cells placed uniformly at random subject to the drawn counts in every
   region (an exact integer search over the regions' overlap pattern). When a draw of
   regions cannot hold the counts (a 2x2 box cannot exclude 5 exceptions), the regions are
   drawn again, a bounded number of times, then the counts; then the scene fails with one
   line (never an unbounded loop).

The blind guess that can pass a click task is the empty answer (``DONE``, ``SUBMIT(0)``),
right ``1 / (local_max + 1)`` of the time, as ``COUNT(0)`` is on a count task: the prior
falls to uniform chance. Balancing is for the ``standard`` difficulty (a preset's extra
exceptions would move the counts after they are drawn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from rose_gen.core.schema import Cell, RegionSpec
from rose_gen.scene.regions import REGION_KINDS, BoxKind, RegionSizes, case_of

REGION_DRAWS = 64  # region draws tried for one set of counts
COUNT_DRAWS = 16  # sets of counts tried before the scene fails
SEARCH_NODES = 20_000  # bound of one placement search


class BalanceError(ValueError):
    """A balanced scene cannot be built (settings or an unlucky grid); one line."""


@dataclass(frozen=True)
class BalanceSpec:
    """Answer ranges of a balanced subset: T1 counts ``0..max_count``, every region task's
    answer count ``0..local_max`` (``local_max <= max_count``)."""

    max_count: int = 5
    local_max: int = 3

    def to_json(self) -> dict[str, int]:
        return {"max_count": self.max_count, "local_max": self.local_max}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BalanceSpec:
        return cls(max_count=int(data["max_count"]), local_max=int(data["local_max"]))


def validate_balance(spec: BalanceSpec, min_cells: int) -> None:
    """BalanceError when the ranges are impossible on the plan's smallest grid."""
    if not 0 <= spec.local_max < spec.max_count:
        raise BalanceError(f"balance.local_max must lie in 0..max_count-1 (got {spec.local_max}, "
                           f"max_count {spec.max_count})")
    if 2 * spec.max_count >= min_cells:
        raise BalanceError(f"balance.max_count {spec.max_count} leaves no majority on the smallest "
                           f"grid ({min_cells} cells); lower it")


@lru_cache(maxsize=16)
def coupling(max_count: int, local_max: int) -> tuple[tuple[float, ...], ...]:
    """P(m | n) for n in 0..max_count, m in 0..local_max: zero where m > n, margins uniform.

    Iterative proportional fitting from the all-ones lower-triangular matrix: the joint law
    of maximum entropy with uniform margins on that support (it exists: for every j,
    P(m >= j) <= P(n >= j) since local_max < max_count).
    """
    n_vals, m_vals = max_count + 1, local_max + 1
    joint = np.tril(np.ones((n_vals, m_vals)))
    for _ in range(2000):
        joint *= (1.0 / n_vals) / joint.sum(axis=1, keepdims=True)
        joint *= (1.0 / m_vals) / joint.sum(axis=0, keepdims=True)
    conditional = joint / joint.sum(axis=1, keepdims=True)
    return tuple(tuple(round(float(p), 12) for p in row) for row in conditional)


def draw_counts(rng: np.random.Generator, spec: BalanceSpec, n_regions: int) -> tuple[int, tuple[int, ...]]:
    """(n, the region tasks' answer counts)."""
    n = int(rng.integers(0, spec.max_count + 1))
    probs = np.asarray(coupling(spec.max_count, spec.local_max)[n])
    locals_ = tuple(int(rng.choice(probs.size, p=probs / probs.sum())) for _ in range(n_regions))
    return n, locals_


@dataclass(frozen=True)
class DrawnRegion:
    """One region task's region: its kind, params, and the cells its answer counts."""

    type: str
    params: Mapping[str, Any]
    counted: np.ndarray  # (rows, cols) bool: cells whose exceptions are the answer


def _box(kind: BoxKind, rng: np.random.Generator, rows: int, cols: int, sizes: RegionSizes) -> np.ndarray:
    cand = kind.candidates(rows, cols, sizes)
    group = int(rng.integers(0, cand.n_groups))
    return cand.boxes[int(cand.starts[group]) + int(rng.random() * int(cand.counts[group]))]


def draw_region(region_type: str, box_type: str, rng: np.random.Generator, rows: int, cols: int,
                sizes: RegionSizes) -> DrawnRegion:
    """A region of ``region_type`` drawn blind (EXCLUSION excludes a box of ``box_type``)."""
    if region_type == "EXCLUSION":
        kind = REGION_KINDS.get(box_type)
        params = {"exclude_type": kind.name, "exclude_params": kind.params_of(_box(kind, rng, rows, cols, sizes))}
        return DrawnRegion("EXCLUSION", params, ~kind.mask(params["exclude_params"], rows, cols))
    kind = REGION_KINDS.get(region_type)
    params = kind.params_of(_box(kind, rng, rows, cols, sizes))
    return DrawnRegion(kind.name, params, kind.mask(params, rows, cols))


def _search(caps: Sequence[int], sigs: Sequence[int], n: int, wanted: Sequence[int],
            order: Sequence[int], values: np.random.Generator) -> list[int] | None:
    """Atom counts x (0 <= x <= cap) summing to n with sum over atoms with bit t = wanted[t]."""
    k = len(wanted)
    x = [0] * len(caps)
    nodes = [0]
    # capacity still ahead of position i, per bit set / unset
    ahead_in = [[0] * k for _ in range(len(order) + 1)]
    ahead_out = [[0] * k for _ in range(len(order) + 1)]
    for i in range(len(order) - 1, -1, -1):
        a = order[i]
        for t in range(k):
            ahead_in[i][t] = ahead_in[i + 1][t] + (caps[a] if sigs[a] >> t & 1 else 0)
            ahead_out[i][t] = ahead_out[i + 1][t] + (0 if sigs[a] >> t & 1 else caps[a])

    def go(i: int, left: int, need: list[int]) -> bool:
        nodes[0] += 1
        if nodes[0] > SEARCH_NODES:
            return False
        if any(need[t] < 0 or need[t] > ahead_in[i][t] or left - need[t] > ahead_out[i][t] or left < need[t]
               for t in range(k)):
            return False
        if i == len(order):
            return left == 0
        a = order[i]
        top = min(caps[a], left)
        for v in values.permutation(top + 1):
            v = int(v)
            x[a] = v
            if go(i + 1, left - v, [need[t] - (v if sigs[a] >> t & 1 else 0) for t in range(k)]):
                return True
        x[a] = 0
        return False

    return list(x) if go(0, n, list(wanted)) else None


def place_targets(rng: np.random.Generator, rows: int, cols: int, regions: Sequence[DrawnRegion],
                  n: int, wanted: Sequence[int]) -> tuple[Cell, ...] | None:
    """``n`` exception cells with ``wanted[t]`` of them in region t's counted cells: a random
    feasible overlap pattern, then cells uniformly within it; None when none is found."""
    sig = np.zeros((rows, cols), dtype=np.int64)
    for t, region in enumerate(regions):
        sig |= region.counted.astype(np.int64) << t
    atoms = sorted(set(int(s) for s in sig.ravel()))
    cells_of = {a: np.flatnonzero(sig.ravel() == a) for a in atoms}
    caps = [int(cells_of[a].size) for a in atoms]
    order = [int(i) for i in rng.permutation(len(atoms))]
    x = _search(caps, atoms, n, wanted, order, rng)
    if x is None:
        return None
    flat: list[int] = []
    for a, count in zip(atoms, x, strict=True):
        if count:
            flat += [int(i) for i in rng.choice(cells_of[a], size=count, replace=False)]
    return tuple((i // cols + 1, i % cols + 1) for i in sorted(flat))


def region_spec(region: DrawnRegion, targets: Sequence[Cell]) -> RegionSpec:
    """The region with its truthful case (the case it was built for)."""
    inside = sum(1 for r, c in targets if region.counted[r - 1, c - 1])
    case = case_of(inside, len(targets))
    return RegionSpec(region.type, dict(region.params), case, case)


def balanced_scene(rng: np.random.Generator, spec: BalanceSpec, rows: int, cols: int,
                   kinds: Sequence[tuple[str, str]], sizes: RegionSizes
                   ) -> tuple[tuple[Cell, ...], tuple[RegionSpec, ...]]:
    """Exception cells and one region per ``(region_type, box_type)`` of ``kinds``, with the
    drawn answer counts. BalanceError when no draw fits (bounded)."""
    for _ in range(COUNT_DRAWS):
        n, wanted = draw_counts(rng, spec, len(kinds))
        for _ in range(REGION_DRAWS):
            regions = [draw_region(t, b, rng, rows, cols, sizes) for t, b in kinds]
            targets = place_targets(rng, rows, cols, regions, n, wanted)
            if targets is not None:
                return targets, tuple(region_spec(r, targets) for r in regions)
    raise BalanceError(f"no balanced placement on a {rows}x{cols} grid after {COUNT_DRAWS} x {REGION_DRAWS} "
                       "draws; lower balance.max_count or balance.local_max")
