"""Analyses beyond the public evaluator, computed from per-item evaluation records.

`run_analyses` is the one entry point the evaluator calls; its result is stored under
`analyses` in evaluation_summary.json, one key per analysis registered in `ANALYSES`
(in registration order). Each analysis lives in its own module; none of them changes a
public number (PASS, VALID, SOFT and the tables stay the evaluator's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_eval.analyses.abstention import abstention_summary
from rose_eval.analyses.bootstrap import scene_bootstrap
from rose_eval.analyses.bridges import global_click_bridge, matched_local_bridge
from rose_eval.analyses.consistency import scene_consistency
from rose_eval.analyses.gap import perception_action_gap
from rose_eval.analyses.lenient import lenient_summary
from rose_eval.registry import Registry


@dataclass(frozen=True)
class AnalysisInput:
    """What every analysis may read: per-item records, metadata by item id, bootstrap knobs."""

    items: Sequence[Mapping[str, Any]]
    metadata: Mapping[str, Mapping[str, Any]]
    seed: int = 0
    n_boot: int = 10_000


ANALYSES: Registry[Callable[[AnalysisInput], Any]] = Registry("analysis")


@ANALYSES.register("perception_action_gap")
def _gap(run: AnalysisInput) -> Any:
    return perception_action_gap(run.items)


@ANALYSES.register("scene_consistency")
def _consistency(run: AnalysisInput) -> Any:
    return scene_consistency(run.items)


@ANALYSES.register("global_click_bridge")
def _global_click(run: AnalysisInput) -> Any:
    return global_click_bridge(run.items, run.metadata)


@ANALYSES.register("matched_local_bridge")
def _matched_local(run: AnalysisInput) -> Any:
    return matched_local_bridge(run.items, run.metadata)


@ANALYSES.register("bootstrap")
def _bootstrap(run: AnalysisInput) -> Any:
    return scene_bootstrap(run.items, seed=run.seed, n_boot=run.n_boot)


@ANALYSES.register("lenient")
def _lenient(run: AnalysisInput) -> Any:
    return lenient_summary(run.items, run.metadata)


@ANALYSES.register("abstention")
def _abstention(run: AnalysisInput) -> Any:
    return abstention_summary(run.items)


def run_analyses(items: list[dict], metadata_rows: list[dict], *, seed: int = 0,
                 n_boot: int = 10_000) -> dict:
    """All registered analyses for one evaluated run (bridge entries None without bridge rows)."""
    run = AnalysisInput(items, {str(row.get("item_id")): row for row in metadata_rows},
                        seed, n_boot)
    return {name: ANALYSES.get(name)(run) for name in ANALYSES.names()}


__all__ = ["ANALYSES", "AnalysisInput", "run_analyses"]
