"""The replay report: scene counts by asset kind, the substitution table, inconsistencies and
defects of the released rows, carried fields, difficulty agreement, scenes not rendered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rose_gen.assets.font_match import KINDS
from rose_gen.check.replay.assets import Substitution
from rose_gen.check.replay.rating import agreement
from rose_gen.check.replay.run import SceneOutcome
from rose_gen.check.replay.scenes import CARRIED_LABELS


def table_entry(s: Substitution) -> tuple[str, str, str]:
    """(asked, used, kind) at the level of the substitution table: font names, emoji styles and
    vendors (``twemoji_svg`` -> ``twemoji``), pixel files as one class per subset."""
    if s.what.endswith("emoji"):
        return s.asked.split(":")[0], s.used.split(":")[0], s.kind
    if s.what.startswith("pixel"):
        used = {"stand_in": "procedural stand-in", "exact": "our sprite library"}.get(s.kind, "--pixel_assets file")
        return s.what, used, s.kind
    return s.asked, s.used, s.kind


def _count(values: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def summarize(outcomes: Sequence[SceneOutcome]) -> dict[str, Any]:
    """Counts per subset and kind, the font/style table, inconsistencies and unrendered scenes."""
    kinds: dict[str, dict[str, int]] = {}
    assets: dict[tuple[str, str, str, str], int] = {}
    for o in outcomes:
        per = kinds.setdefault(o.scene.subset, dict.fromkeys(KINDS, 0))
        per[o.kind] += 1
        for s in o.substitutions:
            k = (o.scene.subset, *table_entry(s))
            assets[k] = assets.get(k, 0) + 1
    totals = dict.fromkeys(KINDS, 0)
    for per in kinds.values():
        for k, v in per.items():
            totals[k] += v
    found = [i for o in outcomes for i in o.inconsistencies]
    return {
        "scenes": len(outcomes),
        "rows": sum(len(o.rows) for o in outcomes),
        "scenes_rendered": sum(1 for o in outcomes if o.images),
        "scene_kinds": {"total": totals, **kinds},
        "assets": [{"subset": s, "asked": a, "used": u, "kind": k, "uses": n}
                   for (s, a, u, k), n in sorted(assets.items())],
        "inconsistencies_by_field": _count([f"{i.field} ({i.kind})" for i in found]),
        "inconsistencies": [i.to_json() for i in found],
        "not_rendered": [{"scene_id": o.scene.scene_id, "status": o.status} for o in outcomes
                         if o.status.startswith("not_rendered") and "not requested" not in o.status],
        "invisible_exceptions": [{"scene_id": o.scene.scene_id, "why": invisible_reason(o)}
                                 for o in outcomes if o.visible is False],
        "carried_fields": {"labels": list(CARRIED_LABELS),
                           "subset_fields": _count([f for o in outcomes for f in o.carried])},
        "difficulty_agreement": agreement((o.scene.subset, r, ours) for o in outcomes for r, ours in o.difficulty),
    }


def invisible_reason(o: SceneOutcome) -> str:
    """Why a scene's exception tile does not differ visibly from its majority tile."""
    defect = next((i.why for i in o.inconsistencies if i.kind == "defect"), None)
    if defect is not None:
        return f"v0.1 defect: {defect}"
    used = ", ".join(s.used for s in o.substitutions)
    return f"majority and exception tiles look alike at {o.scene.cell_size} px with {used}"
