"""Analyses beyond the public evaluator, computed from per-item evaluation records.

`run_analyses` is the one entry point the evaluator calls; its result is stored under
`analyses` in evaluation_summary.json. Each analysis lives in its own module and is
registered in `ANALYSES` under the key it is stored under; none of them changes a
public number (PASS, VALID, SOFT and the tables are the evaluator's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rose_eval.analyses.abstention import abstention_summary
from rose_eval.analyses.bootstrap import scene_bootstrap
from rose_eval.analyses.bridges import global_click_bridge, matched_local_bridge
from rose_eval.analyses.consistency import scene_consistency
from rose_eval.analyses.gap import perception_action_gap
from rose_eval.analyses.lenient import lenient_summary

Items = Sequence[Mapping[str, Any]]
Metadata = Mapping[str, Mapping[str, Any]]


ANALYSES: dict[str, Callable[[Items, Metadata, int, int], Any]] = {
    "perception_action_gap": lambda items, meta, seed, n_boot: perception_action_gap(items),
    "scene_consistency": lambda items, meta, seed, n_boot: scene_consistency(items),
    "global_click_bridge": lambda items, meta, seed, n_boot: global_click_bridge(items, meta),
    "matched_local_bridge": lambda items, meta, seed, n_boot: matched_local_bridge(items, meta),
    "bootstrap": lambda items, meta, seed, n_boot: scene_bootstrap(items, seed=seed,
                                                                   n_boot=n_boot),
    "lenient": lambda items, meta, seed, n_boot: lenient_summary(items, meta),
    "abstention": lambda items, meta, seed, n_boot: abstention_summary(items),
}


def run_analyses(items: list[dict], metadata_rows: list[dict], *, seed: int = 0,
                 n_boot: int = 10_000) -> dict:
    """All analyses for one evaluated run; bridge entries are None without bridge rows."""
    metadata = {str(row.get("item_id")): row for row in metadata_rows}
    return {name: analysis(items, metadata, seed, n_boot) for name, analysis in ANALYSES.items()}


__all__ = ["ANALYSES", "run_analyses"]
