"""How precise a headline number is: scene-clustered variance, design effect, effective number
of scenes, and an interval that stays honest where the scene bootstrap degenerates.

Every headline number of :mod:`rose_eval.analyses.bootstrap` is a weighted sum of cell means
(a cell: one subset's rows of one kind, e.g. its T3 rows' PASS): Table 1's Avg. PASS weighs
each subset's PASS 1/S, Table 2's template columns weigh each subset's template PASS, the gap's
Delta is Counting Avg. minus Action Avg. :func:`linear_forms` writes each number as those
weights, so its variance follows from the scenes by linearisation (Miller 2024, "Adding Error
Bars to Evals", arXiv 2411.00640, Appendix A: clustered standard errors; inspect_ai's
``stderr(cluster=...)`` is the same estimator):

- a scene's influence on the number is ``z_c = sum_k a_k (y_ck - theta_k n_ck) / N_k`` over the
  cells k of its subset (``y_ck`` its sum, ``n_ck`` its rows in cell k, ``N_k`` the cell's rows);
- subsets are independent strata, so ``V = sum_s C_s/(C_s - 1) sum_{c in s} z_c^2`` (C_s: the
  subset's contributing scenes; the C/(C-1) factor is the usual finite-cluster correction);
- against ``V_items = sum_k a_k^2 theta_k (1 - theta_k) / N_k``, the variance the same number
  would have if every row were an independent 0/1 draw, the design effect is
  ``deff = V / V_items`` (Kish's; for 0/1 scores such as PASS and VALID it is exactly the
  clustering's inflation, for SOFT and C-F1 it compares with a 0/1 score of the same mean).

The effective-n interval (Korn & Graubard 1998; the NCHS data presentation standard for
proportions from clustered surveys, Parker et al. 2017; Dean & Pagano 2015 compare it with
Wilson's on clustered data): a Clopper-Pearson interval on the effective sample size
``n_eff = p (1 - p) / V`` (at most the rows' own ``n``), shrunk by
``(t_{n-1} / t_df)^2`` for the few scenes the variance is estimated from (``df`` = scenes
minus subsets). Where ``p`` is 0 or 1 the variance cannot be estimated: every scene then
counts once (``n_eff = n`` = the scenes, i.e. the design effect is assumed to be the rows
per scene, the most a scene's rows can be correlated), so a perfect run on 4 scenes gets
``[39.8, 100]`` (``0.025^(1/4)``), not ``[100, 100]``. A difference (the gap's Delta, a
paired difference in ``compare``) gets the MOVER interval of its two parts (Zou & Donner
2008; Newcombe 1998 for paired proportions) with their correlation across scenes (0 where
it cannot be estimated).

Determinism: scene sums are exact (integer features); influences are elementwise IEEE
operations and reductions use ``math.fsum`` (exactly rounded), so they are the same on every
machine; the quantile functions (:mod:`rose_eval.analyses.quantiles`) use libm's log, exp
and lgamma, so their results are rounded to 12 decimals: a platform's last-bit differences
cannot reach the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rose_eval.analyses._rows import ACTION_TEMPLATES, COUNTING_TEMPLATES
from rose_eval.analyses.bootstrap import (
    COL_CLICK_F1,
    COL_CLICK_N,
    COL_N,
    COL_PASS,
    COL_REGION_OK,
    COL_SOFT,
    COL_TEMPLATE_N,
    COL_TEMPLATE_PASS,
    COL_VALID,
    FIXED_COLUMNS,
    LEVEL,
    SceneTable,
)
from rose_eval.analyses.quantiles import beta_quantile, t_quantile
from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT

# The bootstrap is trusted only with at least this many scenes behind a number: with fewer
# clusters, cluster-robust and percentile-bootstrap intervals are too narrow (Cameron &
# Miller 2015, "A Practitioner's Guide to Cluster-Robust Inference", section VI).
MIN_BOOTSTRAP_SCENES = 30
# ... and at least this many effective successes and failures (the classical np >= 5 rule:
# a resample cannot show a tail made of one or two scenes).
MIN_EFFECTIVE_OUTCOMES = 5.0
DECIMALS = 12
FLAT = 1e-12  # a bootstrap interval narrower than this is float noise around one value
BOOTSTRAP = "scene bootstrap"
EFFECTIVE_N = "effective n"


@dataclass(frozen=True)
class Term:
    """``weight`` times the mean of column ``num`` over column ``den`` in one subset."""

    subset: int
    num: int
    den: int
    weight: float


LinearForm = tuple[Term, ...]


def _macro(cells: Sequence[LinearForm], weight: float = 1.0) -> LinearForm:
    """Equal-weight mean of the cells that are present (as bootstrap.macro_columns does)."""
    present = [cell for cell in cells if cell]
    if not present:
        return ()
    share = weight / len(present)
    return tuple(Term(t.subset, t.num, t.den, t.weight * share) for cell in present for t in cell)


def linear_forms(table: SceneTable) -> dict[str, LinearForm]:
    """Every headline number of ``bootstrap.headline_statistics`` as weights on cell means.

    Keys are the headline names; a cell with no rows is left out of its macro, as there.
    """
    totals = table.exact_sums

    def cell(i: int, num: int, den: int) -> LinearForm:
        return (Term(i, num, den, 1.0),) if totals[i, den] > 0 else ()

    subsets = range(len(table.subsets))
    forms: dict[str, LinearForm] = {}
    for name, col in (("PASS", COL_PASS), ("SOFT", COL_SOFT), ("VALID", COL_VALID)):
        for i, subset in enumerate(table.subsets):
            forms[f"table1/{subset}/{name}"] = cell(i, col, COL_N)
    for name, key in (("PASS", "Avg. PASS"), ("SOFT", "Avg. SOFT"), ("VALID", "VALID")):
        forms[f"table1/{key}"] = _macro([forms[f"table1/{s}/{name}"] for s in table.subsets])
    template_forms = {
        template: _macro([cell(i, COL_TEMPLATE_PASS + j, COL_TEMPLATE_N + j) for i in subsets])
        for j, template in enumerate(TEMPLATE_ORDER)
    }
    for template, form in template_forms.items():
        forms[f"table2/{TEMPLATE_SHORT[template]}"] = form
    for key, col in (("C-F1", COL_CLICK_F1), ("R-OK", COL_REGION_OK)):
        forms[f"table2/{key}"] = _macro([cell(i, col, COL_CLICK_N) for i in subsets])
    forms["table2/Avg. PASS"] = _macro(list(template_forms.values()))
    counting = _macro([template_forms[t] for t in COUNTING_TEMPLATES])
    action = _macro([template_forms[t] for t in ACTION_TEMPLATES])
    forms["gap/Counting Avg."] = counting
    forms["gap/Action Avg."] = action
    forms["gap/Delta"] = counting + tuple(Term(t.subset, t.num, t.den, -t.weight) for t in action)
    return forms


# The headline numbers that are differences of two others (their interval: MOVER of the parts).
DIFFERENCES: dict[str, tuple[str, str]] = {"gap/Delta": ("gap/Counting Avg.", "gap/Action Avg.")}


@dataclass(frozen=True)
class SceneValues:
    """One subset's scene sums as floats (fixed-point columns back in value units, exactly)."""

    values: np.ndarray  # (n_scenes, N_FEATURES) float64
    totals: np.ndarray  # (N_FEATURES,) the evaluator's float sums (bootstrap.exact_sums)


