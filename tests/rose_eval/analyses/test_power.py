"""`rose-eval power`: scene counts that deliver the stated power (checked by simulating runs with
known effects), the minimum detectable difference, the honest worst case, and the rose-gen
line that makes exactly that many scenes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rose_eval.analyses.bootstrap import build_scene_table
from rose_eval.analyses.power import (
    make_plan,
    minimum_detectable,
    pilot_plan,
    scenes_needed,
    stated_variances,
    z_sum,
)
from rose_eval.vocab import SUBSET_ORDER
from tests.rose_eval.analyses.factory import GLYPH, scene

SUBSETS = SUBSET_ORDER[:3]
ROWS = 5
TAU, KAPPA = 0.18, 0.08  # scene effect shared by both models; each model's own scene effect
MEANS = {"a": (0.62, 0.55, 0.70), "b": (0.57, 0.52, 0.64)}
RUNS = 1000
TOLERANCE = 0.03


def _scene_rates(rng: np.random.Generator, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Per model, each scene's pass probability (..., subsets, scenes): correlated rows
    within a scene (TAU, KAPPA) and between the two models (TAU)."""
    shared = rng.normal(0.0, TAU, shape)
    return {m: np.clip(np.array(mu)[:, None] + shared + rng.normal(0.0, KAPPA, shape), 0, 1)
            for m, mu in MEANS.items()}


def _table(counts: np.ndarray) -> object:
    """A SceneTable from (subsets, scenes) pass counts of ROWS rows (real per-item records)."""
    items = []
    for s, subset in enumerate(SUBSETS):
        for c, passed in enumerate(counts[s]):
            items += scene(subset, f"{subset}-{c}", tuple([1] * int(passed) + [0] * (ROWS - int(passed))))
    return build_scene_table(items)


@pytest.fixture(scope="module")
def world() -> dict:
    """A large pilot of the two models and the true differences (Monte Carlo, 10^6 scenes)."""
    rng = np.random.default_rng(1)
    rates = _scene_rates(rng, (len(SUBSETS), 1500))
    pilot = {m: _table(rng.binomial(ROWS, r)) for m, r in rates.items()}
    big = _scene_rates(np.random.default_rng(2), (len(SUBSETS), 1_000_000))
    true = {m: float(np.mean([big[m][s].mean() for s in range(len(SUBSETS))])) for m in big}
    return {"pilot": pilot, "true": true}


def _simulate(n: int, seed: int) -> dict[str, np.ndarray]:
    """RUNS fresh runs of n scenes per subset: per model, scene PASS rates (runs, subsets, n)."""
    rng = np.random.default_rng(seed)
    rates = _scene_rates(rng, (RUNS, len(SUBSETS), n))
    return {m: rng.binomial(ROWS, r) / ROWS for m, r in rates.items()}


def _clustered_rejections(scene_values: np.ndarray, null: float) -> np.ndarray:
    """Per run, whether a two-sided 5 % Wald test with scene-clustered SE rejects ``null``
    for the equal-subset mean of scene means (runs, subsets, n)."""
    n = scene_values.shape[2]
    estimate = scene_values.mean(axis=2).mean(axis=1)
    resid = scene_values - scene_values.mean(axis=2, keepdims=True)
    variance = (resid**2).sum(axis=2).sum(axis=1) / (n * (n - 1)) / len(SUBSETS) ** 2
    return np.abs(estimate - null) > 1.959963984540054 * np.sqrt(variance)


def _bootstrap_rejections(scene_values: np.ndarray, n_boot: int = 1000) -> np.ndarray:
    """Per run, whether the paired percentile interval (compare's: scenes resampled within
    subset) excludes 0. One set of resample weights serves every run (independent runs)."""
    runs, subsets, n = scene_values.shape
    rng = np.random.default_rng(4)
    draws = np.zeros((n_boot, runs))
    for s in range(subsets):
        picks = rng.integers(0, n, (n_boot, n))
        weights = np.zeros((n_boot, n))
        np.add.at(weights, (np.repeat(np.arange(n_boot), n), picks.ravel()), 1.0)
        draws += weights @ scene_values[:, s, :].T / n / subsets
    lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    return (lo > 0) | (hi < 0)


