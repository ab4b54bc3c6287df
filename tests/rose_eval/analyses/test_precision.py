"""Scene-clustered precision and the effective-n interval: formulas, boundaries, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rose_eval.analyses.bootstrap import (
    build_scene_table,
    interval,
    point_statistics,
    scene_bootstrap,
)
from rose_eval.analyses.precision import (
    MIN_BOOTSTRAP_SCENES,
    effective_n_interval,
    linear_forms,
    mover,
    precision_of,
    scene_values,
)
from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER, template_of
from tests.rose_eval.analyses.factory import GLYPH, STYLE, scene


def _random_items(seed: int, scenes: int = 12, subsets: int = 3) -> list[dict]:
    rng = np.random.default_rng(seed)
    items = []
    for subset in SUBSET_ORDER[:subsets]:
        for k in range(int(scenes)):
            level = rng.random()
            passes = tuple(int(x) for x in rng.random(5) < level)
            for row in scene(subset, f"{subset}-{k}", passes):
                row["format_valid"] = int(rng.random() < 0.9)
                row["unified_soft"] = float(rng.random())
                items.append(row)
    return items


def _precision(items: list[dict], name: str):
    table = build_scene_table(items)
    point = point_statistics(table)[name][0]
    return precision_of(scene_values(table), linear_forms(table)[name], point)


def test_linear_forms_give_every_headline_number() -> None:
    table = build_scene_table(_random_items(1))
    values = scene_values(table)
    for name, point in point_statistics(table).items():
        form = linear_forms(table)[name]
        if not np.isfinite(point[0]):  # no rows (C-F1 without click rows): no form either
            assert form == ()
            continue
        value = math.fsum(t.weight * values[t.subset].totals[t.num] / values[t.subset].totals[t.den]
                          for t in form)
        assert value == pytest.approx(point[0], abs=1e-12), name


def _miller_clustered_variance(scores: list[float], clusters: list[str]) -> float:
    """Miller (2024), Appendix A, with inspect_ai's C/(C-1) correction, written out per item."""
    mean = sum(scores) / len(scores)
    total = 0.0
    for cluster in set(clusters):
        members = [s - mean for s, c in zip(scores, clusters, strict=True) if c == cluster]
        total += sum(a * b for a in members for b in members)
    n_clusters = len(set(clusters))
    return total * n_clusters / (n_clusters - 1) / len(scores) ** 2


def test_clustered_variance_is_millers_and_macros_add_strata() -> None:
    items = _random_items(2)
    per_subset = []
    for subset in SUBSET_ORDER[:3]:
        rows = [r for r in items if r["rose_subset"] == subset]
        expected = _miller_clustered_variance([r["pass"] for r in rows],
                                              [r["scene_id"] for r in rows])
        prec = _precision(items, f"table1/{subset}/PASS")
        assert prec.variance == pytest.approx(expected, rel=1e-12)
        assert prec.deff == pytest.approx(expected / (prec.point * (1 - prec.point) / 60))
        per_subset.append(expected)
    avg = _precision(items, "table1/Avg. PASS")  # equal weights 1/3 over independent subsets
    assert avg.variance == pytest.approx(sum(per_subset) / 9, rel=1e-12)
    # A template's PASS has one row per scene: clustering cannot matter there.
    g_cnt = [r for r in items if template_of(r) == TEMPLATE_ORDER[0]]
    assert _precision(g_cnt, "table2/G-Cnt").deff == pytest.approx(12 / 11, rel=0.35)


def test_a_scene_whose_rows_move_together_has_the_design_effect_of_its_size() -> None:
    # Every scene passes or fails as a block of 5 rows: deff = 1 + (5 - 1) * 1 = 5.
    items = []
    for k in range(200):
        items += scene(GLYPH, f"s{k}", (k % 2,) * 5)
    prec = _precision(items, f"table1/{GLYPH}/PASS")
    assert prec.deff == pytest.approx(5 * 200 / 199)
    assert prec.n_eff == pytest.approx(199.0)