def scene_values(table: SceneTable) -> list[SceneValues]:
    """Per subset, its scenes' feature sums in value units."""
    out = []
    for i, features in enumerate(table.features):
        values = features.astype(np.float64)
        values[:, FIXED_COLUMNS] /= 2.0 ** table.fixed_bits[i]
        out.append(SceneValues(values, table.exact_sums[i]))
    return out


def influences(values: Sequence[SceneValues], form: LinearForm) -> dict[int, np.ndarray]:
    """Per subset of the form, each scene's influence ``z_c`` on the number (see module doc)."""
    out: dict[int, np.ndarray] = {}
    for term in form:
        subset = values[term.subset]
        total_n = subset.totals[term.den]
        theta = subset.totals[term.num] / total_n
        z = term.weight * (subset.values[:, term.num] - theta * subset.values[:, term.den]) / total_n
        out[term.subset] = out[term.subset] + z if term.subset in out else z
    return out


def contributing(values: Sequence[SceneValues], form: LinearForm) -> dict[int, np.ndarray]:
    """Per subset of the form, which scenes have rows in any of its cells."""
    out: dict[int, np.ndarray] = {}
    for term in form:
        has = values[term.subset].values[:, term.den] > 0
        out[term.subset] = out[term.subset] | has if term.subset in out else has
    return out


