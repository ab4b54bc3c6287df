"""Our medium/hard rule (:mod:`rose_gen.scene.difficulty`) applied to a replayed scene.

v0.1 did not publish its rule, so its ``difficulty`` labels are carried and only *compared*
with ours (the agreement rate of the report). Rows that record the rule's inputs
(``difficulty_inputs``, our own releases) publish their rule: there the label and the inputs
are derived and a disagreement is an inconsistency.

The rule's inputs for a replayed scene: the exception count and the grid profile of the
scene, the true case of the task's region (T1: ``all``), and the pair's similarity tier —
the recorded ``similarity_tier`` when the row has one; else, from a numeric ``similarity``,
``high`` for the most similar share of the subset's replayed scenes (as
:func:`rose_gen.scene.difficulty.similarity_cut` does for a pool); else from v0.1's
``similarity_level`` (``high`` -> high, ``unknown`` or none -> unknown, other levels -> low).
The points are the standard preset's; ``hard_from`` is the recorded one, else the standard
calibration for the subset (``rose_gen.scene.v0_1_plans.V0_1_HARD_FROM``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rose_gen.core.schema import RegionSpec
from rose_gen.scene.difficulty import DifficultyParams, rate, similarity_cut, similarity_tier
from rose_gen.scene.v0_1_plans import V0_1_HARD_FROM

LEVEL_TIERS = {"high": "high", "unknown": "unknown"}  # other v0.1 similarity levels are "low"
DEFAULT_HARD_FROM = 7


def subset_cut(rows: Iterable[Mapping[str, Any]]) -> float | None:
    """The ``high`` tier's similarity cut over the scenes' numeric similarities (None: none)."""
    values = [float(r["similarity"]) for r in rows if isinstance(r.get("similarity"), (int, float))]
    return similarity_cut(values, DifficultyParams()) if values else None


def tier_of(row: Mapping[str, Any], cut: float | None) -> str:
    """The similarity tier of a scene's row (module docstring)."""
    recorded = row.get("difficulty_inputs")
    if isinstance(recorded, Mapping) and "similarity_tier" in recorded:
        return str(recorded["similarity_tier"])
    if isinstance(row.get("similarity"), (int, float)):
        return similarity_tier(float(row["similarity"]), cut)
    level = row.get("similarity_level")
    return "unknown" if level is None else LEVEL_TIERS.get(str(level), "low")


def params_for(subset: str, recorded: Mapping[str, Any] | None) -> DifficultyParams:
    """Standard points with the recorded cut (``hard_from``, ``hard_tie_from``), else the subset's calibrated one."""
    if recorded and "hard_from" in recorded:
        return DifficultyParams(hard_from=int(recorded["hard_from"]),
                                hard_tie_from=float(recorded.get("hard_tie_from", 0.0)))
    return DifficultyParams(hard_from=V0_1_HARD_FROM.get(subset, DEFAULT_HARD_FROM))


def rate_templates(templates: Iterable[str], regions: Mapping[str, RegionSpec], exceptions: int, tier: str,
                   profile: str, subset: str,
                   recorded: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Template -> (our label, our recorded inputs) for the scene's templates.

    Each template is rated with the cut its row records (a ranked subset gives each template
    its own cut) and the row's ``tie_break``; rows without them get the subset's calibration.
    """
    out = {}
    for template in templates:
        case = regions[template].got_case if template in regions else "all"
        mine = recorded.get(template)
        tie_break = mine.get("tie_break") if mine else None
        out[template] = rate(exceptions, case, tier, profile, params_for(subset, mine),
                             None if tie_break is None else float(tie_break))
    return out


def agreement(pairs: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """Agreement of released and our labels from (subset, released, ours) triples, overall and per subset."""
    total = [0, 0]
    per: dict[str, list[int]] = {}
    confusion: dict[str, int] = {}
    for subset, released, ours in pairs:
        for counts in (total, per.setdefault(subset, [0, 0])):
            counts[0] += int(released == ours)
            counts[1] += 1
        key = f"released {released} / ours {ours}"
        confusion[key] = confusion.get(key, 0) + 1

    def rate_of(c: list[int]) -> dict[str, Any]:
        return {"agree": c[0], "rows": c[1], "rate": round(c[0] / c[1], 4) if c[1] else None}

    # A label recorded in replay reports, kept as written so reports stay byte-identical
    # (the rule is rose_gen/scene/difficulty.py, the inputs this module).
    return {"rule": "rose_gen.difficulty standard points (see rose_gen/replay/rating.py for the inputs)",
            **rate_of(total), "per_subset": {s: rate_of(c) for s, c in per.items()},
            "confusion": dict(sorted(confusion.items()))}
