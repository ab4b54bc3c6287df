"""A leaderboard of evaluated runs with paired intervals (`rose-eval compare EVAL_DIR...`,
`rose_eval/cli/compare.py`).

Each EVAL_DIR is an evaluator output folder holding per_item_eval.jsonl; all runs must
cover the same items. Every model is resampled with the SAME scene draws (within
subset, seeded), so differences are paired: the leaderboard gives each model's
Avg. PASS (Table 1) with its 95% interval, its difference to the best model
(best minus model, with interval and the share of resamples where the best is ahead),
and ranking stability: the share of scene subsamples (half of each subset's scenes,
drawn without replacement, by default) in which the model keeps its rank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rose_eval.analyses.bootstrap import (
    LEVEL,
    as_float_totals,
    build_scene_table,
    half_subsample,
    headline_statistics,
    interval,
    point_statistics,
    resampled_totals,
)
from rose_eval.jsonl import iter_jsonl_objects
from rose_eval.percent import percent_text

PER_ITEM_FILE = "per_item_eval.jsonl"
RANK_METRIC = "table1/Avg. PASS"
SUBSAMPLE_FRACTION = 0.5
REPORTED_METRICS: tuple[str, ...] = ("table1/Avg. PASS", "table2/Avg. PASS", "table1/VALID",
                                     "gap/Delta")
REQUIRED_FIELDS: tuple[str, ...] = ("item_id", "scene_id", "rose_subset", "task_template",
                                    "pass", "format_valid")
FLAG_FIELDS: tuple[str, ...] = ("pass", "format_valid", "click_applicable", "region_ok")
SCORE_FIELDS: tuple[str, ...] = ("unified_soft", "click_f1_strict")
REGENERATE = "re-create the file with rose-eval"


def value_fault(row: dict[str, Any]) -> str | None:
    """What is wrong with a record's numbers (flags must be 0/1, scores in [0, 1]), or None."""
    for field in FLAG_FIELDS:
        value = row.get(field)
        if value is not None and (type(value) not in (int, bool) or value not in (0, 1)):
            return f"{field} must be 0 or 1, got {str(value)[:40]!r}"
    for field in SCORE_FIELDS:
        value = row.get(field)
        if value is not None and (type(value) not in (int, float) or not 0.0 <= value <= 1.0):
            return f"{field} must be a number from 0 to 1, got {str(value)[:40]!r}"
    return None


class CompareError(Exception):
    """A user-facing problem with the inputs: one line saying what, where and how to fix."""


@dataclass(frozen=True)
class EvaluatedRun:
    """One evaluation output folder: its model name and per-item records."""

    name: str
    path: Path
    items: tuple[dict[str, Any], ...]


def read_per_item(eval_dir: Path) -> list[dict[str, Any]]:
    """Per-item records of one evaluation folder; CompareError on any structural fault."""
    if not eval_dir.is_dir():
        raise CompareError(f"{eval_dir}: not a directory; pass evaluation output folders "
                           f"(each holding {PER_ITEM_FILE})")
    path = eval_dir / PER_ITEM_FILE
    if not path.is_file():
        raise CompareError(f"{path}: missing; run `rose-eval` with --out_dir {eval_dir} first")
    rows: list[dict[str, Any]] = []
    for line_no, row in iter_jsonl_objects(path, CompareError, REGENERATE):
        missing = [f for f in REQUIRED_FIELDS if row.get(f) is None]
        if missing:
            raise CompareError(f"{path}:{line_no}: missing {', '.join(missing)}; {REGENERATE}")
        fault = value_fault(row)
        if fault:
            raise CompareError(f"{path}:{line_no}: {fault}; {REGENERATE}")
        rows.append(row)
    if not rows:
        raise CompareError(f"{path}: no rows; {REGENERATE}")
    ids = [str(r["item_id"]) for r in rows]
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    if repeated:
        dup = repeated[0]
        raise CompareError(f"{path}: duplicate item_id {dup}; {REGENERATE}")
    return rows


def load_runs(eval_dirs: Sequence[Path]) -> list[EvaluatedRun]:
    """Read every folder, name each run by its model (folder name on a clash)."""
    runs: list[EvaluatedRun] = []
    for eval_dir in eval_dirs:
        rows = read_per_item(eval_dir)
        models = sorted({str(r.get("model")) for r in rows if r.get("model")})
        name = models[0] if len(models) == 1 else eval_dir.name
        runs.append(EvaluatedRun(name, eval_dir, tuple(rows)))
    names = [run.name for run in runs]
    return [
        EvaluatedRun(f"{run.name} ({run.path.name})" if names.count(run.name) > 1 else run.name,
                     run.path, run.items)
        for run in runs
    ]


