"""A leaderboard of evaluated runs with paired intervals (`rose-eval compare EVAL_DIR...`,
`rose_eval/cli/compare.py`).

Each EVAL_DIR is an evaluator output folder holding per_item_eval.jsonl; all runs must
cover the same items. Every model is resampled with the SAME scene draws (within
subset, seeded), so differences are paired: the leaderboard gives each model's
Avg. PASS (Table 1) with its 95% interval, its difference to the best model
(best minus model, with interval and the share of resamples where the best is ahead),
and ranking stability: the share of scene subsamples (half of each subset's scenes,
drawn without replacement, by default) in which the model keeps its rank.

Claims control the family-wise error. Every pair of models is one claim ("A is ahead of
B"); its two-sided p-value is the paired bootstrap's (twice the share of resamples on the
other side of 0, plus one: ``2 (1 + #{d* <= 0}) / (B + 1)`` for an observed d > 0), and the
m = k(k-1)/2 p-values are adjusted by Holm's step-down method (Holm 1979), so the chance of
any false claim among them is at most ``--alpha``. A pair is claimed only when its adjusted
p-value is at most alpha. Each pair also gets its minimum detectable difference at the
strictest level Holm uses (alpha/m) and ``--power`` (:mod:`rose_eval.analyses.power`): a gap
below it is below the resolution of these scenes. Intervals are 95 % and unadjusted (the
scene bootstrap's, or the effective-n one where it degenerates:
:mod:`rose_eval.analyses.precision`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
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
from rose_eval.analyses.power import DEFAULT_ALPHA, DEFAULT_POWER, paired_mdd
from rose_eval.analyses.precision import (
    honest_intervals,
    linear_forms,
    paired_difference,
    scene_values,
)
from rose_eval.jsonl import iter_jsonl_objects
from rose_eval.percent import percent_text
from rose_eval.provenance import read_provenance

PER_ITEM_FILE = "per_item_eval.jsonl"
RANK_METRIC = "table1/Avg. PASS"
SUBSAMPLE_FRACTION = 0.5
FWER_METHOD = "Holm step-down on paired-bootstrap p-values over every pair of models"
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
    """One evaluation output folder: its model name, per-item records and provenance.json
    (None for an evaluation written before the sidecar existed)."""

    name: str
    path: Path
    items: tuple[dict[str, Any], ...]
    provenance: Mapping[str, Any] | None = None

    @property
    def metadata_id(self) -> str | None:
        """The digest of the metadata rows the run was scored on (None when unknown)."""
        meta = (self.provenance or {}).get("metadata") or {}
        return meta.get("rows_sha256")

    @property
    def control(self) -> str | None:
        """The control the run is (a blank-image run, control rows), None for a standard run."""
        return ((self.provenance or {}).get("run") or {}).get("control")

    @property
    def benchmark_changes(self) -> tuple[str, ...]:
        """What the run changed about the benchmark (JPEG, downscaling, prompt order, ...)."""
        return tuple(((self.provenance or {}).get("run") or {}).get("benchmark_changes") or ())

    @property
    def not_standard(self) -> str | None:
        """Why the run is not a standard ROSE run, None when it is one."""
        if self.control:
            return f"control: {self.control}"
        if self.benchmark_changes:
            return f"benchmark changed: {'; '.join(self.benchmark_changes)}"
        return None



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
    """Read every folder; a run's one name is the model its provenance.json records (what
    ``rose-eval --model`` set), else the per-item records' model (folder name on a clash)."""
    runs: list[EvaluatedRun] = []
    for eval_dir in eval_dirs:
        rows = read_per_item(eval_dir)
        provenance = read_provenance(eval_dir)
        models = sorted({str(r.get("model")) for r in rows if r.get("model")})
        recorded = ((provenance or {}).get("run") or {}).get("model")
        name = str(recorded) if recorded else models[0] if len(models) == 1 else eval_dir.name
        runs.append(EvaluatedRun(name, eval_dir, tuple(rows), provenance))
    names = [run.name for run in runs]
    return [
        EvaluatedRun(f"{run.name} ({run.path.name})" if names.count(run.name) > 1 else run.name,
                     run.path, run.items, run.provenance)
        for run in runs
    ]


