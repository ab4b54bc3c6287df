"""Scene-cluster bootstrap intervals for the headline numbers.

Items of one scene are correlated (five coupled tasks on one image), so the unit of
resampling is the scene: within each subset, scenes are drawn with replacement
(stratified by subset, as the tables are), and every statistic is recomputed from the
resampled scenes' sums. Everything is vectorised: per-scene sums are built once as a
(scenes x features) matrix, each resample is a row of scene multiplicities, and the
resampled subset totals are one matrix product per subset.

Randomness: one generator per subset from `rose_eval.seeding.stream(seed, subset,
"bootstrap")`, so the same seed gives the same draws, and two models evaluated on the
same scenes get the same (paired) draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rose_eval.analyses._rows import (
    ACTION_TEMPLATES,
    COUNTING_TEMPLATES,
    MAIN_TEMPLATES,
    SUBSET_ORDER,
    TEMPLATE_ORDER,
    TEMPLATE_SHORT,
    template_of,
)
from rose_eval.seeding import stream

LEVEL = 0.95
RNG_PURPOSE = "bootstrap"
CHUNK = 10_000  # resamples drawn at once: bounds memory for large --n_boot

# Feature columns of the per-scene matrix: per template (pass sum, item count); all-row
# pass, soft and valid sums and item count; click rows' strict F1 and region-ok sums and
# their count (Table 2's C-F1 and R-OK).
_T = len(TEMPLATE_ORDER)
COL_TEMPLATE_PASS = 0
COL_TEMPLATE_N = _T
COL_PASS, COL_SOFT, COL_VALID, COL_N = 2 * _T, 2 * _T + 1, 2 * _T + 2, 2 * _T + 3
COL_CLICK_F1, COL_REGION_OK, COL_CLICK_N = 2 * _T + 4, 2 * _T + 5, 2 * _T + 6
N_FEATURES = 2 * _T + 7


@dataclass(frozen=True)
class SceneTable:
    """Per-scene feature sums, grouped by subset (scenes sorted by id inside a subset)."""

    subsets: tuple[str, ...]
    scene_ids: tuple[tuple[str, ...], ...]
    features: tuple[np.ndarray, ...]  # one (n_scenes_in_subset, N_FEATURES) array per subset

    @property
    def n_scenes(self) -> dict[str, int]:
        return {s: len(ids) for s, ids in zip(self.subsets, self.scene_ids, strict=True)}


def is_table1_row(row: Mapping[str, Any]) -> bool:
    """Rows of known subsets: Table 1 averages all of them (as the public evaluator does)."""
    return str(row.get("rose_subset")) in SUBSET_ORDER


def build_scene_table(items: Sequence[Mapping[str, Any]]) -> SceneTable:
    """Sum each scene's pass/soft/valid values (all rows, and per main template)."""
    rows = [row for row in items if is_table1_row(row)]
    keys = sorted({(str(r["rose_subset"]), str(r.get("scene_id"))) for r in rows},
                  key=lambda k: (SUBSET_ORDER.index(k[0]), k[1]))
    position = {key: i for i, key in enumerate(keys)}
    n = len(rows)
    scene = np.fromiter((position[(str(r["rose_subset"]), str(r.get("scene_id")))] for r in rows),
                        dtype=np.int64, count=n)
    passed = np.fromiter((float(r.get("pass") or 0) for r in rows), dtype=float, count=n)
    soft = np.fromiter((float(r.get("unified_soft") or 0.0) for r in rows), dtype=float, count=n)
    valid = np.fromiter((float(r.get("format_valid") or 0) for r in rows), dtype=float, count=n)
    matrix = np.zeros((len(keys), N_FEATURES))
    np.add.at(matrix, (scene, COL_PASS), passed)
    np.add.at(matrix, (scene, COL_SOFT), soft)
    np.add.at(matrix, (scene, COL_VALID), valid)
    np.add.at(matrix, (scene, COL_N), 1.0)
    click = np.fromiter((r.get("click_applicable") == 1 for r in rows), dtype=bool, count=n)
    f1 = np.fromiter((float(r.get("click_f1_strict") or 0.0) for r in rows), dtype=float, count=n)
    region_ok = np.fromiter((float(r.get("region_ok") or 0) for r in rows), dtype=float, count=n)
    np.add.at(matrix, (scene[click], COL_CLICK_F1), f1[click])
    np.add.at(matrix, (scene[click], COL_REGION_OK), region_ok[click])
    np.add.at(matrix, (scene[click], COL_CLICK_N), 1.0)
    main = np.fromiter((template_of(r) in MAIN_TEMPLATES for r in rows), dtype=bool, count=n)
    template = np.fromiter((TEMPLATE_ORDER.index(template_of(r)) if main[i] else 0
                            for i, r in enumerate(rows)), dtype=np.int64, count=n)
    np.add.at(matrix, (scene[main], COL_TEMPLATE_PASS + template[main]), passed[main])
    np.add.at(matrix, (scene[main], COL_TEMPLATE_N + template[main]), 1.0)
    subsets = tuple(s for s in SUBSET_ORDER if any(k[0] == s for k in keys))
    scene_ids, features = [], []
    for subset in subsets:
        idx = [i for i, k in enumerate(keys) if k[0] == subset]
        scene_ids.append(tuple(keys[i][1] for i in idx))
        features.append(matrix[idx])
    return SceneTable(subsets, tuple(scene_ids), tuple(features))


