"""The plain-Python quantiles agree with scipy's (which the evaluator does not import)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betainc, betaincinv, ndtri, stdtrit

from rose_eval.analyses.quantiles import beta_cdf, beta_quantile, normal_quantile, t_quantile


def _cases(n: int) -> list[tuple[float, float, float]]:
    rng = np.random.default_rng(0)
    shapes = np.exp(rng.uniform(np.log(0.3), np.log(20_000), size=(n, 2)))
    probs = rng.choice([0.0005, 0.025, 0.1, 0.5, 0.9, 0.975, 0.9995], size=n)
    return [(float(a), float(b), float(p)) for (a, b), p in zip(shapes, probs, strict=True)]


def test_beta_quantile_and_cdf_match_scipy() -> None:
    for a, b, p in _cases(400):
        assert beta_quantile(p, a, b) == pytest.approx(float(betaincinv(a, b, p)), abs=1e-10)
        x = float(betaincinv(a, b, p))
        assert beta_cdf(x, a, b) == pytest.approx(float(betainc(a, b, x)), abs=1e-10)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 100, 1000])
def test_t_and_normal_quantiles_match_scipy(df: int) -> None:
    for p in (0.6, 0.8, 0.9, 0.975, 0.995, 0.025):
        assert t_quantile(p, df) == pytest.approx(float(stdtrit(df, p)), abs=1e-10)
        assert normal_quantile(p) == pytest.approx(float(ndtri(p)), abs=1e-12)


def test_edges() -> None:
    assert beta_quantile(0.0, 2.0, 3.0) == 0.0 and beta_quantile(1.0, 2.0, 3.0) == 1.0
    assert t_quantile(0.5, 4) == 0.0
    # Clopper-Pearson's upper end for 0 of n is 1 - (alpha/2)^(1/n) in closed form.
    assert beta_quantile(0.975, 1.0, 7.0) == pytest.approx(1 - 0.025 ** (1 / 7), abs=1e-14)
