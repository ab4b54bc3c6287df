"""The documented medium/hard rule.

A task is scored by adding points for four inputs, all recorded on the row as
``difficulty_inputs``:

- ``exception_count`` (cells different from the majority in the whole scene):
  ``count_points[n-1]`` (counts past the table use its last entry). A single exception
  is easy to miss; many exceptions are hard to enumerate completely.
- ``region_case`` (the case the region really has; T1 is ``all``): ``case_points``.
  A region with no target ("click nothing") is the classic trap.
- ``similarity_tier`` of the pair (``high`` / ``low`` / ``unknown``): ``tier_points``;
  the tier is ``high`` when the pair's similarity is at least ``high_similarity``.
- ``grid_size_profile`` (small / medium / large): ``grid_points``.

The task is ``hard`` when the score reaches ``hard_from``, else ``medium``. Only
``hard_from`` differs between subsets by default; it is calibrated so each subset's
share of hard T3 rows is near v0.1's (bench/rose_gen figures in the report).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DifficultyParams:
    """Points per input and the hard threshold (see the module docstring)."""

    hard_from: int = 7
    count_points: tuple[int, ...] = (4, 0, 1, 2, 3)
    case_points: Mapping[str, int] = field(
        default_factory=lambda: {"zero": 2, "partial": 0, "all": 0}
    )
    tier_points: Mapping[str, int] = field(
        default_factory=lambda: {"unknown": 0, "low": 0, "high": 2}
    )
    grid_points: Mapping[str, int] = field(
        default_factory=lambda: {"small": 0, "medium": 2, "large": 5}
    )
    high_similarity: float = 0.97

    def to_json(self) -> dict[str, Any]:
        return {
            "hard_from": self.hard_from,
            "count_points": list(self.count_points),
            "case_points": dict(self.case_points),
            "tier_points": dict(self.tier_points),
            "grid_points": dict(self.grid_points),
            "high_similarity": self.high_similarity,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DifficultyParams:
        return cls(
            hard_from=int(data["hard_from"]),
            count_points=tuple(int(v) for v in data["count_points"]),
            case_points={str(k): int(v) for k, v in data["case_points"].items()},
            tier_points={str(k): int(v) for k, v in data["tier_points"].items()},
            grid_points={str(k): int(v) for k, v in data["grid_points"].items()},
            high_similarity=float(data["high_similarity"]),
        )


def similarity_tier(similarity: float | None, params: DifficultyParams) -> str:
    """``high`` / ``low`` from a pair's similarity, ``unknown`` when the source gives none."""
    if similarity is None:
        return "unknown"
    return "high" if similarity >= params.high_similarity else "low"


def difficulty_score(inputs: Mapping[str, Any], params: DifficultyParams) -> int:
    """The rule's score for recorded inputs."""
    n = int(inputs["exception_count"])
    table = params.count_points
    count = table[min(max(n, 1), len(table)) - 1]
    return (
        count
        + params.case_points.get(inputs["region_case"], 0)
        + params.tier_points.get(inputs["similarity_tier"], 0)
        + params.grid_points.get(inputs["grid_size_profile"], 0)
    )


def rate(
    exception_count: int,
    region_case: str,
    similarity: float | None,
    grid_size_profile: str,
    params: DifficultyParams,
) -> tuple[str, dict[str, Any]]:
    """(``medium``/``hard``, the inputs to record on the row, including score and threshold)."""
    inputs: dict[str, Any] = {
        "exception_count": int(exception_count),
        "region_case": region_case,
        "similarity_tier": similarity_tier(similarity, params),
        "grid_size_profile": grid_size_profile,
    }
    score = difficulty_score(inputs, params)
    inputs["score"] = score
    inputs["hard_from"] = params.hard_from
    return ("hard" if score >= params.hard_from else "medium"), inputs