def scene_weights(n_scenes: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n_scenes) multiplicities of each scene in each with-replacement resample."""
    index_type = np.int32 if n_boot * n_scenes < 2**31 else np.int64
    draws = rng.integers(0, n_scenes, size=(n_boot, n_scenes), dtype=index_type)
    draws += (np.arange(n_boot, dtype=index_type) * n_scenes)[:, None]  # one bin range per row
    counts = np.bincount(draws.ravel(), minlength=n_boot * n_scenes)
    return counts.reshape(n_boot, n_scenes).astype(float)


def draw_weights(n_scenes: Mapping[str, int], n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """Resample weights per subset, from the subset's own seeded stream."""
    return {
        subset: scene_weights(n, n_boot, stream(seed, subset, RNG_PURPOSE))
        for subset, n in n_scenes.items()
    }


def point_totals(table: SceneTable) -> np.ndarray:
    """(1, subsets, features) totals of the observed data."""
    return np.stack([f.sum(axis=0) for f in table.features])[None, :, :]


def resampled_totals(table: SceneTable, weights: Mapping[str, np.ndarray]) -> np.ndarray:
    """(n_boot, subsets, features) totals, one matrix product per subset."""
    return np.stack([weights[s] @ f for s, f in zip(table.subsets, table.features, strict=True)],
                    axis=1)


def subsample_weights(n_scenes: int, n_draws: int, rng: np.random.Generator, *,
                      fraction: float = 0.5) -> np.ndarray:
    """(n_draws, n_scenes) 0/1 weights: each row keeps ceil(fraction * n) scenes, no repeats."""
    keep = max(1, int(np.ceil(fraction * n_scenes)))
    keys = rng.random((n_draws, n_scenes))
    threshold = np.partition(keys, keep - 1, axis=1)[:, keep - 1:keep]
    return (keys <= threshold).astype(float)


WeightDraw = Callable[[int, int, np.random.Generator], np.ndarray]


def paired_resampled_totals(tables: Sequence[SceneTable], n_boot: int, seed: int, *,
                            draw: WeightDraw = scene_weights, purpose: str = RNG_PURPOSE,
                            chunk: int = CHUNK) -> list[np.ndarray]:
    """(n_boot, subsets, features) totals for each table, all under the SAME scene draws.

    The tables must share their scenes (same subsets and scene ids). `draw` makes the
    scene weights (default: with-replacement bootstrap). Draws are made in chunks of
    `chunk` resamples to bound memory; the chunk size does not change them.
    """
    first = tables[0]
    out = [np.empty((n_boot, len(first.subsets), N_FEATURES)) for _ in tables]
    for i, subset in enumerate(first.subsets):
        rng = stream(seed, subset, purpose)
        for start in range(0, n_boot, chunk):
            stop = min(start + chunk, n_boot)
            weights = draw(len(first.scene_ids[i]), stop - start, rng)
            for table, totals in zip(tables, out, strict=True):
                totals[start:stop, i, :] = weights @ table.features[i]
    return out