@pytest.mark.parametrize("n_scenes", [4, 12, 40])
def test_the_perfect_run_interval_is_not_a_point_and_contains_100(n_scenes: int) -> None:
    items = []
    for subset in (GLYPH, STYLE):
        for k in range(n_scenes):
            items += scene(subset, f"{subset}-{k}", (1, 1, 1, 1, 1))
    result = scene_bootstrap(items, n_boot=300)
    for record in (result["table1"][GLYPH]["PASS"], result["table1"]["Avg. PASS"],
                   result["table2"]["Avg. PASS"], result["table2"]["L-Clk"]):
        assert record["bootstrap"] == {"lo": 1.0, "hi": 1.0}  # what the bootstrap says
        assert record["point"] == 1.0 and record["hi"] == 1.0
        assert record["lo"] < 1.0  # a width, and 100 inside it
        assert record["interval"] == "effective n" and record["deff_assumed"] is True
    # Each scene counts once: the subset's lower end is Clopper-Pearson's for n_scenes of
    # n_scenes, (alpha/2)^(1/n) (no df shrinkage: nothing is estimated).
    glyph = result["table1"][GLYPH]["PASS"]
    assert glyph["lo"] == pytest.approx(0.025 ** (1 / n_scenes), abs=1e-9)
    assert glyph["deff"] == pytest.approx(5.0) and glyph["n_eff"] == pytest.approx(n_scenes)
    # The gap of a perfect run is 0 with a two-sided interval.
    delta = result["gap"]["Delta"]
    assert delta["lo"] < 0.0 == delta["point"] < delta["hi"]


def test_a_zero_run_is_mirrored() -> None:
    items = []
    for k in range(10):
        items += scene(GLYPH, f"s{k}", (0, 0, 0, 0, 0))
    record = scene_bootstrap(items, n_boot=100)["table1"][GLYPH]["PASS"]
    assert record["lo"] == 0.0 and record["hi"] == pytest.approx(1 - 0.025 ** (1 / 10))


def test_the_bootstrap_is_kept_where_it_holds() -> None:
    items = _random_items(3, scenes=60, subsets=2)
    record = scene_bootstrap(items, n_boot=2000)["table1"]["Avg. PASS"]
    assert record["n_scenes"] == 120 >= MIN_BOOTSTRAP_SCENES
    assert record["interval"] == "scene bootstrap" and record["why"] is None
    assert (record["lo"], record["hi"]) == (record["bootstrap"]["lo"], record["bootstrap"]["hi"])
    # ... and then the two intervals nearly agree
    eff = record["effective_n"]
    assert eff["hi"] - eff["lo"] == pytest.approx(record["hi"] - record["lo"], rel=0.25)


def test_rare_failures_use_the_effective_n_interval() -> None:
    items = []
    for k in range(100):
        items += scene(GLYPH, f"s{k}", (1, 1, 1, 1, 0) if k == 0 else (1,) * 5)
    record = scene_bootstrap(items, n_boot=500)["table1"][GLYPH]["PASS"]
    assert record["why"] == ["fewer than 5 effective passes or failures"]
    assert record["lo"] < record["bootstrap"]["lo"]


def test_mover_reduces_to_the_parts() -> None:
    # r = 0: square-and-add; r = 1 with equal half-widths: no width left.
    lo, hi = mover(0.1, (0.6, 0.5, 0.7), (0.5, 0.45, 0.55), 0.0)
    assert (lo, hi) == pytest.approx((0.1 - math.hypot(0.1, 0.05), 0.1 + math.hypot(0.1, 0.05)))
    assert mover(0.0, (0.5, 0.4, 0.6), (0.5, 0.4, 0.6), 1.0) == pytest.approx((0.0, 0.0))


def test_effective_n_interval_covers_with_few_scenes_where_the_bootstrap_does_not() -> None:
    # 8 scenes of 5 correlated rows (scene-level rate ~ N(0.85, 0.15) clipped): the percentile
    # bootstrap's 95 % interval covers the truth ~88 % of the time; the effective-n one >= 95 %.
    rng = np.random.default_rng(0)
    truth = float(np.clip(0.85 + np.random.default_rng(9).normal(0, 0.15, 1_000_000), 0, 1).mean())
    covered_eff = covered_boot = 0
    runs = 300
    for _ in range(runs):
        counts = rng.binomial(5, np.clip(0.85 + rng.normal(0, 0.15, 8), 0, 1))
        items = []
        for k, passed in enumerate(counts):
            items += scene(GLYPH, f"s{k}", tuple([1] * int(passed) + [0] * (5 - int(passed))))
        prec = _precision(items, "table1/Avg. PASS")
        lo, hi = effective_n_interval(prec)
        covered_eff += lo <= truth <= hi
        draws = counts[rng.integers(0, 8, (400, 8))].sum(axis=1) / 40
        boot = interval(prec.point, draws)
        covered_boot += boot["lo"] <= truth <= boot["hi"]
    assert covered_eff / runs >= 0.95
    assert covered_boot / runs < 0.92
