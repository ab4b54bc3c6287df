"""The documented medium/hard rule.

A task is scored by adding points for four inputs, all recorded on the row as
``difficulty_inputs``:

- ``exception_count`` (cells different from the majority in the whole scene):
  ``count_points[n-1]`` (counts past the table use its last entry). A single exception
  is easy to miss; many exceptions are hard to enumerate completely.
- ``region_case`` (the case the region really has; T1 is ``all``): ``case_points``.
  A region with no target ("click nothing") is the classic trap.
- ``similarity_tier`` of the pair (``high`` / ``low`` / ``unknown``): ``tier_points``.
  Sources measure similarity on their own scales (glyph ink overlap, emoji thumbnail
  cosine, sprite difference), so the tier is relative to the source's pool: ``high``
  when the pair is among the ``high_similarity_share`` most similar pairs of its pool
  (its similarity reaches :func:`similarity_cut`), ``low`` otherwise, ``unknown`` when
  the source gives no similarity. ``high_similarity`` (a number) replaces the relative
  cut by an absolute one.
- ``grid_size_profile`` (small / medium / large): ``grid_points``.

The task is ``hard`` when the score reaches ``hard_from``, else ``medium``.

A fixed threshold on an integer score cannot hold a share: one seed of the v0_1 plan
puts 46 % or 59 % of EmojiContent's T3 tasks at or above neighbouring thresholds, and
the share moves by ±6 points between seeds. So a subset may instead set ``hard_share``
(the v0_1 calibration does: v0.1's shares of hard T3 rows). Then each template's
``floor(hard_share * n + 0.5)`` highest-ranked tasks of the subset are hard, ranked by score
and, within a score, by ``tie_break`` (a seeded draw per scene, recorded). The row
records the cut it was given, so the label still follows from the row alone: hard when
``(score, tie_break) >= (hard_from, hard_tie_from)``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rose_gen.core.schema import SceneSpec


@dataclass(frozen=True)
class DifficultyParams:
    """Points per input and the hard threshold (see the module docstring)."""

    hard_from: int = 7
    count_points: tuple[int, ...] = (4, 0, 1, 2, 3)
    case_points: Mapping[str, int] = field(
        default_factory=lambda: {"zero": 2, "partial": 0, "all": 0}
    )
    tier_points: Mapping[str, int] = field(
        default_factory=lambda: {"unknown": 0, "low": 0, "high": 1}
    )
    grid_points: Mapping[str, int] = field(
        default_factory=lambda: {"small": 0, "medium": 2, "large": 5}
    )
    high_similarity: float | None = None
    high_similarity_share: float = 0.2
    hard_share: float | None = None
    hard_tie_from: float = 0.0

    def to_json(self) -> dict[str, Any]:
        share = {} if self.hard_share is None else {"hard_share": self.hard_share, "hard_tie_from": self.hard_tie_from}
        return {
            "hard_from": self.hard_from,
            "count_points": list(self.count_points),
            "case_points": dict(self.case_points),
            "tier_points": dict(self.tier_points),
            "grid_points": dict(self.grid_points),
            "high_similarity": self.high_similarity,
            "high_similarity_share": self.high_similarity_share,
            **share,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DifficultyParams:
        return cls(
            hard_from=int(data["hard_from"]),
            count_points=tuple(int(v) for v in data["count_points"]),
            case_points={str(k): int(v) for k, v in data["case_points"].items()},
            tier_points={str(k): int(v) for k, v in data["tier_points"].items()},
            grid_points={str(k): int(v) for k, v in data["grid_points"].items()},
            high_similarity=None if data["high_similarity"] is None else float(data["high_similarity"]),
            high_similarity_share=float(data["high_similarity_share"]),
            hard_share=None if data.get("hard_share") is None else float(data["hard_share"]),
            hard_tie_from=float(data.get("hard_tie_from", 0.0)),
        )


def similarity_cut(similarities: Sequence[float | None], params: DifficultyParams) -> float | None:
    """The similarity at which a pair of this pool is tier ``high`` (None: no similarities).

    The ``ceil(share * m)`` most similar of the pool's ``m`` scored pairs reach the cut
    (ties included), unless ``params.high_similarity`` fixes an absolute cut.
    """
    if params.high_similarity is not None:
        return float(params.high_similarity)
    values = np.sort(np.array([s for s in similarities if s is not None], dtype=float))
    if values.size == 0:
        return None
    n_high = max(1, math.ceil(params.high_similarity_share * values.size))
    return float(values[values.size - min(n_high, values.size)])


def similarity_tier(similarity: float | None, cut: float | None) -> str:
    """``high`` / ``low`` against the pool's cut, ``unknown`` without a similarity."""
    if similarity is None or cut is None:
        return "unknown"
    return "high" if similarity >= cut else "low"


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
    tier: str,
    grid_size_profile: str,
    params: DifficultyParams,
    tie_break: float | None = None,
) -> tuple[str, dict[str, Any]]:
    """(``medium``/``hard``, the inputs to record on the row, including score and threshold).

    ``tie_break`` orders tasks of equal score under ``hard_share`` (recorded with the cut).
    """
    inputs: dict[str, Any] = {
        "exception_count": int(exception_count),
        "region_case": region_case,
        "similarity_tier": tier,
        "grid_size_profile": grid_size_profile,
    }
    score = difficulty_score(inputs, params)
    inputs["score"] = score
    inputs["hard_from"] = params.hard_from
    if tie_break is not None:
        inputs["tie_break"] = tie_break
        inputs["hard_tie_from"] = params.hard_tie_from
    return _label(score, tie_break, params.hard_from, params.hard_tie_from), inputs


