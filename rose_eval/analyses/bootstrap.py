"""Scene-cluster bootstrap intervals for the headline numbers, byte-stable on any machine.

Items of one scene are correlated (five coupled tasks on one image), so the unit of
resampling is the scene: within each subset (stratified, as the tables are), scenes are
drawn with replacement and every statistic is recomputed from the resampled scenes' sums.

Vectorised and exact: each subset's scenes are a matrix of integer feature sums (counts,
and the SOFT and C-F1 values in fixed point, 2**-32 units, coarser only for a subset of
millions of items); a resample is a row of scene
multiplicities; the resampled totals are an integer matrix product, so no floating-point
sum depends on the CPU, BLAS or thread count. Rates are then single divisions and the
equal-subset macros sum the subsets left to right, so the same input gives the same
``evaluation_summary.json`` bytes everywhere. The observed points use the plain float sums
of the evaluator's tables (bit-identical to them).

Randomness: one stream per subset, ``rose_eval.seeding.stream(seed, subset, "bootstrap")``,
read in blocks of resamples (PCG64 keeps its spare 32 bits between calls, so the block size
never changes a draw: a seed gives the same draws as before this module was made exact),
and two models evaluated on the same scenes get the same (paired) draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rose_eval.analyses._rows import ACTION_TEMPLATES, COUNTING_TEMPLATES
from rose_eval.seeding import stream
from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER, TEMPLATE_SHORT, template_of

LEVEL = 0.95
RNG_PURPOSE = "bootstrap"
BLOCK = 250  # resamples drawn and summed at once (bounds memory; the draws do not depend on it)
WORD_BITS = 62  # packed columns share an int64 below 2**62
FIXED_POINT_BITS = 32
EXACT_BITS = 53  # totals stay below 2**53: exact in int64 and as float64

# Feature columns of a scene: per main template its PASS count and item count; then over
# all rows PASS, SOFT, VALID and the item count; over click rows C-F1, R-OK and their count.
_T = len(TEMPLATE_ORDER)
COL_TEMPLATE_PASS, COL_TEMPLATE_N = 0, _T
COL_PASS, COL_SOFT, COL_VALID, COL_N = 2 * _T, 2 * _T + 1, 2 * _T + 2, 2 * _T + 3
COL_CLICK_F1, COL_REGION_OK, COL_CLICK_N = 2 * _T + 4, 2 * _T + 5, 2 * _T + 6
N_FEATURES = 2 * _T + 7
FIXED_COLUMNS = (COL_SOFT, COL_CLICK_F1)
MAIN_INDEX = {template: i for i, template in enumerate(TEMPLATE_ORDER)}


@dataclass(frozen=True)
class SceneTable:
    """Per-scene integer feature sums by subset (scenes sorted by id inside a subset)."""

    subsets: tuple[str, ...]
    scene_ids: tuple[tuple[str, ...], ...]
    features: tuple[np.ndarray, ...]  # per subset: (n_scenes, N_FEATURES) int64
    exact_sums: np.ndarray  # (subsets, N_FEATURES) float sums in row order (for the points)
    fixed_bits: tuple[int, ...]  # per subset: SOFT and C-F1 are in 2**-bits units

    @property
    def n_scenes(self) -> dict[str, int]:
        return {s: len(ids) for s, ids in zip(self.subsets, self.scene_ids, strict=True)}


def _fixed(value: float) -> int:
    return round(value * 2**FIXED_POINT_BITS)


def build_scene_table(items: Sequence[Mapping[str, Any]]) -> SceneTable:
    """Sum each scene's features; rows of unknown subsets are left out."""
    scenes: dict[str, dict[str, list[int]]] = {subset: {} for subset in SUBSET_ORDER}
    float_values: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in SUBSET_ORDER}
    for row in items:
        subset = str(row.get("rose_subset"))
        if subset not in scenes:
            continue
        sums = scenes[subset].setdefault(str(row.get("scene_id")), [0] * N_FEATURES)
        passed = int(row.get("pass") or 0)
        soft = float(row.get("unified_soft") or 0.0)
        sums[COL_PASS] += passed
        sums[COL_SOFT] += _fixed(soft)
        sums[COL_VALID] += int(row.get("format_valid") or 0)
        sums[COL_N] += 1
        float_values[subset][0].append(soft)
        if row.get("click_applicable") == 1:
            f1 = float(row.get("click_f1_strict") or 0.0)
            sums[COL_CLICK_F1] += _fixed(f1)
            sums[COL_REGION_OK] += int(row.get("region_ok") or 0)
            sums[COL_CLICK_N] += 1
            float_values[subset][1].append(f1)
        template = MAIN_INDEX.get(template_of(row))
        if template is not None:
            sums[COL_TEMPLATE_PASS + template] += passed
            sums[COL_TEMPLATE_N + template] += 1
    subsets = tuple(s for s in SUBSET_ORDER if scenes[s])
    scene_ids, features, exact, bits = [], [], [], []
    for subset in subsets:
        ids = sorted(scenes[subset])
        rows, subset_bits = _exact_range([scenes[subset][i] for i in ids])
        scene_ids.append(tuple(ids))
        features.append(np.array(rows, dtype=np.int64))
        bits.append(subset_bits)
        sums = np.array([float(sum(column)) for column in zip(*rows, strict=True)])
        sums[COL_SOFT], sums[COL_CLICK_F1] = (sum(values) for values in float_values[subset])
        exact.append(sums)
    exact_sums = np.array(exact).reshape(len(subsets), N_FEATURES)
    return SceneTable(subsets, tuple(scene_ids), tuple(features), exact_sums, tuple(bits))


