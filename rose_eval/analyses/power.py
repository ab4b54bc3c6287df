"""How many scenes a claim needs: minimum detectable differences and scene counts.

The arithmetic of Miller (2024, "Adding Error Bars to Evals", arXiv 2411.00640, sections 2-5)
with the scene as the cluster. A Table 1 number (PASS, SOFT or VALID; Avg. = the equal
mean over subsets) is estimated from ``n`` scenes per subset with variance
``V(n) = sum_s sigma2_s / n``, where ``sigma2_s`` is subset s's variance per scene: from a
pilot, its scene-clustered contribution ``C_s/(C_s-1) sum_c z_c^2`` times its scenes ``C_s``
(:mod:`rose_eval.analyses.precision`); from stated rates,
``w_s^2 p (1 - p) (1 + (m - 1) icc) / m`` (m rows per scene, icc the within-scene
correlation of the rows, ``1 + (m - 1) icc`` the design effect). For two models on the same
scenes the paired difference has ``sigma2_d = sigma2_A + sigma2_B - 2 cov_AB`` (the pilot's
scene-level covariance, or ``rho sigma_A sigma_B`` from a stated correlation rho).

A two-sided test at level alpha detects a true difference delta with probability ``power``
when ``(z_{1-alpha/2} + z_power) sqrt(V(n)) <= delta``, so

- the minimum detectable difference of a run with ``C_s`` scenes is
  ``MDD = (z_{1-alpha/2} + z_power) sqrt(sum_s sigma2_s / C_s)``;
- the scenes per subset needed for delta are ``n = ceil((z_{1-alpha/2} + z_power)^2
  sum_s sigma2_s / delta^2)``.

A subset whose pilot shows no variance (every scene passed, or every scene failed, or too
few scenes to estimate it) cannot tell how noisy it is: it is planned at the bound of its
effective-n interval nearest 50 % with each scene counted once (icc 1), and without
covariance with the other model: the honest worst case the pilot allows, marked in the
output. Repeated samples of an item (epochs) are rows of its scene: a pilot run with K
epochs gives the variance, and so the scene count, of runs with K epochs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rose_eval.analyses.bootstrap import LEVEL, SceneTable
from rose_eval.analyses.precision import (
    LinearForm,
    Precision,
    SceneValues,
    Term,
    clustered_covariance,
    contributing,
    effective_n_interval,
    influences,
    linear_forms,
    paired_difference,
    precision_of,
    scene_values,
)
from rose_eval.analyses.quantiles import normal_quantile
from rose_eval.vocab import SUBSET_SHORT

METRICS: dict[str, str] = {"PASS": "Avg. PASS", "SOFT": "Avg. SOFT", "VALID": "VALID"}
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8


def z_sum(alpha: float, power: float) -> float:
    """``z_{1-alpha/2} + z_power`` (two-sided test)."""
    return normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power)


def minimum_detectable(variance: float, alpha: float, power: float) -> float:
    """The smallest true difference a two-sided level-alpha test finds with that power."""
    return z_sum(alpha, power) * math.sqrt(max(variance, 0.0))


def scenes_needed(sigma2_per_scene: float, delta: float, alpha: float, power: float) -> int:
    """Scenes per subset so that ``sum_s sigma2_s / n`` detects ``delta`` (at least 2)."""
    if delta <= 0:
        raise ValueError(f"delta must be above 0, got {delta}")
    return max(2, math.ceil(z_sum(alpha, power) ** 2 * sigma2_per_scene / delta**2 - 1e-9))


# ---- the pilot's variance per scene, subset by subset ----------------------------------------

@dataclass(frozen=True)
class SubsetVariance:
    """One subset's part of a number: its variance per scene and how it was obtained."""

    subset: str
    n_scenes: int
    rows_per_scene: float  # mean rows of the number's cells per contributing scene
    weight: float  # the subset's total weight in the number (1/S for an Avg.)
    points: tuple[float, ...]  # the subset's own value per model
    sigma2: float  # variance per scene of the number's subset part (weight included)
    planned_at: tuple[float | None, ...]  # per model: the planning rate when substituted
    deff: tuple[float | None, ...]  # per model: design effect (None where not estimable)
    icc: tuple[float | None, ...]  # per model: within-scene correlation of the rows
    correlation: float | None = None  # paired: the two models' scene-level correlation

    @property
    def substituted(self) -> bool:
        return any(p is not None for p in self.planned_at)

    @property
    def sigma2_own(self) -> float:
        """Variance per scene of the subset's own value (weight 1)."""
        return self.sigma2 / self.weight**2


