"""The three quantile functions the intervals and the power arithmetic need, in plain Python.

scipy.special has them, but importing it costs 0.3 s on an idle machine and over 1 s on a
loaded one (measured: ``python -X importtime -c "import scipy.special"``, most of it
``scipy._lib._array_api``), more than the whole scene bootstrap; the evaluator's interval
records need about forty quantiles, so they are computed here: the normal quantile from the
standard library, the regularized incomplete beta by its continued fraction (Lentz's method,
as in Numerical Recipes, section 6.4), its inverse by Newton's method inside a bisection
bracket, and Student's t through the beta (``P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2)``).
``tests/rose_eval/analyses/test_quantiles.py`` checks them against scipy to 1e-10.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_NORMAL = NormalDist()
_MAX_TERMS = 10_000
_EPS = 1e-16
_TINY = 1e-300


def normal_quantile(p: float) -> float:
    """The standard normal's p-quantile."""
    return _NORMAL.inv_cdf(p)


def _continued_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta ``I_x(a, b)`` (a, b > 0)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


@lru_cache(maxsize=4096)
def beta_quantile(p: float, a: float, b: float) -> float:
    """The p-quantile of Beta(a, b): the x with ``I_x(a, b) = p``."""
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_norm = _log_beta(a, b)
    lo, hi = 0.0, 1.0
    # Start from the normal approximation (few Newton steps for the large a, b of intervals).
    mean, total = a / (a + b), a + b
    spread = math.sqrt(a * b / (total * total * (total + 1.0)))
    x = min(max(mean + normal_quantile(p) * spread, 1e-12), 1.0 - 1e-12)
    for _ in range(400):
        f = beta_cdf(x, a, b) - p
        if f == 0.0:
            return x
        if f < 0:
            lo = x
        else:
            hi = x
        density = math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - log_norm)
        step = f / density if density > 0 and math.isfinite(density) else math.inf
        new = x - step
        if not lo < new < hi:  # Newton left the bracket: bisect instead
            new = (lo + hi) / 2.0
        if abs(new - x) <= 1e-14 * max(x, 1e-300) or hi - lo <= 1e-17:
            return new
        x = new
    return x


@lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """Student's t p-quantile with ``df`` degrees of freedom (df > 0)."""
    if p == 0.5:
        return 0.0
    tail = min(p, 1.0 - p)
    x = beta_quantile(2.0 * tail, df / 2.0, 0.5)
    t = math.sqrt(df * (1.0 - x) / x) if x > 0 else math.inf
    return t if p > 0.5 else -t