def _exact_range(rows: list[list[int]]) -> tuple[list[list[int]], int]:
    """Scene rows whose resampled totals stay below 2**53, and their fixed-point bits.

    A resample sums at most ``len(rows)`` scenes, so the largest value times the scene
    count bounds every total; the fixed-point columns are coarsened until it fits.
    """
    largest = max(max(abs(v) for v in row) for row in rows) * len(rows)
    shift = max(0, largest.bit_length() - EXACT_BITS)
    if shift > FIXED_POINT_BITS:
        raise ValueError("too many items per scene for exact bootstrap sums")
    if shift:
        for row in rows:
            for col in FIXED_COLUMNS:
                row[col] = round(row[col] / 2**shift)
    return rows, FIXED_POINT_BITS - shift


# ---- draws ----------------------------------------------------------------------------------

def with_replacement(n_scenes: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """(n_draws, n_scenes) scene indices: each row a with-replacement resample."""
    index_type = np.int32 if n_draws * n_scenes < 2**31 else np.int64
    return rng.integers(0, n_scenes, size=(n_draws, n_scenes), dtype=index_type)


def multiplicities(draws: np.ndarray, n_scenes: int) -> np.ndarray:
    """(rows, n_scenes) int64: how often each scene occurs in each row of indices."""
    rows = len(draws)
    offsets = draws.astype(np.int64) + (np.arange(rows, dtype=np.int64) * n_scenes)[:, None]
    return np.bincount(offsets.ravel(), minlength=rows * n_scenes).reshape(rows, n_scenes)


def half_subsample(fraction: float) -> Callable[[int, int, np.random.Generator], np.ndarray]:
    """A draw of subsamples without replacement: each row keeps ceil(fraction * n) scenes."""
    def draw(n_scenes: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        keep = max(1, int(np.ceil(fraction * n_scenes)))
        keys = rng.random((n_draws, n_scenes))
        threshold = np.partition(keys, keep - 1, axis=1)[:, keep - 1:keep]
        return (keys <= threshold).astype(np.int64)
    return draw


@dataclass(frozen=True)
class Packing:
    """Several small non-negative columns side by side in one int64 word.

    A column whose resampled totals need ``width`` bits gets that many bits of a word at
    ``shift``; as no field's total can overflow its width, one integer product sums all
    fields of a word at once, exactly, and :meth:`unpack` separates them again.
    """

    words: np.ndarray  # (n_scenes, n_words) int64
    places: tuple[tuple[int, int, int], ...]  # per feature column: (word, shift, width)

    @classmethod
    def of(cls, features: np.ndarray) -> Packing:
        bound = len(features) * features.max(axis=0, initial=0)  # largest possible total
        places, word, used = [], 0, 0
        for col in range(features.shape[1]):
            width = max(1, int(bound[col]).bit_length())
            if used + width > WORD_BITS:
                word, used = word + 1, 0
            places.append((word, used, width))
            used += width
        words = np.zeros((len(features), word + 1), dtype=np.int64)
        for col, (w, shift, _) in enumerate(places):
            words[:, w] += features[:, col] << shift
        return cls(words, tuple(places))

    def unpack(self, totals: np.ndarray) -> np.ndarray:
        """(k, n_words) word totals -> (k, n_features) column totals."""
        return np.stack([(totals[:, w] >> shift) & ((1 << width) - 1)
                         for w, shift, width in self.places], axis=1)


def resampled_totals(tables: Sequence[SceneTable], n_boot: int, seed: int, *,
                     purpose: str = RNG_PURPOSE,
                     draw: Callable[[int, int, np.random.Generator], np.ndarray] | None = None,
                     ) -> list[np.ndarray]:
    """(n_boot, subsets, features) int64 totals per table, all under the SAME scene draws.

    The tables must share their scenes (same subsets and scene ids). ``draw`` returns
    weights per (resample, scene); the default is :func:`with_replacement`'s indices
    turned into multiplicities.
    """
    first = tables[0]
    out = [np.empty((n_boot, len(first.subsets), N_FEATURES), dtype=np.int64) for _ in tables]
    for i, subset in enumerate(first.subsets):
        n_scenes = len(first.scene_ids[i])
        packings = [Packing.of(table.features[i]) for table in tables]
        packed = [np.empty((n_boot, p.words.shape[1]), dtype=np.int64) for p in packings]
        rng = stream(seed, subset, purpose)
        for start in range(0, n_boot, BLOCK):
            rows = slice(start, min(start + BLOCK, n_boot))
            drawn = (draw or with_replacement)(n_scenes, rows.stop - start, rng)
            weights = drawn if draw else multiplicities(drawn, n_scenes)
            for packing, word_totals in zip(packings, packed, strict=True):
                np.matmul(weights, packing.words, out=word_totals[rows])
        for packing, word_totals, totals in zip(packings, packed, out, strict=True):
            totals[:, i, :] = packing.unpack(word_totals)
    return out


def as_float_totals(totals: np.ndarray, table: SceneTable) -> np.ndarray:
    """Integer totals as float64, the fixed-point columns back in value units (exact)."""
    values = totals.astype(np.float64)
    scale = np.array([2.0**bits for bits in table.fixed_bits])[:, None]
    values[..., FIXED_COLUMNS] /= scale
    return values


# ---- statistics -------------------------------------------------------------------------------

def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def macro_columns(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Equal-weight mean of the finite values, summed left to right (as the tables do)."""
    total = np.zeros_like(columns[0])
    present = np.zeros_like(columns[0])
    for column in columns:
        finite = np.isfinite(column)
        total = total + np.where(finite, column, 0.0)
        present = present + finite
    return _rate(total, present)


def headline_statistics(totals: np.ndarray, subsets: Sequence[str]) -> dict[str, np.ndarray]:
    """Every headline number from (draws, subsets, features) float totals; each (draws,).

    Table 1 averages every row of a subset (bridge rows included, as the evaluator's Table 1
    does); Table 2's template PASS and the gap use the main templates; C-F1 and R-OK every
    click row. Names: ``table1/<subset>/PASS|SOFT|VALID``, ``table1/Avg. PASS|Avg. SOFT|VALID``,
    ``table2/<short>``, ``table2/C-F1|R-OK|Avg. PASS``, ``gap/Counting Avg.|Action Avg.|Delta``.
    """
    n = totals[..., COL_N]
    per_subset = {name: _rate(totals[..., col], n)
                  for name, col in (("PASS", COL_PASS), ("SOFT", COL_SOFT), ("VALID", COL_VALID))}
    stats: dict[str, np.ndarray] = {}
    for i, subset in enumerate(subsets):
        for name, values in per_subset.items():
            stats[f"table1/{subset}/{name}"] = values[:, i]
    for name, key in (("PASS", "Avg. PASS"), ("SOFT", "Avg. SOFT"), ("VALID", "VALID")):
        stats[f"table1/{key}"] = macro_columns([per_subset[name][:, i] for i in range(len(subsets))])
    template_pass = {
        template: macro_columns([
            _rate(totals[:, i, COL_TEMPLATE_PASS + j], totals[:, i, COL_TEMPLATE_N + j])
            for i in range(len(subsets))])
        for j, template in enumerate(TEMPLATE_ORDER)
    }
    for template, values in template_pass.items():
        stats[f"table2/{TEMPLATE_SHORT[template]}"] = values
    for key, col in (("C-F1", COL_CLICK_F1), ("R-OK", COL_REGION_OK)):
        stats[f"table2/{key}"] = macro_columns(
            [_rate(totals[:, i, col], totals[:, i, COL_CLICK_N]) for i in range(len(subsets))])
    stats["table2/Avg. PASS"] = macro_columns(list(template_pass.values()))
    counting = macro_columns([template_pass[t] for t in COUNTING_TEMPLATES])
    action = macro_columns([template_pass[t] for t in ACTION_TEMPLATES])
    stats["gap/Counting Avg."] = counting
    stats["gap/Action Avg."] = action
    stats["gap/Delta"] = counting - action
    return stats


def point_statistics(table: SceneTable) -> dict[str, np.ndarray]:
    """The observed headline numbers (each a (1,) array)."""
    return headline_statistics(table.exact_sums[None, :, :], table.subsets)


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


FALLBACK_NOTE = (
    "lo/hi are the scene bootstrap's percentile interval, or (interval 'effective n', 'why' "
    "says why) the Korn-Graubard interval: Clopper-Pearson on the effective number of rows "
    "p(1-p)/V_clustered, df-adjusted for the number of scenes; at 0 or 100 % each scene counts "
    "once; differences combine their parts' intervals (MOVER). It is used with fewer than 30 "
    "scenes, when the resamples do not vary, or with fewer than 5 effective passes or failures. "
    "deff = V_clustered / V_independent rows (assumed = rows per scene where it cannot be "
    "estimated); see rose_eval/analyses/precision.py"
)


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
    """95% intervals for every headline number: the scene-cluster bootstrap's, or the
    effective-n interval where it degenerates, with scenes, design effect and SE
    (:mod:`rose_eval.analyses.precision`)."""
    if n_boot < 1 or seed < 0:
        raise ValueError(f"the bootstrap needs n_boot >= 1 and seed >= 0, got {n_boot} and {seed}")
    table = build_scene_table(items)
    if not table.subsets:
        return {"n_boot": n_boot, "seed": seed, "n_scenes": {}, "note": "no rows of a known subset"}
    from rose_eval.analyses.precision import honest_intervals  # it builds on this module

    point = point_statistics(table)
    totals = resampled_totals([table], n_boot, seed)[0]
    draws = headline_statistics(as_float_totals(totals, table), table.subsets)
    flat: dict[str, Any] = {name: interval(point[name][0], draws[name]) for name in point}
    flat.update(honest_intervals(table, {name: float(v[0]) for name, v in point.items()}, flat))
    return {
        "method": "percentile bootstrap; scenes resampled with replacement within each subset",
        "fallback": FALLBACK_NOTE,
        "level": LEVEL,
        "n_boot": n_boot,
        "seed": seed,
        "n_scenes": table.n_scenes,
        **_nest(flat),
    }