def _restrict(form: LinearForm, subset: int) -> LinearForm:
    """The form's terms in one subset, reweighted to sum to 1."""
    terms = [t for t in form if t.subset == subset]
    total = math.fsum(t.weight for t in terms)
    return tuple(Term(t.subset, t.num, t.den, t.weight / total) for t in terms)


def _point(values: Sequence[SceneValues], form: LinearForm) -> float:
    return math.fsum(t.weight * values[t.subset].totals[t.num] / values[t.subset].totals[t.den]
                     for t in form)


def planning_rate(prec: Precision) -> float:
    """The rate to plan at when the pilot shows no variance: the bound of the effective-n
    interval nearest 50 % (50 % itself when the interval contains it)."""
    lo, hi = effective_n_interval(prec)
    return 0.5 if lo <= 0.5 <= hi else min((lo, hi), key=lambda p: abs(p - 0.5))


@dataclass(frozen=True)
class _ModelPart:
    prec: Precision
    z: dict[int, np.ndarray]
    sigma2: float  # weight 1
    planned_at: float | None


def _model_part(values: Sequence[SceneValues], form: LinearForm) -> _ModelPart:
    prec = precision_of(values, form, _point(values, form))
    z = influences(values, form)
    if prec.estimable:
        return _ModelPart(prec, z, prec.variance * prec.n_scenes, None)
    plan = planning_rate(prec)
    return _ModelPart(prec, z, plan * (1.0 - plan), plan)


def _implied_paired(values: Sequence[Sequence[SceneValues]], form: LinearForm,
                    points: tuple[float, float]) -> float:
    """Variance per scene implied by the paired difference's effective-n interval (MOVER of
    the two runs' intervals): used where the difference is the same in every scene, so the
    pilot shows no variance of it (the interval's half-width taken as 1.96 SE)."""
    record = paired_difference(values[0], values[1], form, points, {"lo": None, "hi": None})
    lo, hi = record["effective_n"]["lo"], record["effective_n"]["hi"]
    se = (hi - lo) / (2.0 * normal_quantile(1.0 - (1.0 - LEVEL) / 2.0))
    return se * se * int(record["n_scenes"])


def _scene_rows(values: SceneValues, form: LinearForm) -> np.ndarray:
    """Each scene's rows in the form's cells."""
    return sum(values.values[:, den] for den in sorted({t.den for t in form}))


def _rows_per_scene(values: SceneValues, form: LinearForm) -> float:
    rows = _scene_rows(values, form)
    used = rows[rows > 0]
    return float(used.mean()) if used.size else 0.0


def _icc(prec: Precision, rows_weighted: float) -> float | None:
    if prec.deff_assumed or rows_weighted <= 1.0:
        return None
    return (prec.deff - 1.0) / (rows_weighted - 1.0)


def _weighted_rows(values: SceneValues, form: LinearForm) -> float:
    """Kish's mean cluster size sum m^2 / sum m (the m of deff = 1 + (m - 1) icc)."""
    rows = _scene_rows(values, form)
    total = float(rows.sum())
    return float((rows**2).sum()) / total if total else 0.0


