"""Same-scene consistency: T2-T5 PASS conditioned on the same scene's T1 PASS.

Definitions (those of the ROSE v0.1 analysis ``analyze_scene_consistency.py``): per
subset, every scene gets one verdict per main template, passed when any of its rows of
that template passed. T1 is the share of scenes with a T1 verdict that passed;
``<short>|T1`` is that template's pass share over the T1-correct scenes that have it
(scenes without the template are counted as missing, never as failures); Action Ret. is
the mean of the three action templates' values, Action Fail. its complement; the macro is
the equal-subset mean of the subsets that have a value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ACTION_TEMPLATES, MAIN_TEMPLATES, T1
from rose_eval.summaries import (
    Derived,
    Population,
    Stat,
    Table,
    complement,
    count,
    macro,
    summarize,
)
from rose_eval.vocab import SUBSET_ORDER, template_of

CONDITIONED_NAME: dict[str, str] = {
    "T2_COUNT_LOCAL_NUMERIC": "L-Cnt|T1",
    "T3_CLICK_LOCAL_NUMERIC": "L-Clk|T1",
    "T4_CLICK_VISUAL_REGION": "V-Clk|T1",
    "T5_CLICK_COUNT_EXCLUSION": "Excl-CS|T1",
}
METRIC_KEYS: tuple[str, ...] = ("T1", *CONDITIONED_NAME.values(), "Action Ret.", "Action Fail.")

# The rows of this table are scenes: {template: 1 passed / 0 failed} for the templates present.
SCENE_POPULATIONS: dict[str, Population] = {
    "with_t1": Population(lambda scene: T1 in scene),
    "t1_correct": Population(lambda scene: scene[T1] == 1, within="with_t1"),
    **{t: Population(lambda scene, t=t: t in scene, within="t1_correct") for t in CONDITIONED_NAME},
}
SUBSET_TABLE: Table = (
    Stat("n_t1_scenes", population="with_t1", reduce=count),
    Stat("n_t1_correct_scenes", population="t1_correct", reduce=count),
    Stat("T1", T1, "with_t1"),
    *(entry for t, name in CONDITIONED_NAME.items() for entry in (
        Stat(name, t, t),
        Stat(f"n_{name}", population=t, reduce=count),
        Derived(f"missing_{name}", ("n_t1_correct_scenes", f"n_{name}"), lambda a, b: a - b),
    )),
    Derived("Action Ret.", tuple(CONDITIONED_NAME[t] for t in ACTION_TEMPLATES),
            lambda *values: macro(values)),
    Derived("Action Fail.", ("Action Ret.",), complement),
)


def scene_verdicts(items: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, int]]]:
    """Per known subset, one {template: passed} record per scene (any passing row passes)."""
    scenes: dict[str, dict[str, dict[str, int]]] = {subset: {} for subset in SUBSET_ORDER}
    for row in items:
        template, subset = template_of(row), str(row.get("rose_subset"))
        if template in MAIN_TEMPLATES and subset in scenes:
            verdict = scenes[subset].setdefault(str(row.get("scene_id")), {})
            verdict[template] = max(verdict.get(template, 0), int(row.get("pass") or 0))
    return {subset: list(by_scene.values()) for subset, by_scene in scenes.items()}


def scene_consistency(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Same-scene consistency per subset and as an equal-subset macro."""
    per_subset = {subset: summarize(scenes, SUBSET_TABLE, SCENE_POPULATIONS)
                  for subset, scenes in scene_verdicts(items).items()}
    return {
        "condition": "same-scene T1_COUNT_GLOBAL pass == 1",
        "macro_equal_subset": {key: macro(r[key] for r in per_subset.values()) for key in METRIC_KEYS},
        "by_subset": per_subset,
        "definition": "analysis/analyze_scene_consistency.py (ROSE v0.1)",
    }
