"""Scene-cluster bootstrap: correctness of the vectorised sums, coverage and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from rose_eval.analyses.bootstrap import (
    build_scene_table,
    draw_weights,
    headline_statistics,
    paired_resampled_totals,
    point_totals,
    resampled_totals,
    scene_bootstrap,
    scene_weights,
    subsample_weights,
)
from rose_eval.analyses.gap import perception_action_gap
from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER
from tests.rose_eval.analyses.factory import GLYPH, STYLE, item, scene


def _random_items(seed: int, scenes_per_subset: int = 20) -> list[dict]:
    rng = np.random.default_rng(seed)
    items = []
    for subset in SUBSET_ORDER[:3]:
        for k in range(scenes_per_subset):
            passes = tuple(int(x) for x in rng.random(5) < rng.random())
            for row in scene(subset, f"{subset}-{k}", passes):
                row["format_valid"] = int(rng.random() < 0.9)
                row["unified_soft"] = float(rng.random())
                items.append(row)
    return items


def test_point_estimates_equal_the_public_table_definitions() -> None:
    items = _random_items(1)
    result = scene_bootstrap(items, n_boot=50)
    gap = perception_action_gap(items)
    for short, value in gap["template_pass"].items():
        assert result["table2"][short]["point"] == pytest.approx(value)
    assert result["gap"]["Delta"]["point"] == pytest.approx(gap["Delta"])
    for subset in SUBSET_ORDER[:3]:
        rows = [r for r in items if r["rose_subset"] == subset]
        assert result["table1"][subset]["PASS"]["point"] == pytest.approx(
            np.mean([r["pass"] for r in rows]))
        assert result["table1"][subset]["VALID"]["point"] == pytest.approx(
            np.mean([r["format_valid"] for r in rows]))
    subset_pass = [result["table1"][s]["PASS"]["point"] for s in SUBSET_ORDER[:3]]
    assert result["table1"]["Avg. PASS"]["point"] == pytest.approx(np.mean(subset_pass))
    template_pass = [result["table2"][s]["point"] for s in gap["template_pass"]]
    assert result["table2"]["Avg. PASS"]["point"] == pytest.approx(np.mean(template_pass))


def test_vectorised_resamples_match_a_loop_over_resampled_scenes() -> None:
    items = _random_items(2, scenes_per_subset=7)
    table = build_scene_table(items)
    weights = draw_weights(table.n_scenes, 25, seed=3)
    fast = headline_statistics(resampled_totals(table, weights), table.subsets)
    by_scene: dict[tuple[str, str], list[dict]] = {}
    for row in items:
        by_scene.setdefault((row["rose_subset"], row["scene_id"]), []).append(row)
    for b in range(25):
        resampled = []
        for subset, ids in zip(table.subsets, table.scene_ids, strict=True):
            for scene_id, times in zip(ids, weights[subset][b], strict=True):
                resampled += by_scene[(subset, scene_id)] * int(times)
        slow = scene_bootstrap(resampled, n_boot=1)  # its point = this resample's statistics
        assert fast["table1/Avg. PASS"][b] == pytest.approx(slow["table1"]["Avg. PASS"]["point"])
        assert fast["table2/Avg. PASS"][b] == pytest.approx(slow["table2"]["Avg. PASS"]["point"])
        assert fast["gap/Delta"][b] == pytest.approx(slow["gap"]["Delta"]["point"])
        assert fast["table1/VALID"][b] == pytest.approx(slow["table1"]["VALID"]["point"])


def test_chunked_draws_equal_one_block_and_match_the_weights_path() -> None:
    table = build_scene_table(_random_items(6, scenes_per_subset=9))
    whole = paired_resampled_totals([table], 60, seed=5)[0]
    chunked = paired_resampled_totals([table], 60, seed=5, chunk=7)[0]
    np.testing.assert_array_equal(whole, chunked)
    np.testing.assert_allclose(whole, resampled_totals(table, draw_weights(table.n_scenes, 60, 5)))


def test_subsample_weights_keep_a_fixed_share_without_repeats() -> None:
    weights = subsample_weights(11, 300, np.random.default_rng(1), fraction=0.5)
    assert weights.shape == (300, 11)
    assert set(np.unique(weights)) == {0.0, 1.0}
    assert np.all(weights.sum(axis=1) == 6)
    assert abs(weights.mean(axis=0) - 6 / 11).max() < 0.1  # every scene equally likely


def test_weights_are_scene_multiplicities() -> None:
    weights = scene_weights(13, 400, np.random.default_rng(0))
    assert weights.shape == (400, 13)
    assert np.all(weights.sum(axis=1) == 13)
    assert np.all(weights >= 0) and np.all(weights == np.round(weights))
    assert abs(weights.mean() - 1.0) < 0.05


def test_interval_contains_point_and_is_reproducible_for_a_seed() -> None:
    items = _random_items(4)
    first = scene_bootstrap(items, seed=7, n_boot=2000)
    again = scene_bootstrap(items, seed=7, n_boot=2000)
    other = scene_bootstrap(items, seed=8, n_boot=2000)
    assert first == again
    assert first["table1"]["Avg. PASS"] != other["table1"]["Avg. PASS"]
    for ci in (first["table1"]["Avg. PASS"], first["table2"]["Avg. PASS"],
               first["gap"]["Counting Avg."], first["gap"]["Action Avg."],
               first["table1"][GLYPH]["PASS"], first["table1"]["VALID"]):
        assert ci["lo"] <= ci["point"] <= ci["hi"]
        assert ci["lo"] < ci["hi"]


def test_interval_collapses_when_all_scenes_agree() -> None:
    items = []
    for subset in (GLYPH, STYLE):
        for k in range(30):
            items += scene(subset, f"{subset}-{k}", (1, 1, 0, 1, 0))
    result = scene_bootstrap(items, n_boot=500)
    for ci in (result["table1"]["Avg. PASS"], result["table2"]["L-Clk"],
               result["gap"]["Delta"], result["table1"][STYLE]["PASS"]):
        assert ci["lo"] == pytest.approx(ci["point"]) and ci["hi"] == pytest.approx(ci["point"])
    assert result["gap"]["Delta"]["point"] == pytest.approx(1.0 - 1 / 3)


def test_resamples_scenes_not_items() -> None:
    # Every scene passes or fails as a block: 5 perfectly correlated items per scene.
    # Scene resampling must give an interval about sqrt(5) wider than item resampling
    # would (item-level SE = sqrt(p(1-p)/n_items), scene-level = sqrt(p(1-p)/n_scenes)).
    n_scenes = 400
    items = []
    for k in range(n_scenes):
        passed = k % 2
        items += scene(GLYPH, f"s{k}", (passed,) * 5)
    ci = scene_bootstrap(items, n_boot=4000)["table1"][GLYPH]["PASS"]
    width = ci["hi"] - ci["lo"]
    scene_width = 2 * 1.96 * np.sqrt(0.25 / n_scenes)
    item_width = 2 * 1.96 * np.sqrt(0.25 / (5 * n_scenes))
    assert width == pytest.approx(scene_width, rel=0.15)
    assert width > 1.8 * item_width


def test_subsets_are_resampled_separately() -> None:
    # Resampling within subset keeps each subset's scene count; a subset whose scenes
    # all agree keeps a zero-width interval even next to a noisy subset.
    items = []
    for k in range(40):
        items += scene(GLYPH, f"g{k}", (1, 1, 1, 1, 1))
        items += scene(STYLE, f"s{k}", (k % 2,) * 5)
    result = scene_bootstrap(items, n_boot=500)
    glyph = result["table1"][GLYPH]["PASS"]
    assert glyph["lo"] == glyph["hi"] == 1.0
    assert result["table1"][STYLE]["PASS"]["lo"] < result["table1"][STYLE]["PASS"]["hi"]
    assert result["n_scenes"] == {GLYPH: 40, STYLE: 40}


def test_bridge_rows_count_in_table1_only_and_unknown_subsets_nowhere() -> None:
    # Table 1 averages all rows of a subset, as the public evaluator's paper_table1 does;
    # Table 2 and the gap are per main template.
    items = scene(GLYPH, "g1", (1, 0, 0, 0, 0)) + [
        item(GLYPH, "g1", "T1B_CLICK_GLOBAL", 1),
        item("ROSE-Other", "x1", TEMPLATE_ORDER[0], 1),
    ]
    result = scene_bootstrap(items, n_boot=10)
    assert result["table1"][GLYPH]["PASS"]["point"] == pytest.approx(2 / 6)
    assert result["table2"]["G-Cnt"]["point"] == 1.0
    assert result["table2"]["Avg. PASS"]["point"] == pytest.approx(0.2)
    assert list(result["n_scenes"]) == [GLYPH]


def test_empty_input_gives_a_note_not_an_error() -> None:
    assert scene_bootstrap([], n_boot=10)["n_scenes"] == {}


def test_point_totals_shape() -> None:
    table = build_scene_table(_random_items(5, scenes_per_subset=3))
    assert point_totals(table).shape[:2] == (1, 3)