def subset_variances(tables: Sequence[SceneTable], metric: str = "PASS"
                     ) -> list[SubsetVariance]:
    """Per subset, the variance per scene of the metric's Avg. (one table: one model's;
    two tables on the same scenes: the paired difference first minus second)."""
    name = f"table1/{METRICS[metric]}"
    values = [scene_values(t) for t in tables]
    forms = [linear_forms(t)[name] for t in tables]
    if len(tables) == 2 and forms[0] != forms[1]:
        raise ValueError("the two runs do not have rows in the same subsets")
    form = forms[0]
    out = []
    for i in sorted({t.subset for t in form}):
        weight = math.fsum(t.weight for t in form if t.subset == i)
        own = _restrict(form, i)
        parts = [_model_part(v, own) for v in values]
        if len(parts) == 1:
            sigma2 = parts[0].sigma2
            corr = None
        else:
            a, b = parts
            scenes = contributing(values[0], own)
            if a.planned_at is None and b.planned_at is None:
                cov = clustered_covariance(a.z, b.z, scenes) * a.prec.n_scenes
                corr = cov / math.sqrt(a.sigma2 * b.sigma2)
            else:
                cov, corr = 0.0, None  # no covariance to estimate: none assumed
            sigma2 = max(a.sigma2 + b.sigma2 - 2.0 * cov, 0.0)
            if sigma2 <= 0.0:  # the difference is the same in every scene
                sigma2 = _implied_paired(values, own, (a.prec.point, b.prec.point))
        m_w = _weighted_rows(values[0][i], own)
        out.append(SubsetVariance(
            subset=tables[0].subsets[i], n_scenes=parts[0].prec.n_scenes,
            rows_per_scene=_rows_per_scene(values[0][i], own), weight=weight,
            points=tuple(p.prec.point for p in parts), sigma2=weight**2 * sigma2,
            planned_at=tuple(p.planned_at for p in parts),
            deff=tuple(None if p.prec.deff_assumed else p.prec.deff for p in parts),
            icc=tuple(_icc(p.prec, m_w) for p in parts), correlation=corr))
    return out


def stated_variances(rates: Sequence[float], subsets: Sequence[str], *, icc: float,
                     rows_per_scene: float, correlation: float = 0.0) -> list[SubsetVariance]:
    """Per subset, the variance per scene from stated rates (one rate: one model; two: the
    paired difference), every subset alike, equal weights."""
    weight = 1.0 / len(subsets)
    deff = 1.0 + (rows_per_scene - 1.0) * icc
    per_model = [p * (1.0 - p) * deff / rows_per_scene for p in rates]
    if len(per_model) == 1:
        sigma2 = per_model[0]
    else:
        sigma2 = per_model[0] + per_model[1] - 2 * correlation * math.sqrt(
            per_model[0] * per_model[1])
    return [SubsetVariance(subset=s, n_scenes=0, rows_per_scene=rows_per_scene, weight=weight,
                           points=tuple(rates), sigma2=weight**2 * sigma2,
                           planned_at=(None,) * len(rates), deff=(deff,) * len(rates),
                           icc=(icc,) * len(rates),
                           correlation=correlation if len(rates) == 2 else None)
            for s in subsets]


# ---- the plan --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SubsetPlan:
    """One subset's line of the plan (its own value, weight 1)."""

    part: SubsetVariance
    se_now: float | None
    mdd_now: float | None
    scenes_alone: int  # scenes to detect delta on this subset's own value


@dataclass(frozen=True)
class Plan:
    """The whole plan for the metric's Avg. (rates and differences as fractions)."""

    metric: str
    paired: bool
    alpha: float
    power: float
    delta: float
    subsets: tuple[SubsetPlan, ...]
    se_now: float | None
    mdd_now: float | None
    scenes_per_subset: int
    deff: float | None = None  # of the Avg. now (pilot only)
    notes: tuple[str, ...] = field(default=())
    pilot_df: int | None = None  # scenes minus subsets behind the pilot's variance
    scenes_per_subset_upper: int | None = None  # at the variance's upper confidence bound


