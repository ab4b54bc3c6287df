"""Analyses beyond the public evaluator, computed from per-item evaluation records.

`run_analyses` is the one entry point the evaluator calls; its result is stored under
`analyses` in evaluation_summary.json, one key per analysis registered in `ANALYSES`
(in registration order). Each analysis runs on its own: one that raises, or returns
something that is not strict JSON, is stored as ``{"error": "<Type>: <message>"}`` and
the others are unaffected (:func:`failures` lists them; the CLI names each on stderr and
exits non-zero). None of them changes a public number (PASS, VALID, SOFT and the tables
stay the evaluator's).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose_eval.analyses.abstention import abstention_summary
from rose_eval.analyses.bridges import global_click_bridge, matched_local_bridge
from rose_eval.analyses.chance_floor import chance_floor
from rose_eval.analyses.consistency import scene_consistency
from rose_eval.analyses.gap import perception_action_gap
from rose_eval.analyses.lenient import lenient_summary
from rose_eval.registry import Registry

FAILED = "error"  # the only key of a failed analysis's entry
MESSAGE_LIMIT = 300


@dataclass(frozen=True)
class AnalysisInput:
    """What every analysis may read: per-item records, metadata by item id, bootstrap knobs,
    and the release folder and split the items come from (None when not known)."""

    items: Sequence[Mapping[str, Any]]
    metadata: Mapping[str, Mapping[str, Any]]
    seed: int = 0
    n_boot: int = 10_000
    paper: Mapping[str, Any] | None = None  # the summary's paper_metrics, when computed
    dataset_root: Path | None = None
    split: str | None = None
    controls: Sequence[Mapping[str, Any]] = ()  # scored interface-control items (control, source_item_id)


ANALYSES: Registry[Callable[[AnalysisInput], Any]] = Registry("analysis")


@ANALYSES.register("perception_action_gap")
def _gap(run: AnalysisInput) -> Any:
    return perception_action_gap(run.items, run.paper)


@ANALYSES.register("chance_floor")
def _chance_floor(run: AnalysisInput) -> Any:
    return chance_floor(run.items, run.metadata, run.dataset_root, run.split or "")


@ANALYSES.register("scene_consistency")
def _consistency(run: AnalysisInput) -> Any:
    return scene_consistency(run.items)


@ANALYSES.register("global_click_bridge")
def _global_click(run: AnalysisInput) -> Any:
    return global_click_bridge(run.items, run.metadata)


@ANALYSES.register("matched_local_bridge")
def _matched_local(run: AnalysisInput) -> Any:
    return matched_local_bridge(run.items, run.metadata)


@ANALYSES.register("interface_controls")
def _interface_controls(run: AnalysisInput) -> Any:
    from rose_eval.analyses.controls import interface_controls  # numpy: only when it runs

    return interface_controls(run.items, run.controls, seed=run.seed, n_boot=run.n_boot)


@ANALYSES.register("bootstrap")
def _bootstrap(run: AnalysisInput) -> Any:
    from rose_eval.analyses.bootstrap import scene_bootstrap  # numpy: only when it runs

    return scene_bootstrap(run.items, seed=run.seed, n_boot=run.n_boot)


@ANALYSES.register("lenient")
def _lenient(run: AnalysisInput) -> Any:
    return lenient_summary(run.items, run.metadata)


@ANALYSES.register("abstention")
def _abstention(run: AnalysisInput) -> Any:
    return abstention_summary(run.items)


def _failure(exc: BaseException) -> dict[str, str]:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return {FAILED: text[:MESSAGE_LIMIT]}


def run_one(name: str, run: AnalysisInput,
            compute: Callable[[], Any] | None = None) -> Any:
    """One analysis's result (from ``compute`` when given, e.g. a helper process's reply), or
    its failure entry; never raises (but lets Ctrl-C through)."""
    try:
        result = compute() if compute is not None else ANALYSES.get(name)(run)
        json.dumps(result, allow_nan=False)  # strict JSON, or it is a failure of its own
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        return _failure(exc)
    return result


def run_analyses(items: Sequence[Mapping[str, Any]], metadata_rows: Sequence[Mapping[str, Any]],
                 *, seed: int = 0, n_boot: int = 10_000,
                 paper: Mapping[str, Any] | None = None,
                 computed: Mapping[str, Callable[[], Any]] | None = None,
                 dataset_root: Path | None = None, split: str | None = None,
                 controls: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """All registered analyses for one evaluated run (bridge entries None without bridge rows,
    ``interface_controls`` None without scored control items).

    ``paper``: the summary's paper_metrics for these items, reused instead of recomputed;
    ``computed``: analyses computed elsewhere (name -> function returning the result);
    ``dataset_root``/``split``: the release folder and scored split (the chance floor is
    fitted on that folder's dev split);
    ``controls``: the scored interface-control items (:mod:`rose_eval.analyses.controls`).
    """
    run = AnalysisInput(items, {str(row.get("item_id")): row for row in metadata_rows},
                        seed, n_boot, paper, dataset_root, split, controls)
    computed = computed or {}
    results = {name: run_one(name, run) for name in ANALYSES.names() if name not in computed}
    results.update({name: run_one(name, run, computed[name]) for name in computed})  # last:
    return {name: results[name] for name in ANALYSES.names()}  # they ran meanwhile


def failures(results: Mapping[str, Any]) -> dict[str, str]:
    """The analyses that failed, with their messages."""
    return {name: value[FAILED] for name, value in results.items()
            if isinstance(value, dict) and list(value) == [FAILED]}


__all__ = ["ANALYSES", "AnalysisInput", "failures", "run_analyses", "run_one"]