def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def headline_statistics(totals: np.ndarray, subsets: Sequence[str]) -> dict[str, np.ndarray]:
    """Every headline number from (draws, subsets, features) totals; each value (draws,).

    Table 1 averages every row of a subset (bridge rows included when the run has them,
    exactly as the public evaluator's `paper_table1`); Table 2's template PASS and the gap
    use the main templates only; C-F1 and R-OK average every click row (as `paper_table2`). Names: `table1/<subset>/PASS|SOFT|VALID`, `table1/Avg. PASS|Avg. SOFT|VALID`,
    `table2/<short>` per template, `table2/C-F1|R-OK|Avg. PASS`, `gap/Counting Avg.`,
    `gap/Action Avg.`, `gap/Delta`. Definitions are the public evaluator's tables.
    """
    n = totals[..., COL_N]
    subset_pass = _rate(totals[..., COL_PASS], n)
    subset_soft = _rate(totals[..., COL_SOFT], n)
    subset_valid = _rate(totals[..., COL_VALID], n)
    stats: dict[str, np.ndarray] = {}
    for i, subset in enumerate(subsets):
        stats[f"table1/{subset}/PASS"] = subset_pass[:, i]
        stats[f"table1/{subset}/SOFT"] = subset_soft[:, i]
        stats[f"table1/{subset}/VALID"] = subset_valid[:, i]
    stats["table1/Avg. PASS"] = _nanmean(subset_pass, axis=1)
    stats["table1/Avg. SOFT"] = _nanmean(subset_soft, axis=1)
    stats["table1/VALID"] = _nanmean(subset_valid, axis=1)
    per_subset_template = _rate(totals[..., COL_TEMPLATE_PASS:COL_TEMPLATE_PASS + _T],
                                totals[..., COL_TEMPLATE_N:COL_TEMPLATE_N + _T])
    template_pass = _nanmean(per_subset_template, axis=1)  # (draws, templates)
    for j, template in enumerate(TEMPLATE_ORDER):
        stats[f"table2/{TEMPLATE_SHORT[template]}"] = template_pass[:, j]
    stats["table2/C-F1"] = _nanmean(_rate(totals[..., COL_CLICK_F1], totals[..., COL_CLICK_N]), 1)
    stats["table2/R-OK"] = _nanmean(_rate(totals[..., COL_REGION_OK], totals[..., COL_CLICK_N]), 1)
    stats["table2/Avg. PASS"] = _nanmean(template_pass, axis=1)
    counting = _nanmean(template_pass[:, [TEMPLATE_ORDER.index(t) for t in COUNTING_TEMPLATES]], 1)
    action = _nanmean(template_pass[:, [TEMPLATE_ORDER.index(t) for t in ACTION_TEMPLATES]], 1)
    stats["gap/Counting Avg."] = counting
    stats["gap/Action Avg."] = action
    stats["gap/Delta"] = counting - action
    return stats


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def interval(point: float, draws: np.ndarray, level: float = LEVEL) -> dict[str, float | None]:
    """Percentile interval of the draws around the observed point."""
    kept = draws[np.isfinite(draws)]
    if kept.size == 0:
        return {"point": _finite(point), "lo": None, "hi": None}
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(kept, [tail, 1.0 - tail])
    return {"point": _finite(point), "lo": float(lo), "hi": float(hi)}


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in flat.items():
        *parents, leaf = name.split("/")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def scene_bootstrap(items: Sequence[Mapping[str, Any]], *, seed: int = 0,
                    n_boot: int = 10_000) -> dict[str, Any]:
    """95% scene-cluster bootstrap intervals for every headline number."""
    table = build_scene_table(items)
    if not table.subsets:
        return {"n_boot": n_boot, "seed": seed, "n_scenes": {}, "note": "no rows of a known subset"}
    point = headline_statistics(point_totals(table), table.subsets)
    draws = headline_statistics(paired_resampled_totals([table], n_boot, seed)[0], table.subsets)
    flat = {name: interval(point[name][0], draws[name]) for name in point}
    return {
        "method": "percentile bootstrap; scenes resampled with replacement within each subset",
        "level": LEVEL,
        "n_boot": n_boot,
        "seed": seed,
        "n_scenes": table.n_scenes,
        **_nest(flat),
    }