def make_plan(parts: Sequence[SubsetVariance], *, metric: str, delta: float, alpha: float,
              power: float, deff: float | None = None) -> Plan:
    """MDD now (when the parts come from a pilot) and the scenes needed for ``delta``."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must lie strictly between 0 and 1")
    pilot = all(p.n_scenes > 0 for p in parts)
    lines = []
    for p in parts:
        se = math.sqrt(p.sigma2_own / p.n_scenes) if pilot else None
        lines.append(SubsetPlan(p, se, None if se is None else z_sum(alpha, power) * se,
                                scenes_needed(p.sigma2_own, delta, alpha, power)))
    se_now = math.sqrt(math.fsum(p.sigma2 / p.n_scenes for p in parts)) if pilot else None
    by_rate: dict[float, list[str]] = {}
    for p in parts:
        for model, rate in enumerate(p.planned_at):
            if rate is not None:
                who = f" {'AB'[model]}" if len(p.planned_at) == 2 else ""
                by_rate.setdefault(round(rate, 3), []).append(
                    SUBSET_SHORT.get(p.subset, p.subset) + who)
    notes = []
    if by_rate:
        planned = "; ".join(f"{100 * rate:.1f} % for {', '.join(names)}"
                            for rate, names in sorted(by_rate.items()))
        notes.append("no variance in the pilot (all its scenes agree, or too few to tell): "
                     f"planned at the bound of the effective-n interval nearest 50 % ({planned}), "
                     "each scene counted once and no correlation between the models assumed")
    total = math.fsum(p.sigma2 for p in parts)
    df = sum(p.n_scenes for p in parts) - len(parts) if pilot else None
    upper = (scenes_needed(total * variance_upper_factor(df), delta, alpha, power)
             if df is not None and df >= 1 else None)
    return Plan(metric=metric, paired=len(parts[0].points) == 2, alpha=alpha, power=power,
                delta=delta, subsets=tuple(lines), se_now=se_now,
                mdd_now=None if se_now is None else z_sum(alpha, power) * se_now,
                scenes_per_subset=scenes_needed(total, delta, alpha, power),
                deff=deff, notes=tuple(notes), pilot_df=df, scenes_per_subset_upper=upper)


UPPER_CONFIDENCE = 0.8


def variance_upper_factor(df: int, confidence: float = UPPER_CONFIDENCE) -> float:
    """``df / chi2_{1-confidence}(df)``: how much a variance estimated on ``df`` degrees of
    freedom may be too small, at the given one-sided confidence (a pilot's variance is
    itself uncertain; Browne 1995 plans with such an upper bound). The chi-square quantile
    is Wilson and Hilferty's cube-root approximation (within 1 % from df = 5)."""
    z = normal_quantile(1.0 - confidence)
    chi2 = df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3
    return df / max(chi2, 1e-12)


def pilot_plan(tables: Sequence[SceneTable], *, metric: str = "PASS", delta: float,
               alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> Plan:
    """The plan from one pilot run (one model) or two on the same scenes (paired)."""
    parts = subset_variances(tables, metric)
    deff = None
    if len(tables) == 1:
        name = f"table1/{METRICS[metric]}"
        values = scene_values(tables[0])
        form = linear_forms(tables[0])[name]
        prec = precision_of(values, form, _point(values, form))
        deff = None if prec.deff_assumed else prec.deff
    return make_plan(parts, metric=metric, delta=delta, alpha=alpha, power=power, deff=deff)


def paired_mdd(table_a: SceneTable, table_b: SceneTable, *, metric: str = "PASS",
               alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """The minimum detectable paired difference of the metric's Avg. on these scenes."""
    parts = subset_variances([table_a, table_b], metric)
    return minimum_detectable(math.fsum(p.sigma2 / p.n_scenes for p in parts), alpha, power)