def clustered_covariance(z_a: Mapping[int, np.ndarray], z_b: Mapping[int, np.ndarray],
                         scenes: Mapping[int, np.ndarray]) -> float:
    """``sum_s C_s/(C_s-1) sum_c z_a z_b`` over the subsets both share (NaN if a C_s < 2)."""
    total = []
    for s in sorted(z_a.keys() & z_b.keys()):
        n = int(np.count_nonzero(scenes[s])) if s in scenes else len(z_a[s])
        if n < 2:
            return math.nan
        total.append(n / (n - 1) * math.fsum((z_a[s] * z_b[s]).tolist()))
    return math.fsum(total)


@dataclass(frozen=True)
class Precision:
    """What the scenes say about one number's precision (rates as fractions)."""

    point: float
    variance: float  # scene-clustered (NaN where a subset has a single scene)
    variance_items: float  # if every row were an independent 0/1 draw
    n_items: int
    n_scenes: int
    n_ref_items: float  # 1 / sum(a^2 / N_k): the rows' n of an equally weighted number
    n_ref_scenes: float  # the same if each scene were one draw (all its rows alike)
    n_strata: int  # subsets behind the number
    proportion: bool  # non-negative weights summing to 1: a mean of [0, 1] scores

    @property
    def se(self) -> float:
        return math.sqrt(self.variance) if self.variance >= 0 else math.nan

    @property
    def df(self) -> int:
        return self.n_scenes - self.n_strata

    @property
    def at_boundary(self) -> bool:
        return self.proportion and (self.point <= 0.0 or self.point >= 1.0)

    @property
    def estimable(self) -> bool:
        """Whether the scenes show any variance to build on."""
        return math.isfinite(self.variance) and self.variance > 0 and not self.at_boundary

    @property
    def nominal_n(self) -> float:
        """The sample size behind :attr:`n_eff`: the rows, or the scenes where each scene is
        counted once (at 0 or 100 %)."""
        if self.at_boundary or not math.isfinite(self.variance):
            return self.n_ref_scenes
        return self.n_ref_items

    @property
    def deff(self) -> float:
        """The design effect; where it cannot be estimated, the one :attr:`n_eff` assumes
        (rows per scene at 0 or 100 %, 1 when the scenes all show the same inner rate)."""
        if self.estimable and self.variance_items > 0:
            return self.variance / self.variance_items
        return self.n_ref_items / self.n_eff

    @property
    def deff_assumed(self) -> bool:
        return not (self.estimable and self.variance_items > 0)

    @property
    def n_eff(self) -> float:
        """Effective sample size of a proportion (Korn-Graubard), at most the rows' n."""
        if self.at_boundary or not math.isfinite(self.variance):
            return self.n_ref_scenes  # nothing to estimate from: each scene counts once
        if self.variance <= 0:
            return self.n_ref_items
        return min(self.point * (1.0 - self.point) / self.variance, self.n_ref_items)


