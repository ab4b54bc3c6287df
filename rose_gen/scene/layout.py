"""Grid layouts: size profiles, cell sizes and exception counts per layout family.

A *layout family* (registered in :data:`LAYOUT_FAMILIES`) fixes the grid-size profiles
(row and column ranges), the cell-size range and the largest exception count. A
subset's :class:`LayoutParams` adds how often each profile is used and the
exception-count distribution; the defaults are v0.1's observed test-split counts
(facts section 2), used as probabilities. Rows and columns are drawn independently
inside the profile's range; exception cells are placed uniformly over the grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rose_eval.registry import Registry
from rose_gen.core.schema import Cell


@dataclass(frozen=True)
class GridProfile:
    """A named grid-size range (inclusive)."""

    name: str
    rows: tuple[int, int]
    cols: tuple[int, int]


@dataclass(frozen=True)
class LayoutFamily:
    """Profiles, cell-size range (inclusive, px) and the maximum exception count."""

    name: str
    profiles: tuple[GridProfile, ...]
    cell_size: tuple[int, int]
    max_exceptions: int

    def profile(self, name: str) -> GridProfile:
        for p in self.profiles:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.profiles)
        raise KeyError(f"layout family {self.name} has no profile {name!r}; known: {known}")


def _square(name: str, lo: int, hi: int) -> GridProfile:
    return GridProfile(name, (lo, hi), (lo, hi))


LAYOUT_FAMILIES: Registry[LayoutFamily] = Registry("layout family")
LAYOUT_FAMILIES.add(
    "glyph_emoji",
    LayoutFamily(
        "glyph_emoji",
        (_square("small", 8, 10), _square("medium", 11, 14), _square("large", 15, 18)),
        (42, 64),
        5,
    ),
)
LAYOUT_FAMILIES.add(
    "pixel_edit",
    LayoutFamily(
        "pixel_edit",
        (_square("small", 7, 8), _square("medium", 9, 11), _square("large", 12, 13)),
        (120, 156),
        6,
    ),
)
LAYOUT_FAMILIES.add(
    "pixel_content",
    LayoutFamily(
        "pixel_content",
        (_square("small", 8, 10), _square("medium", 11, 13), _square("large", 14, 16)),
        (120, 150),
        8,
    ),
)

# v0.1 test-split observations (facts section 2), used as default weights.
V0_1_PROFILE_MIX: dict[str, dict[str, float]] = {
    "ROSE-ChineseGlyph": {"small": 93, "medium": 138, "large": 70},
    "ROSE-EmojiStyle": {"small": 76, "medium": 87, "large": 58},
    "ROSE-EmojiContent": {"small": 65, "medium": 100, "large": 56},
    "ROSE-PixelEdit": {"small": 50, "medium": 111, "large": 60},
    "ROSE-PixelContent": {"small": 16, "medium": 86, "large": 46},
}
V0_1_EXCEPTION_COUNTS: dict[str, tuple[float, ...]] = {
    "ROSE-ChineseGlyph": (87, 85, 55, 52, 22),
    "ROSE-EmojiStyle": (66, 51, 41, 38, 25),
    "ROSE-EmojiContent": (70, 47, 44, 35, 25),
    "ROSE-PixelEdit": (14, 43, 42, 46, 51, 25),
    "ROSE-PixelContent": (16, 17, 34, 31, 16, 15, 9, 10),
}


@dataclass(frozen=True)
class LayoutParams:
    """One subset's layout knobs.

    ``profile_weights``: relative frequency of each profile of the family.
    ``exception_weights[i]``: relative frequency of i+1 exception cells.
    ``cell_size``: inclusive px range, ``None`` for the family's.
    """

    family: str = "glyph_emoji"
    profile_weights: Mapping[str, float] = field(
        default_factory=lambda: dict(V0_1_PROFILE_MIX["ROSE-ChineseGlyph"])
    )
    exception_weights: tuple[float, ...] = V0_1_EXCEPTION_COUNTS["ROSE-ChineseGlyph"]
    cell_size: tuple[int, int] | None = None

    def layout_family(self) -> LayoutFamily:
        return LAYOUT_FAMILIES.get(self.family)

    def cell_range(self) -> tuple[int, int]:
        return self.cell_size if self.cell_size is not None else self.layout_family().cell_size

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "profile_weights": dict(self.profile_weights),
            "exception_weights": list(self.exception_weights),
            "cell_size": list(self.cell_size) if self.cell_size is not None else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LayoutParams:
        cell = data.get("cell_size")
        return cls(
            family=data["family"],
            profile_weights={str(k): float(v) for k, v in data["profile_weights"].items()},
            exception_weights=tuple(float(v) for v in data["exception_weights"]),
            cell_size=(int(cell[0]), int(cell[1])) if cell is not None else None,
        )


@dataclass(frozen=True)
class Layout:
    """One scene's grid: profile, size, cell size and exception cells (placement order)."""

    grid_size_profile: str
    rows: int
    cols: int
    cell_size: int
    target_cells: tuple[Cell, ...]


def _normalised(weights: np.ndarray, what: str) -> np.ndarray:
    weights = np.asarray(weights, dtype=float)
    if weights.size == 0 or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError(f"{what} must be non-negative with a positive sum")
    return weights / weights.sum()


def sample_layout(params: LayoutParams, rng: np.random.Generator) -> Layout:
    """Draw a profile, rows and cols (independently), a cell size and the exception cells."""
    family = params.layout_family()
    names = [p.name for p in family.profiles]
    unknown = sorted(set(params.profile_weights) - set(names))
    if unknown:
        raise ValueError(f"unknown profile(s) {unknown} for layout family {family.name}")
    probs = _normalised([params.profile_weights.get(n, 0.0) for n in names], "profile weights")
    profile = family.profiles[int(rng.choice(len(names), p=probs))]
    rows = int(rng.integers(profile.rows[0], profile.rows[1] + 1))
    cols = int(rng.integers(profile.cols[0], profile.cols[1] + 1))
    lo, hi = params.cell_range()
    cell = int(rng.integers(lo, hi + 1))
    n_probs = _normalised(params.exception_weights, "exception weights")
    n = int(rng.choice(n_probs.size, p=n_probs)) + 1
    if n > rows * cols:
        raise ValueError(f"{n} exceptions do not fit a {rows}x{cols} grid")
    flat = rng.choice(rows * cols, size=n, replace=False)
    cells = tuple((int(i // cols) + 1, int(i % cols) + 1) for i in flat)
    return Layout(profile.name, rows, cols, cell, cells)