def test_paired_scene_count_detects_the_effect_at_the_stated_power(world) -> None:
    delta = world["true"]["a"] - world["true"]["b"]
    plan = pilot_plan([world["pilot"]["a"], world["pilot"]["b"]], delta=delta)
    n = plan.scenes_per_subset
    assert plan.paired and 60 < n < 400
    runs = _simulate(n, seed=3)
    differences = runs["a"] - runs["b"]
    wald = _clustered_rejections(differences, 0.0).mean()
    boot = _bootstrap_rejections(differences).mean()
    assert abs(wald - 0.8) <= TOLERANCE, wald
    assert abs(boot - 0.8) <= TOLERANCE, boot  # what `rose-eval compare` would conclude
    # Ignoring the pairing (the two runs' variances added) would need far more scenes:
    alone = [pilot_plan([world["pilot"][m]], delta=delta).scenes_per_subset for m in "ab"]
    assert sum(alone) > 1.5 * n
    # Half the scenes fall well short of the power (the count is not generous by accident).
    half = _simulate(n // 2, seed=5)
    assert _clustered_rejections(half["a"] - half["b"], 0.0).mean() < 0.8 - 2 * TOLERANCE


def test_one_models_scene_count_detects_a_shift_at_the_stated_power(world) -> None:
    delta = 0.06
    plan = pilot_plan([world["pilot"]["a"]], delta=delta)
    assert not plan.paired and plan.deff > 1.5  # rows of a scene move together
    runs = _simulate(plan.scenes_per_subset, seed=7)["a"]
    # H0: the model's Avg. PASS is delta below its true value; the test should reject it.
    power = _clustered_rejections(runs, world["true"]["a"] - delta).mean()
    assert abs(power - 0.8) <= TOLERANCE, power


def test_the_mdd_is_the_difference_the_pilot_itself_detects(world) -> None:
    pilot = world["pilot"]["a"]
    plan = pilot_plan([pilot], delta=0.05)
    # Planned at its own MDD, the scene count is the pilot's (1,500 per subset).
    again = pilot_plan([pilot], delta=plan.mdd_now)
    assert again.scenes_per_subset == pytest.approx(1500, abs=2)
    assert plan.mdd_now == pytest.approx(z_sum(0.05, 0.8) * plan.se_now)
    assert minimum_detectable(plan.se_now**2, 0.05, 0.8) == pytest.approx(plan.mdd_now)


def test_stated_rates_with_a_known_within_scene_correlation() -> None:
    # Rows of a scene: with probability q all copy one scene draw, else their own draw;
    # their correlation is exactly q^2 (the "common shock" model).
    p, icc, subsets, delta = 0.6, 0.36, 5, 0.05
    parts = stated_variances([p], [f"s{i}" for i in range(subsets)], icc=icc,
                             rows_per_scene=ROWS)
    plan = make_plan(parts, metric="PASS", delta=delta, alpha=0.05, power=0.8)
    n = plan.scenes_per_subset
    assert plan.subsets[0].part.deff[0] == pytest.approx(1 + 4 * icc)
    rng = np.random.default_rng(11)
    shape = (RUNS, subsets, n)
    shock = rng.random(shape) < p
    copies = rng.random((*shape, ROWS)) < math.sqrt(icc)
    own = rng.random((*shape, ROWS)) < p
    rows = np.where(copies, shock[..., None], own)
    scene_means = rows.mean(axis=3)
    n_sub = scene_means.shape[2]
    estimate = scene_means.mean(axis=(1, 2))
    resid = scene_means - scene_means.mean(axis=2, keepdims=True)
    se = np.sqrt((resid**2).sum(axis=(1, 2)) / (n_sub * (n_sub - 1)) / subsets**2)
    power = np.mean(np.abs(estimate - (p - delta)) > 1.959963984540054 * se)
    assert abs(power - 0.8) <= TOLERANCE, power
    # Each scene counted once (icc 1) needs deff(1)/deff(0.36) times the scenes.
    worst = make_plan(stated_variances([p], ["s"] * subsets, icc=1.0, rows_per_scene=ROWS),
                      metric="PASS", delta=delta, alpha=0.05, power=0.8)
    assert worst.scenes_per_subset == pytest.approx(n * 5 / (1 + 4 * icc), rel=0.02)


def test_scenes_needed_is_millers_formula() -> None:
    # (1.96 + 0.8416)^2 * 0.25 / 0.05^2 = 784.9 -> 785
    assert scenes_needed(0.25, 0.05, 0.05, 0.8) == 785
    with pytest.raises(ValueError, match="delta"):
        scenes_needed(0.25, 0.0, 0.05, 0.8)


def test_a_pilot_without_variance_is_planned_at_its_worst_case() -> None:
    items = []
    for k in range(12):
        items += scene(GLYPH, f"g{k}", (1, 1, 1, 1, 1))  # perfect: no variance to estimate
    plan = pilot_plan([build_scene_table(items)], delta=0.05)
    part = plan.subsets[0].part
    lower = 0.025 ** (1 / 12)  # the effective-n interval's bound nearest 50 %
    assert part.planned_at == (pytest.approx(lower),)
    assert part.sigma2 == pytest.approx(lower * (1 - lower))
    assert plan.mdd_now > 0.1 and plan.scenes_per_subset > 100
    assert "no variance in the pilot" in plan.notes[0]


@pytest.mark.parametrize("df", [5, 10, 45, 300])
def test_the_pilots_variance_bound_is_the_chi_square_ones(df: int) -> None:
    from scipy.stats import chi2

    from rose_eval.analyses.power import variance_upper_factor

    assert variance_upper_factor(df) == pytest.approx(df / chi2.ppf(0.2, df), rel=0.01)


def test_a_small_pilot_states_how_uncertain_its_count_is(world) -> None:
    plan = pilot_plan([world["pilot"]["a"]], delta=0.05)
    assert plan.pilot_df == 3 * 1500 - 3
    assert plan.scenes_per_subset < plan.scenes_per_subset_upper < 1.05 * plan.scenes_per_subset


def test_a_constant_paired_difference_is_planned_from_its_interval() -> None:
    # B passes exactly one row fewer than A in every scene: the per-scene difference never
    # varies, so its variance is taken from the difference's effective-n interval.
    rng = np.random.default_rng(5)
    a_items, b_items = [], []
    for k in range(40):
        base = [int(x) for x in rng.random(5) < 0.5]
        base[0] = 0
        better = [1] + base[1:]
        a_items += scene(GLYPH, f"g{k}", tuple(better))
        b_items += scene(GLYPH, f"g{k}", tuple(base))
    plan = pilot_plan([build_scene_table(a_items), build_scene_table(b_items)], delta=0.05)
    part = plan.subsets[0].part
    assert part.points[0] - part.points[1] == pytest.approx(0.2)
    assert not part.substituted and 0 < part.sigma2 < 0.01
    assert 2 <= plan.scenes_per_subset < 40


def test_a_perfect_model_against_a_noisy_one_is_planned_without_covariance() -> None:
    rng = np.random.default_rng(6)
    perfect, noisy = [], []
    for k in range(40):
        perfect += scene(GLYPH, f"g{k}", (1, 1, 1, 1, 1))
        noisy += scene(GLYPH, f"g{k}", tuple(int(x) for x in rng.random(5) < 0.7))
    plan = pilot_plan([build_scene_table(perfect), build_scene_table(noisy)], delta=0.05)
    part = plan.subsets[0].part
    lower = 0.025 ** (1 / 40)
    assert part.planned_at[0] == pytest.approx(lower) and part.planned_at[1] is None
    assert part.correlation is None
    noisy_alone = pilot_plan([build_scene_table(noisy)], delta=0.05).subsets[0].part.sigma2
    assert part.sigma2 == pytest.approx(lower * (1 - lower) + noisy_alone)