def precision_of(values: Sequence[SceneValues], form: LinearForm, point: float) -> Precision:
    """The Precision of the number ``point`` written as ``form``."""
    z = influences(values, form)
    scenes = contributing(values, form)
    variance = clustered_covariance(z, z, scenes)
    inv_items, items_var, n_items = [], [], 0
    scene_share: dict[int, np.ndarray] = {}  # per scene: sum_k a_k n_ck / N_k
    for term in form:
        subset = values[term.subset]
        rows = subset.totals[term.den]
        theta = subset.totals[term.num] / rows
        inv_items.append(term.weight**2 / rows)
        items_var.append(term.weight**2 * theta * (1.0 - theta) / rows)
        n_items += int(rows)
        share = abs(term.weight) * subset.values[:, term.den] / rows
        scene_share[term.subset] = scene_share.get(term.subset, 0.0) + share
    # With every row of a scene alike (icc 1), a scene is one draw weighing its share:
    inv_scenes = [math.fsum((share * share).tolist()) for _, share in sorted(scene_share.items())]
    weights = [t.weight for t in form]
    return Precision(
        point=point, variance=variance, variance_items=math.fsum(items_var),
        n_items=n_items, n_scenes=sum(int(np.count_nonzero(m)) for m in scenes.values()),
        n_ref_items=1.0 / math.fsum(inv_items), n_ref_scenes=1.0 / math.fsum(inv_scenes),
        n_strata=len(scenes),
        proportion=all(w >= 0 for w in weights) and math.isclose(math.fsum(weights), 1.0),
    )


# ---- intervals -------------------------------------------------------------------------------



def clopper_pearson(successes: float, n: float, level: float = LEVEL) -> tuple[float, float]:
    """Exact binomial interval for ``successes`` of ``n`` (both may be fractional)."""
    tail = (1.0 - level) / 2.0
    lo = 0.0 if successes <= 0 else beta_quantile(tail, successes, n - successes + 1.0)
    hi = 1.0 if successes >= n else beta_quantile(1.0 - tail, successes + 1.0, n - successes)
    return lo, hi


def effective_n_interval(prec: Precision, level: float = LEVEL) -> tuple[float, float]:
    """Korn-Graubard interval of a proportion-like number (see the module docstring)."""
    if prec.df < 1:
        return 0.0, 1.0
    tail = 1.0 - (1.0 - level) / 2.0
    nominal = prec.nominal_n
    n_star = prec.n_eff * (t_quantile(tail, max(nominal - 1.0, 1.0)) / t_quantile(tail, prec.df)) ** 2
    p = min(max(prec.point, 0.0), 1.0)
    lo, hi = clopper_pearson(p * n_star, n_star, level)
    return min(lo, p), max(hi, p)


def mover(d: float, a: tuple[float, float, float], b: tuple[float, float, float],
          r: float) -> tuple[float, float]:
    """MOVER interval of ``d = a - b`` from the parts' (point, lo, hi) and their correlation."""
    (pa, la, ua), (pb, lb, ub) = a, b
    r = 0.0 if not math.isfinite(r) else max(-1.0, min(1.0, r))
    low = math.sqrt(max((pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb), 0.0))
    high = math.sqrt(max((ua - pa) ** 2 + (pb - lb) ** 2 - 2 * r * (ua - pa) * (pb - lb), 0.0))
    return d - low, d + high


def correlation(cov: float, var_a: float, var_b: float) -> float:
    """cov / sqrt(var_a var_b); 0 where either variance is 0 or unknown."""
    if not (math.isfinite(cov) and var_a > 0 and var_b > 0):
        return 0.0
    return cov / math.sqrt(var_a * var_b)


def degenerate_reasons(prec: Precision, boot_lo: float | None, boot_hi: float | None,
                       parts: Sequence[Precision] = ()) -> list[str]:
    """Why the scene bootstrap cannot be trusted for this number ([] when it can)."""
    reasons = []
    if prec.n_scenes < MIN_BOOTSTRAP_SCENES:
        reasons.append(f"fewer than {MIN_BOOTSTRAP_SCENES} scenes")
    if boot_lo is None or boot_hi is None or not boot_hi - boot_lo > FLAT:
        reasons.append("the resamples do not vary")
    rare = [p for p in (parts or (prec,)) if p.proportion
            and min(p.point, 1.0 - p.point) * p.n_eff < MIN_EFFECTIVE_OUTCOMES]
    if rare:
        reasons.append(f"fewer than {MIN_EFFECTIVE_OUTCOMES:g} effective passes or failures")
    return reasons


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), DECIMALS)