def check_same_items(runs: Sequence[EvaluatedRun]) -> None:
    """All runs must score the same item ids (paired comparison)."""
    reference = {str(r["item_id"]) for r in runs[0].items}
    for run in runs[1:]:
        ids = {str(r["item_id"]) for r in run.items}
        if ids != reference:
            only_here, only_there = sorted(ids - reference), sorted(reference - ids)
            example = (only_here or only_there)[0]
            raise CompareError(
                f"{run.path / PER_ITEM_FILE}: item set differs from "
                f"{runs[0].path / PER_ITEM_FILE} ({len(only_here)} extra, {len(only_there)} "
                f"missing, e.g. {example}); compare runs evaluated on the same items")


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks along the model axis (highest value first; ties by input order)."""
    return np.argsort(np.argsort(-values, axis=1, kind="stable"), axis=1) + 1


def compare_runs(runs: Sequence[EvaluatedRun], *, seed: int = 0, n_boot: int = 10_000,
                 subsample_fraction: float = SUBSAMPLE_FRACTION) -> dict[str, Any]:
    """Leaderboard with paired scene-bootstrap differences and ranking stability."""
    tables = [build_scene_table(run.items) for run in runs]
    if any(t.scene_ids != tables[0].scene_ids for t in tables[1:]):
        raise CompareError("runs disagree on which scene each item belongs to; "
                           "compare runs evaluated on the same release")
    if not tables[0].subsets:
        raise CompareError(f"{runs[0].path / PER_ITEM_FILE}: no main-template rows to compare")
    subsets = tables[0].subsets
    points = [point_statistics(t) for t in tables]
    draws = [headline_statistics(as_float_totals(totals, table), subsets)
             for totals, table in zip(resampled_totals(tables, n_boot, seed), tables, strict=True)]

    score = np.array([p[RANK_METRIC][0] for p in points])
    order = sorted(range(len(runs)), key=lambda i: (-score[i], i))
    rank_of = {model: rank for rank, model in enumerate(order, start=1)}
    subsampled = resampled_totals(tables, n_boot, seed, purpose="rank-subsample",
                                  draw=half_subsample(subsample_fraction))
    sub_rank = _ranks(np.stack(
        [headline_statistics(as_float_totals(totals, table), subsets)[RANK_METRIC]
         for totals, table in zip(subsampled, tables, strict=True)], axis=1))
    best = order[0]
    board = []
    for model in order:
        diff = draws[best][RANK_METRIC] - draws[model][RANK_METRIC]
        board.append({
            "rank": rank_of[model],
            "model": runs[model].name,
            "eval_dir": str(runs[model].path),
            **{name.replace("/", " "): interval(points[model][name][0], draws[model][name])
               for name in REPORTED_METRICS},
            "diff_vs_best": interval(float(score[best] - score[model]), diff),
            "share_best_ahead": float(np.mean(diff > 0)) if model != best else None,
            "rank_stability": float(np.mean(sub_rank[:, model] == rank_of[model])),
        })
    return {
        "metric": "Avg. PASS (Table 1)",
        "method": "paired percentile bootstrap; the same scenes resampled within each subset "
        "for every model",
        "level": LEVEL,
        "n_boot": n_boot,
        "seed": seed,
        "n_items": len(runs[0].items),
        "n_scenes": tables[0].n_scenes,
        "rank_stability": f"share of {n_boot} subsamples (a {subsample_fraction:g} share of each "
        "subset's scenes, drawn without replacement) in which the model keeps its rank",
        "best": runs[best].name,
        "leaderboard": board,
    }


def _pct(ci: dict[str, Any]) -> str:
    if ci["point"] is None or ci["lo"] is None:
        return percent_text(ci["point"])
    return f"{percent_text(ci['point'])} [{percent_text(ci['lo'])}, {percent_text(ci['hi'])}]"


def leaderboard_markdown(result: dict[str, Any]) -> str:
    """The leaderboard as a Markdown table (percentages, 95% intervals in brackets)."""
    lines = [
        f"Leaderboard by {result['metric']} ({result['n_items']} items, "
        f"{sum(result['n_scenes'].values())} scenes, {result['n_boot']} paired scene resamples)",
        "",
        "| Rank | Model | Avg. PASS | Diff. vs best | Best ahead | Rank kept | VALID |",
        "|---:|---|---|---|---:|---:|---|",
    ]
    for row in result["leaderboard"]:
        ahead = row["share_best_ahead"]
        ahead = "--" if ahead is None else f"{percent_text(ahead)}%"
        lines.append(
            f"| {row['rank']} | {row['model']} | {_pct(row['table1 Avg. PASS'])} | "
            f"{_pct(row['diff_vs_best'])} | {ahead} | {percent_text(row['rank_stability'])}% | "
            f"{_pct(row['table1 VALID'])} |")
    return "\n".join(lines) + "\n"
