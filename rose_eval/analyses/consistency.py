"""Same-scene consistency: T2-T5 PASS conditioned on the same scene's T1 PASS.

Definition followed: the public ROSE analysis script
`analysis/analyze_scene_consistency.py` (`scene_template_map`, `analyze_model`):
- per subset and scene, a template counts as passed when any of its rows passed;
- T1 = share of scenes with a T1 row whose T1 passed;
- `<short>|T1` = PASS of that template over T1-correct scenes that have the template
  (missing pairs are counted separately, never as failures);
- Action Ret. = mean of L-Clk|T1, V-Clk|T1, Excl-CS|T1 available in the subset;
  Action Fail. = 1 - Action Ret.;
- macro_equal_subset = equal mean over subsets with a value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import (
    ACTION_TEMPLATES,
    MAIN_TEMPLATES,
    SUBSET_ORDER,
    T1,
    TEMPLATE_ORDER,
    macro,
    mean,
    template_of,
)

CONDITIONED_NAME: dict[str, str] = {
    "T2_COUNT_LOCAL_NUMERIC": "L-Cnt|T1",
    "T3_CLICK_LOCAL_NUMERIC": "L-Clk|T1",
    "T4_CLICK_VISUAL_REGION": "V-Clk|T1",
    "T5_CLICK_COUNT_EXCLUSION": "Excl-CS|T1",
}
METRIC_KEYS: tuple[str, ...] = ("T1", *CONDITIONED_NAME.values(), "Action Ret.", "Action Fail.")


def scene_pass_map(items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """subset -> scene -> template -> 1 if any row of that template passed, else 0."""
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for row in items:
        template = template_of(row)
        subset = str(row.get("rose_subset"))
        if template not in MAIN_TEMPLATES or subset not in SUBSET_ORDER:
            continue
        scene = str(row.get("scene_id"))
        passed = int(row.get("pass") or 0)
        out[subset][scene][template] = max(out[subset][scene].get(template, 0), passed)
    return out


def _subset_record(scenes: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    t1_scenes = [scene for scene, passes in scenes.items() if T1 in passes]
    t1_correct = [scene for scene in t1_scenes if scenes[scene][T1] == 1]
    record: dict[str, Any] = {
        "n_t1_scenes": len(t1_scenes),
        "n_t1_correct_scenes": len(t1_correct),
        "T1": len(t1_correct) / len(t1_scenes) if t1_scenes else None,
    }
    for template in TEMPLATE_ORDER[1:]:
        key = CONDITIONED_NAME[template]
        values = [scenes[s][template] for s in t1_correct if template in scenes[s]]
        record[key] = mean(values)
        record[f"n_{key}"] = len(values)
        record[f"missing_{key}"] = len(t1_correct) - len(values)
    retention = macro(record[CONDITIONED_NAME[t]] for t in ACTION_TEMPLATES)
    record["Action Ret."] = retention
    record["Action Fail."] = None if retention is None else 1.0 - retention
    return record


def scene_consistency(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Same-scene consistency per subset and as an equal-subset macro."""
    mapping = scene_pass_map(items)
    per_subset = {subset: _subset_record(mapping.get(subset, {})) for subset in SUBSET_ORDER}
    return {
        "condition": "same-scene T1_COUNT_GLOBAL pass == 1",
        "macro_equal_subset": {
            key: macro(per_subset[s].get(key) for s in SUBSET_ORDER) for key in METRIC_KEYS
        },
        "by_subset": per_subset,
        "definition": "analysis/analyze_scene_consistency.py (ROSE v0.1)",
    }