def check_same_metadata(runs: Sequence[EvaluatedRun]) -> None:
    """All runs whose provenance is known must be scored on the same metadata rows."""
    known = [run for run in runs if run.metadata_id]
    for run in known[1:]:
        if run.metadata_id != known[0].metadata_id:
            raise CompareError(
                f"{run.path}: scored on other metadata than {known[0].path} (rows sha256 "
                f"{run.metadata_id[:12]} vs {known[0].metadata_id[:12]}, see provenance.json); "
                "compare runs evaluated on the same release")


def split_standard(runs: Sequence[EvaluatedRun], *, include_nonstandard: bool
                   ) -> tuple[list[EvaluatedRun], list[tuple[EvaluatedRun, str]]]:
    """(runs to rank, [(run set aside, why)]). Control and changed-benchmark runs are set
    aside unless ``include_nonstandard``; then they are ranked under a marked name."""
    ranked: list[EvaluatedRun] = []
    aside: list[tuple[EvaluatedRun, str]] = []
    for run in runs:
        why = run.not_standard
        if why is None:
            ranked.append(run)
        elif include_nonstandard:
            name = run.name if run.name.endswith(f"[{why}]") else f"{run.name} [{why}]"
            ranked.append(EvaluatedRun(name, run.path, run.items, run.provenance))
        else:
            aside.append((run, why))
    return ranked, aside


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