def describe(prec: Precision, boot: Mapping[str, float | None],
             effective: tuple[float, float], reasons: Sequence[str]) -> dict[str, object]:
    """One number's interval record: the shown interval first (``lo``, ``hi``), then both
    candidates, why the effective-n one is shown (if it is), and the design facts."""
    use_effective = bool(reasons)
    lo, hi = (effective if use_effective else (boot.get("lo"), boot.get("hi")))
    return {
        "point": boot.get("point"),
        "lo": _round(lo) if use_effective else lo,
        "hi": _round(hi) if use_effective else hi,
        "interval": EFFECTIVE_N if use_effective else BOOTSTRAP,
        "why": list(reasons) or None,
        "bootstrap": {"lo": boot.get("lo"), "hi": boot.get("hi")},
        "effective_n": {"lo": _round(effective[0]), "hi": _round(effective[1])},
        "n_scenes": prec.n_scenes,
        "n_items": prec.n_items,
        "se": _round(prec.se),
        "deff": _round(prec.deff),
        "deff_assumed": prec.deff_assumed,
        "n_eff": _round(prec.n_eff) if prec.proportion else None,
    }


def honest_intervals(table: SceneTable, points: Mapping[str, float],
                     boots: Mapping[str, Mapping[str, float | None]],
                     level: float = LEVEL) -> dict[str, dict[str, object]]:
    """Every headline number's interval record (see :func:`describe`), by headline name."""
    values = scene_values(table)
    forms = linear_forms(table)
    precisions = {name: precision_of(values, form, points[name])
                  for name, form in forms.items() if form and math.isfinite(points[name])}
    effective = {name: effective_n_interval(p, level) for name, p in precisions.items()
                 if p.proportion}
    out: dict[str, dict[str, object]] = {}
    for name, prec in precisions.items():
        parts: tuple[Precision, ...] = ()
        if name in DIFFERENCES:
            first, second = DIFFERENCES[name]
            if first not in precisions or second not in precisions:
                continue
            parts = (precisions[first], precisions[second])
            z_a, z_b = influences(values, forms[first]), influences(values, forms[second])
            scenes = contributing(values, forms[name])
            r = correlation(clustered_covariance(z_a, z_b, scenes), parts[0].variance,
                            parts[1].variance)
            interval = mover(prec.point, (parts[0].point, *effective[first]),
                             (parts[1].point, *effective[second]), r)
        elif prec.proportion:
            interval = effective[name]
        else:
            continue
        boot = boots[name]
        out[name] = describe(prec, boot, interval,
                             degenerate_reasons(prec, boot.get("lo"), boot.get("hi"), parts))
    return out


def paired_difference(values_a: Sequence[SceneValues], values_b: Sequence[SceneValues],
                      form: LinearForm, points: tuple[float, float],
                      boot: Mapping[str, float | None],
                      level: float = LEVEL) -> dict[str, object]:
    """The interval record of ``a - b`` for one number of two runs on the same scenes: the
    paired bootstrap's interval, or the MOVER of the two runs' effective-n intervals with
    their scene-level correlation; ``correlation`` says how much pairing gains."""
    prec_a, prec_b = (precision_of(v, form, p) for v, p in zip((values_a, values_b), points,
                                                                strict=True))
    z_a, z_b = influences(values_a, form), influences(values_b, form)
    scenes = contributing(values_a, form)
    z_d = {s: z_a[s] - z_b[s] for s in z_a}
    r = correlation(clustered_covariance(z_a, z_b, scenes), prec_a.variance, prec_b.variance)
    d = points[0] - points[1]
    prec_d = Precision(point=d, variance=clustered_covariance(z_d, z_d, scenes),
                       variance_items=prec_a.variance_items + prec_b.variance_items,
                       n_items=prec_a.n_items, n_scenes=prec_a.n_scenes,
                       n_ref_items=prec_a.n_ref_items, n_ref_scenes=prec_a.n_ref_scenes,
                       n_strata=prec_a.n_strata, proportion=False)
    interval = mover(d, (prec_a.point, *effective_n_interval(prec_a, level)),
                     (prec_b.point, *effective_n_interval(prec_b, level)), r)
    reasons = degenerate_reasons(prec_d, boot.get("lo"), boot.get("hi"), (prec_a, prec_b))
    return {**describe(prec_d, boot, interval, reasons), "correlation": _round(r)}
