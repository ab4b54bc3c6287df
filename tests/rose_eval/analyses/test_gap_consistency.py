"""Perception-to-action gap, retention and same-scene consistency on hand-sized sets."""

from __future__ import annotations

import pytest

from rose_eval.analyses.consistency import scene_consistency
from rose_eval.analyses.gap import perception_action_gap
from tests.rose_eval.analyses.factory import GLYPH, STYLE, T1, T3, T4, T5, item, scene


def _two_subsets() -> list[dict]:
    # Glyph: two scenes; Style: one scene.
    return (
        scene(GLYPH, "g1", (1, 1, 1, 0, 0))
        + scene(GLYPH, "g2", (0, 1, 1, 1, 0))
        + scene(STYLE, "s1", (1, 0, 0, 0, 1))
    )


def test_gap_is_macro_over_subsets_then_templates() -> None:
    gap = perception_action_gap(_two_subsets())
    # Template PASS: macro over subsets of item means.
    assert gap["template_pass"] == {
        "G-Cnt": pytest.approx((0.5 + 1) / 2),
        "L-Cnt": pytest.approx((1 + 0) / 2),
        "L-Clk": pytest.approx((1 + 0) / 2),
        "V-Clk": pytest.approx((0.5 + 0) / 2),
        "Excl. C+S": pytest.approx((0 + 1) / 2),
    }
    counting = (0.75 + 0.5) / 2
    action = (0.5 + 0.25 + 0.5) / 3
    assert gap["Counting Avg."] == pytest.approx(counting)
    assert gap["Action Avg."] == pytest.approx(action)
    assert gap["Delta"] == pytest.approx(counting - action)


def test_retention_uses_only_scenes_whose_t1_passed() -> None:
    retention = perception_action_gap(_two_subsets())["retention_given_t1_pass"]
    glyph = retention["by_subset"][GLYPH]
    assert glyph["n_t1_correct_scenes"] == 1  # only g1
    assert glyph["L-Clk"] == {"n": 1, "pass_rate": 1.0}
    assert glyph["V-Clk"] == {"n": 1, "pass_rate": 0.0}
    macro = retention["macro"]
    assert macro["L-Clk"] == pytest.approx((1 + 0) / 2)
    assert macro["V-Clk"] == pytest.approx(0.0)
    assert macro["Excl. C+S"] == pytest.approx((0 + 1) / 2)
    assert macro["Action Avg."] == pytest.approx((0.5 + 0 + 0.5) / 3)


def test_t5_card_alias_counts_as_template_5() -> None:
    items = [item(GLYPH, "g1", T1, 1), item(GLYPH, "g1", "T5_CLICK_EXCLUSION_SUBMIT", 1)]
    gap = perception_action_gap(items)
    assert gap["template_pass"]["Excl. C+S"] == 1.0
    assert gap["retention_given_t1_pass"]["macro"]["Excl. C+S"] == 1.0


def test_consistency_conditions_on_t1_and_reports_missing_pairs() -> None:
    items = _two_subsets() + [
        item(STYLE, "s2", T1, 1), item(STYLE, "s2", T3, 1),  # s2 lacks T2, T4, T5
        item(STYLE, "s3", T1, 0), item(STYLE, "s3", T3, 1),
    ]
    result = scene_consistency(items)
    style = result["by_subset"][STYLE]
    assert (style["n_t1_scenes"], style["n_t1_correct_scenes"]) == (3, 2)
    assert style["T1"] == pytest.approx(2 / 3)
    assert style["L-Clk|T1"] == pytest.approx(1 / 2)  # s1 failed, s2 passed; s3 excluded
    assert style["n_L-Clk|T1"] == 2
    assert style["V-Clk|T1"] == 0.0
    assert (style["n_V-Clk|T1"], style["missing_V-Clk|T1"]) == (1, 1)
    assert style["Action Ret."] == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert style["Action Fail."] == pytest.approx(1 - (0.5 + 0.0 + 1.0) / 3)
    glyph = result["by_subset"][GLYPH]
    assert glyph["L-Clk|T1"] == 1.0 and glyph["Excl-CS|T1"] == 0.0
    macro = result["macro_equal_subset"]
    assert macro["T1"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert macro["Action Ret."] == pytest.approx((glyph["Action Ret."] + style["Action Ret."]) / 2)
    # Subsets without rows are listed with empty values, as in the public script.
    assert result["by_subset"]["ROSE-PixelEdit"]["T1"] is None


def test_consistency_counts_a_scene_template_as_passed_if_any_row_passed() -> None:
    items = [item(GLYPH, "g1", T1, 1), item(GLYPH, "g1", T4, 0),
             item(GLYPH, "g1", T4, 1, item_id="dup"), item(GLYPH, "g1", T5, 0)]
    glyph = scene_consistency(items)["by_subset"][GLYPH]
    assert glyph["V-Clk|T1"] == 1.0 and glyph["n_V-Clk|T1"] == 1


def test_gap_from_the_evaluator_tables_equals_the_gap_from_items() -> None:
    from rose_eval.aggregate import paper_table2, scene_conditioned_action

    items = _two_subsets()
    paper = {"table2": paper_table2(items),
             "scene_conditioned_action_available_rows": scene_conditioned_action(items)}
    assert perception_action_gap(items, paper) == perception_action_gap(items)