def bootstrap_p_value(draws: np.ndarray, observed: float) -> float:
    """Two-sided paired-bootstrap p-value of ``observed`` against 0: twice the share of
    resamples at or beyond 0 on the other side (``(count + 1) / (B + 1)``, never 0)."""
    if observed == 0 or not np.isfinite(observed):
        return 1.0
    kept = draws[np.isfinite(draws)]
    against = np.count_nonzero(kept <= 0) if observed > 0 else np.count_nonzero(kept >= 0)
    return float(min(1.0, 2.0 * (against + 1) / (kept.size + 1)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given)."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: (p_values[i], i))):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def compare_runs(runs: Sequence[EvaluatedRun], *, seed: int = 0, n_boot: int = 10_000,
                 subsample_fraction: float = SUBSAMPLE_FRACTION, alpha: float = DEFAULT_ALPHA,
                 power: float = DEFAULT_POWER) -> dict[str, Any]:
    """Leaderboard with paired scene-bootstrap differences, ranking stability, and every
    pairwise claim with its Holm-adjusted p-value and minimum detectable difference."""
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
    records = []
    for table, point, drawn in zip(tables, points, draws, strict=True):
        boots = {name: interval(point[name][0], drawn[name]) for name in point}
        records.append({**boots, **honest_intervals(
            table, {name: float(v[0]) for name, v in point.items()}, boots)})
    values = [scene_values(t) for t in tables]
    form = linear_forms(tables[0])[RANK_METRIC]

    score = np.array([p[RANK_METRIC][0] for p in points])
    order = sorted(range(len(runs)), key=lambda i: (-score[i], i))
    rank_of = {model: rank for rank, model in enumerate(order, start=1)}
    subsampled = resampled_totals(tables, n_boot, seed, purpose="rank-subsample",
                                  draw=half_subsample(subsample_fraction))
    sub_rank = _ranks(np.stack(
        [headline_statistics(as_float_totals(totals, table), subsets)[RANK_METRIC]
         for totals, table in zip(subsampled, tables, strict=True)], axis=1))

    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]]
    family_alpha = alpha / max(len(pairs), 1)
    pair_rows = []
    for a, b in pairs:
        diff = draws[a][RANK_METRIC] - draws[b][RANK_METRIC]
        observed = float(score[a] - score[b])
        pair_rows.append({
            "a": runs[a].name, "b": runs[b].name,
            "difference": paired_difference(values[a], values[b], form,
                                            (float(score[a]), float(score[b])),
                                            interval(observed, diff)),
            "p": bootstrap_p_value(diff, observed),
            "mdd": paired_mdd(tables[a], tables[b], alpha=family_alpha, power=power),
        })
    for row, adjusted in zip(pair_rows, holm([r["p"] for r in pair_rows]), strict=True):
        row["p_holm"] = adjusted
        row["claim"] = (f"{row['a']} ahead" if adjusted <= alpha and row["difference"]["point"] > 0
                        else "not separated")
    by_pair = {(r["a"], r["b"]): r for r in pair_rows}

    best = order[0]
    board = []
    for model in order:
        versus = by_pair.get((runs[best].name, runs[model].name))
        diff = draws[best][RANK_METRIC] - draws[model][RANK_METRIC]
        board.append({
            "rank": rank_of[model],
            "model": runs[model].name,
            "eval_dir": str(runs[model].path),
            **{name.replace("/", " "): records[model][name] for name in REPORTED_METRICS},
            "diff_vs_best": versus["difference"] if versus else interval(0.0, diff),
            "share_best_ahead": float(np.mean(diff > 0)) if model != best else None,
            "p_vs_best_holm": versus["p_holm"] if versus else None,
            "mdd_vs_best": versus["mdd"] if versus else None,
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
        "family_wise": {"method": FWER_METHOD, "alpha": alpha, "n_claims": len(pairs),
                        "mdd_alpha": family_alpha, "mdd_power": power},
        "best": runs[best].name,
        "leaderboard": board,
        "pairs": pair_rows,
    }


def _pct(ci: dict[str, Any]) -> str:
    if ci["point"] is None or ci["lo"] is None:
        return percent_text(ci["point"])
    mark = "†" if ci.get("interval") == "effective n" else ""
    return f"{percent_text(ci['point'])} [{percent_text(ci['lo'])}, {percent_text(ci['hi'])}]{mark}"


def _p_text(p: float | None) -> str:
    if p is None:
        return "--"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def leaderboard_markdown(result: dict[str, Any]) -> str:
    """The leaderboard and the pairwise claims as Markdown tables (percentages, 95 %
    intervals in brackets, Holm-adjusted p-values, minimum detectable differences)."""
    fw = result["family_wise"]
    lines = [
        f"Leaderboard by {result['metric']} ({result['n_items']} items, "
        f"{sum(result['n_scenes'].values())} scenes, {result['n_boot']} paired scene resamples)",
        "",
        "| Rank | Model | Avg. PASS | Diff. vs best | Best ahead | p vs best (Holm) | MDD | "
        "Rank kept | VALID |",
        "|---:|---|---|---|---:|---:|---:|---:|---|",
    ]
    for row in result["leaderboard"]:
        ahead = row["share_best_ahead"]
        ahead = "--" if ahead is None else f"{percent_text(ahead)}%"
        mdd = "--" if row["mdd_vs_best"] is None else percent_text(row["mdd_vs_best"])
        lines.append(
            f"| {row['rank']} | {row['model']} | {_pct(row['table1 Avg. PASS'])} | "
            f"{_pct(row['diff_vs_best'])} | {ahead} | {_p_text(row['p_vs_best_holm'])} | {mdd} | "
            f"{percent_text(row['rank_stability'])}% | {_pct(row['table1 VALID'])} |")
    lines += [
        "",
        f"Pairwise claims: {fw['n_claims']} pair{'s' if fw['n_claims'] != 1 else ''}, "
        f"family-wise error at most {fw['alpha']:g} ({fw['method']}). MDD: the minimum "
        f"detectable difference of the pair in points ({percent_text(fw['mdd_power'], 0)} % "
        f"power at alpha/m = {fw['mdd_alpha']:.4g}); a smaller gap is below the resolution "
        "of these scenes. †: effective-n interval (the bootstrap degenerates).",
        "",
        "| A | B | A - B | p | p (Holm) | MDD | Claim |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for pair in result["pairs"]:
        lines.append(f"| {pair['a']} | {pair['b']} | {_pct(pair['difference'])} | "
                     f"{_p_text(pair['p'])} | {_p_text(pair['p_holm'])} | "
                     f"{percent_text(pair['mdd'])} | {pair['claim']} |")
    return "\n".join(lines) + "\n"
