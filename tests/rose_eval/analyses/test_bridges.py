"""Global-click and matched local-count bridges on hand-computed sets."""

from __future__ import annotations

import pytest

from rose_eval.analyses.bridges import (
    effective_case,
    global_click_bridge,
    matched_local_bridge,
)
from tests.rose_eval.analyses.factory import GLYPH, STYLE, T1, T3, T4, item

T1B, T2B = "T1B_CLICK_GLOBAL", "T2B_COUNT_LOCAL_MATCHED"


def _click(subset, scene, template, passed, unique, gt, *, valid=1, **extra):
    return item(subset, scene, template, passed, format_valid=valid, pred_click_count_unique=unique,
                gt_count=gt, invalid_coordinate_count=0, duplicate_click_count=0,
                click_f1_strict=float(passed), **extra)


def _global_items() -> tuple[list[dict], dict]:
    items = [
        _click(GLYPH, "g1", T1B, 1, 2, 2),
        _click(GLYPH, "g2", T1B, 0, 2, 2),               # right count, wrong cells
        _click(GLYPH, "g3", T1B, 0, 1, 2),               # wrong count
        _click(GLYPH, "g4", T1B, 0, 2, 2, valid=0),      # not clean: no Card-Exact
        item(GLYPH, "g1", T1, 1), item(GLYPH, "g2", T1, 1),
        item(GLYPH, "elsewhere", T1, 0, item_id="T1-of-g3"),  # found by source_item_id only
        item(GLYPH, "g4", T1, 1),                          # found by scene
        item(GLYPH, "g1", T4, 0), item(GLYPH, "g2", T4, 0),
        item(GLYPH, "g3", T4, 0), item(GLYPH, "g4", T4, 0),
        _click(STYLE, "s1", T1B, 1, 1, 1), item(STYLE, "s1", T1, 1), item(STYLE, "s1", T4, 1),
    ]
    meta = {f"{GLYPH}:g3:{T1B}": {"source_item_id": "T1-of-g3"}}
    return items, meta


def test_global_click_per_subset_definitions() -> None:
    items, meta = _global_items()
    glyph = global_click_bridge(items, meta)["by_subset"][GLYPH]
    assert glyph["gclk_pass_rate"] == pytest.approx(1 / 4)
    assert glyph["cardinality_exact_rate"] == pytest.approx(2 / 4)
    assert glyph["cardinality_exact_nonstrict_rate"] == pytest.approx(3 / 4)
    assert glyph["location_exact_given_cardinality"] == pytest.approx(1 / 2)
    assert glyph["n_main_gcnt_matched"] == 4
    assert glyph["gcnt_pass_rate"] == pytest.approx(3 / 4)   # g1, g2, g4 (g3 via its id)
    assert glyph["gcnt_to_gclk_drop"] == pytest.approx(3 / 4 - 1 / 4)
    assert glyph["gclk_pass_given_gcnt_correct"] == pytest.approx(1 / 3)
    assert glyph["gcnt_correct_gclk_wrong_rate"] == pytest.approx(2 / 4)
    assert glyph["vclk_pass_rate"] == 0.0
    assert glyph["gclk_to_vclk_drop"] == pytest.approx(1 / 4)
    assert glyph["cardinality_bias"] == pytest.approx(-1 / 4)


def test_global_click_paper_table_is_equal_subset_macro() -> None:
    items, meta = _global_items()
    table = global_click_bridge(items, meta)["paper_table"]
    assert table["G-Clk"] == pytest.approx((1 / 4 + 1) / 2)
    assert table["G-Cnt"] == pytest.approx((3 / 4 + 1) / 2)
    assert table["Card-Exact"] == pytest.approx((2 / 4 + 1) / 2)
    assert table["Loc. | Card"] == pytest.approx((1 / 2 + 1) / 2)
    assert table["G-Clk | G-Cnt correct"] == pytest.approx((1 / 3 + 1) / 2)
    assert table["Delta C->G"] == pytest.approx((1 / 2 + 0) / 2)
    assert table["Delta G->V"] == pytest.approx((1 / 4 + 0) / 2)
    assert table["V-Clk"] == pytest.approx((0 + 1) / 2)


