"""Tiny hand-made per-item records (the public per_item_eval fields the analyses read)."""

from __future__ import annotations

from typing import Any

from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER

MODE = {
    "T1_COUNT_GLOBAL": "COUNT",
    "T2_COUNT_LOCAL_NUMERIC": "COUNT",
    "T3_CLICK_LOCAL_NUMERIC": "CLICK",
    "T4_CLICK_VISUAL_REGION": "CLICK",
    "T5_CLICK_COUNT_EXCLUSION": "CLICK_COUNT",
    "T1B_CLICK_GLOBAL": "CLICK",
    "T2B_COUNT_LOCAL_MATCHED": "COUNT",
    "T5_CLICK_EXCLUSION_SUBMIT": "CLICK_COUNT",
}
GLYPH, STYLE = SUBSET_ORDER[0], SUBSET_ORDER[1]
T1, T2, T3, T4, T5 = TEMPLATE_ORDER


def item(subset: str, scene: str, template: str, passed: int, **extra: Any) -> dict[str, Any]:
    """A per-item record; valid by default, soft = pass, ids derived from scene/template."""
    record: dict[str, Any] = {
        "item_id": f"{subset}:{scene}:{template}",
        "scene_id": scene,
        "rose_subset": subset,
        "task_template": template,
        "task_mode": MODE[template],
        "region_type": "GLOBAL",
        "region_case": "partial",
        "pass": passed,
        "format_valid": 1,
        "unified_soft": float(passed),
        "raw_text": "",
        "gt_count": 1,
        "gt_clicks": ["R1,C1"],
        "model": "m",
    }
    record.update(extra)
    return record


def scene(subset: str, name: str, passes: tuple[int, int, int, int, int]) -> list[dict[str, Any]]:
    """The five main items of one scene with the given PASS per template."""
    return [item(subset, name, t, p) for t, p in zip(TEMPLATE_ORDER, passes, strict=True)]