def _label(score: int, tie_break: float | None, hard_from: int, hard_tie_from: float) -> str:
    """The rule's verdict: hard when (score, tie_break) reaches the cut (without a tie-break, the score alone)."""
    hard = score >= hard_from if tie_break is None else (score, tie_break) >= (hard_from, hard_tie_from)
    return "hard" if hard else "medium"


def share_cut(ranks: Sequence[tuple[int, float]], share: float) -> tuple[int, float]:
    """The (score, tie_break) cut that makes ``floor(share * n + 0.5)`` of the ranked tasks hard.

    Ranks are (score, tie_break) pairs; a task is hard when its pair reaches the cut. With
    no task to make hard the cut lies above every score. (:func:`share_cut_arrays` on the pairs.)
    """
    scores = np.fromiter((r[0] for r in ranks), np.int64, len(ranks))
    ties = np.fromiter((r[1] for r in ranks), np.float64, len(ranks))
    return share_cut_arrays(scores, ties, share)


def share_cut_arrays(scores: np.ndarray, ties: np.ndarray, share: float) -> tuple[int, float]:
    """:func:`share_cut` of the pairs ``zip(scores, ties)``, kept as int64 and float64 arrays
    (16 B a task instead of a tuple's ~100) so a subset's tasks can be streamed."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"hard_share must lie in [0, 1], got {share}")
    n = len(scores)
    n_hard = math.floor(share * n + 0.5)
    if n_hard == 0:
        return (int(scores.max()) + 1 if n else 1, 0.0)
    at = np.lexsort((ties, scores))[n - n_hard]  # ascending (score, tie); the n_hard-th from the top
    return (int(scores[at]), float(ties[at]))


def apply_cut(recorded: Mapping[str, Any], cut: tuple[int, float]) -> tuple[str, dict[str, Any]]:
    """A task's label and recorded inputs under a :func:`share_cut` (inputs from :func:`rate`)."""
    inputs = {**recorded, "hard_from": int(cut[0]), "hard_tie_from": float(cut[1])}
    return _label(int(recorded["score"]), float(recorded["tie_break"]), *cut), inputs


def rank_difficulty(scenes: Sequence[SceneSpec], hard_share: float) -> list[SceneSpec]:
    """Label each template's ``hard_share`` highest-ranked tasks of a subset's ``scenes`` hard (see the
    module docstring)."""
    cuts = difficulty_cuts((s.difficulty_inputs for s in scenes), hard_share)
    return [apply_cuts(s, cuts) for s in scenes]


def difficulty_cuts(inputs: Iterable[Mapping[str, Mapping[str, Any]]], hard_share: float) -> dict[str, tuple[int, float]]:
    """Each template's :func:`share_cut` over a subset's ``difficulty_inputs``.

    Only (score, tie_break) is kept per task, in typed arrays (16 B a task), so the subset's
    scenes can be streamed.
    """
    ranks: dict[str, tuple[array, array]] = {}
    for recorded in inputs:
        for t, r in recorded.items():
            scores, ties = ranks.setdefault(t, (array("q"), array("d")))
            scores.append(int(r["score"]))
            ties.append(float(r["tie_break"]))
    return {t: share_cut_arrays(np.frombuffer(scores, np.int64), np.frombuffer(ties, np.float64), hard_share)
            for t, (scores, ties) in ranks.items()}


def apply_cuts(scene: SceneSpec, cuts: Mapping[str, tuple[int, float]]) -> SceneSpec:
    """``scene`` labelled under its subset's :func:`difficulty_cuts`."""
    rated = {t: apply_cut(recorded, cuts[t]) for t, recorded in scene.difficulty_inputs.items()}
    return replace(scene, difficulty={t: label for t, (label, _) in rated.items()},
                   difficulty_inputs={t: inputs for t, (_, inputs) in rated.items()})