def _matched_items() -> tuple[list[dict], dict]:
    items = [
        item(GLYPH, "m1", T2B, 1, pred_count=2, gt_count=2, region_case="partial"),
        item(GLYPH, "m2", T2B, 1, pred_count=0, gt_count=0, region_case="zero"),
        item(GLYPH, "m3", T2B, 0, pred_count=3, gt_count=2,
             region_case="fallback_partial_wanted_all"),
        item(GLYPH, "m4", T2B, 1, pred_count=1, gt_count=1, region_case="all"),  # no T3
        _click(GLYPH, "other", T3, 1, 2, 2, item_id="T3-of-m1"),  # paired by id only
        _click(GLYPH, "m2", T3, 0, 1, 0),
        _click(GLYPH, "m3", T3, 1, 2, 2),
    ]
    meta = {f"{GLYPH}:m1:{T2B}": {"source_click_item_id": "T3-of-m1"}}
    return items, meta


def test_matched_local_definitions() -> None:
    items, meta = _matched_items()
    result = matched_local_bridge(items, meta)
    glyph = result["by_subset"][GLYPH]
    assert glyph["mlcnt_pass_rate"] == pytest.approx(3 / 4)
    assert glyph["n_main_lclk_matched"] == 3
    assert glyph["mlcnt_pass_on_paired"] == pytest.approx(2 / 3)
    assert glyph["lclk_pass_rate"] == pytest.approx(2 / 3)
    assert glyph["lclk_pass_given_mlcnt_correct"] == pytest.approx(1 / 2)   # m1 yes, m2 no
    assert glyph["transfer_failure_given_mlcnt_correct"] == pytest.approx(1 / 2)
    assert glyph["lclk_cardinality_exact_rate"] == pytest.approx(2 / 3)
    assert glyph["lclk_location_exact_given_cardinality"] == 1.0
    assert glyph["cross_task_cardinality_consistency_rate"] == pytest.approx(1 / 3)  # only m1
    assert glyph["mlcnt_correct_lclk_wrong_rate"] == pytest.approx(1 / 3)
    assert result["n_target_count_mismatch"] == 0
    table = result["paper_table"]
    assert (table["mL-Cnt"], table["L-Clk"]) == (pytest.approx(3 / 4), pytest.approx(2 / 3))
    assert (table["L-Clk | mL-Cnt correct"], table["Fail"]) == (0.5, 0.5)


def test_matched_local_region_cases() -> None:
    items, meta = _matched_items()
    result = matched_local_bridge(items, meta)
    cases = result["by_region_case"]
    assert list(cases) == ["zero", "partial", "all", "fallback_partial_wanted_all"]
    assert cases["zero"]["paper_table"]["L-Clk | mL-Cnt correct"] == 0.0
    assert cases["partial"]["paper_table"]["L-Clk | mL-Cnt correct"] == 1.0
    assert cases["all"]["paper_table"]["L-Clk"] is None  # m4 has no paired T3
    effective = result["by_region_case_effective"]
    assert list(effective) == ["zero", "partial", "all"]
    assert effective["partial"]["macro_equal_subset"]["n"] == 2
    assert effective_case("fallback_zero_wanted_all") == "zero"
    assert effective_case("partial") == "partial"


def test_matched_local_counts_target_mismatches_instead_of_failing() -> None:
    items = [item(GLYPH, "m1", T2B, 1, pred_count=1, gt_count=1), _click(GLYPH, "m1", T3, 1, 2, 2)]
    assert matched_local_bridge(items, {})["n_target_count_mismatch"] == 1


def test_bridges_absent_without_bridge_rows() -> None:
    items = [item(GLYPH, "g1", T1, 1), item(GLYPH, "g1", T3, 1)]
    assert global_click_bridge(items, {}) is None
    assert matched_local_bridge(items, {}) is None
