"""The two bridge controls: global click (T1B vs T1, T4) and matched local count (T2B vs T3).

Definitions followed (ROSE v0.1 public analysis scripts, re-implemented):
- `analysis/evaluate_global_click_bridge.py` (`main` pairing, `summarize`,
  `macro_summary`, paper table): clean action, Card-Exact, Loc.|Card, G-Clk given
  G-Cnt correct, the G-Cnt -> G-Clk drop (Delta C->G); pairing by the bridge row's
  `source_item_id`, then by (subset, scene_id).
- `analysis/evaluate_matched_local_count_bridge.py` (`click_clean`, `summarize`,
  `macro_summary`, region-case breakdown, paper table): mL-Cnt, paired L-Clk,
  L-Clk given mL-Cnt correct (L-Clk-dagger), transfer failure Fail-dagger = 1 - that;
  pairing by `source_click_item_id`, then `source_item_id`, then (subset, scene_id).
- Delta G->V (the project page's G-Cnt -> G-Clk -> V-Clk chain) is ours: per subset,
  G-Clk minus V-Clk (T4 PASS) on scenes holding both rows, then the equal-subset macro.

Differences from the scripts, by design: both bridges are scored in the same run as
the main rows, so a bridge/T3 target-count mismatch is counted
(`n_target_count_mismatch`) instead of aborting, and the matched bridge also reports
region cases with fallback labels folded into the case actually obtained.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import (
    T1,
    T1B_GLOBAL_CLICK,
    T2B_MATCHED_LOCAL_COUNT,
    T3,
    T4,
    by_subset,
    mean,
    template_of,
)

Row = Mapping[str, Any]
REGION_CASE_ORDER: tuple[str, ...] = ("zero", "partial", "all")


def clean_action(row: Row) -> int:
    """1 when the formal action parsed and has no out-of-grid or duplicate click."""
    return int(
        row.get("format_valid") == 1
        and int(row.get("invalid_coordinate_count") or 0) == 0
        and int(row.get("duplicate_click_count") or 0) == 0
    )


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else float(a) - float(b)


def macro_summary(per_subset: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Equal-subset mean of every metric; `n` summed (the scripts' `macro_summary`)."""
    metrics = sorted({key for summary in per_subset.values() for key in summary if key != "n"})
    out: dict[str, Any] = {
        "n": sum(int(summary.get("n") or 0) for summary in per_subset.values()),
        "num_subsets": len(per_subset),
    }
    for metric in metrics:
        out[metric] = mean(
            s.get(metric) for s in per_subset.values() if s.get(metric) is not None
        )
    return out


class _MainIndex:
    """Main-run rows of one template, found by item id or by (subset, scene)."""

    def __init__(self, items: Sequence[Row], template: str) -> None:
        rows = [row for row in items if template_of(row) == template]
        self.by_item = {str(r.get("item_id")): r for r in rows if r.get("item_id") is not None}
        self.by_scene = {
            (str(r.get("rose_subset")), str(r.get("scene_id"))): r
            for r in rows
            if r.get("scene_id") is not None
        }

    def find(self, row: Row, id_fields: Sequence[str], source: Row) -> Row | None:
        for field in id_fields:
            base = self.by_item.get(str(source.get(field, row.get(field))))
            if base is not None:
                return base
        return self.by_scene.get((str(row.get("rose_subset")), str(row.get("scene_id"))))


# ----------------------------------------------------------------------------- global click


def _global_click_rows(items: Sequence[Row], meta: Mapping[str, Row]) -> list[dict[str, Any]]:
    t1 = _MainIndex(items, T1)
    t4 = _MainIndex(items, T4)
    out: list[dict[str, Any]] = []
    for row in items:
        if template_of(row) != T1B_GLOBAL_CLICK:
            continue
        source = meta.get(str(row.get("item_id")), {})
        pred_card = int(row.get("pred_click_count_unique") or 0)
        gt_card = int(row.get("gt_count") or 0)
        clean = clean_action(row)
        base = t1.find(row, ("source_item_id",), source)
        visual = t4.by_scene.get((str(row.get("rose_subset")), str(row.get("scene_id"))))
        out.append({
            **row,
            "clean_action": clean,
            "cardinality_error": pred_card - gt_card,
            "cardinality_abs_error": abs(pred_card - gt_card),
            "cardinality_exact_nonstrict": int(pred_card == gt_card),
            "cardinality_exact": int(clean == 1 and pred_card == gt_card),
            "base_gcnt_matched": int(base is not None),
            "base_gcnt_pass": int(base.get("pass") or 0) if base else None,
            "base_vclk_matched": int(visual is not None),
            "base_vclk_pass": int(visual.get("pass") or 0) if visual else None,
        })
    return out


def summarize_global_click(rows: Sequence[Row]) -> dict[str, Any]:
    """Per-group global-click metrics (keys as in the public script's `summarize`)."""
    if not rows:
        return {"n": 0}
    card_rows = [r for r in rows if r.get("cardinality_exact") == 1]
    paired = [r for r in rows if r.get("base_gcnt_matched") == 1]
    gcnt_correct = [r for r in paired if r.get("base_gcnt_pass") == 1]
    visual_paired = [r for r in rows if r.get("base_vclk_matched") == 1]
    out: dict[str, Any] = {
        "n": len(rows),
        "gclk_pass_rate": mean(r.get("pass") for r in rows),
        "gclk_soft": mean(r.get("unified_soft") for r in rows),
        "valid_rate": mean(r.get("format_valid") for r in rows),
        "api_error_rate": mean(r.get("api_error") for r in rows),
        "cardinality_exact_rate": mean(r.get("cardinality_exact") for r in rows),
        "cardinality_exact_nonstrict_rate": mean(
            r.get("cardinality_exact_nonstrict") for r in rows
        ),
        "cardinality_mae": mean(r.get("cardinality_abs_error") for r in rows),
        "cardinality_bias": mean(r.get("cardinality_error") for r in rows),
        "location_exact_given_cardinality": (
            mean(r.get("pass") for r in card_rows) if card_rows else None
        ),
        "click_precision": mean(r.get("click_precision") for r in rows),
        "click_recall": mean(r.get("click_recall") for r in rows),
        "click_f1_strict": mean(r.get("click_f1_strict") for r in rows),
        "click_iou_strict": mean(r.get("click_iou_strict") for r in rows),
        "invalid_coordinate_sample_rate": mean(
            int((r.get("invalid_coordinate_count") or 0) > 0) for r in rows
        ),
        "duplicate_click_sample_rate": mean(
            int((r.get("duplicate_click_count") or 0) > 0) for r in rows
        ),
        "n_cardinality_exact": len(card_rows),
        "n_main_gcnt_matched": len(paired),
        "n_main_gcnt_correct": len(gcnt_correct),
        "n_main_vclk_matched": len(visual_paired),
    }
    gcnt = mean(r.get("base_gcnt_pass") for r in paired) if paired else None
    gclk = mean(r.get("pass") for r in paired) if paired else None
    out.update({
        "gcnt_pass_rate": gcnt,
        "gclk_pass_on_paired": gclk,
        "gclk_minus_gcnt": _diff(gclk, gcnt),
        "gcnt_to_gclk_drop": _diff(gcnt, gclk),
        "both_correct_rate": mean(
            int(r.get("base_gcnt_pass") == 1 and r.get("pass") == 1) for r in paired
        ) if paired else None,
        "gcnt_correct_gclk_wrong_rate": mean(
            int(r.get("base_gcnt_pass") == 1 and r.get("pass") != 1) for r in paired
        ) if paired else None,
        "gclk_pass_given_gcnt_correct": mean(r.get("pass") for r in gcnt_correct)
        if gcnt_correct else None,
        "cardinality_exact_given_gcnt_correct": mean(
            r.get("cardinality_exact") for r in gcnt_correct
        ) if gcnt_correct else None,
        "click_f1_given_gcnt_correct": mean(r.get("click_f1_strict") for r in gcnt_correct)
        if gcnt_correct else None,
    })
    vclk = mean(r.get("base_vclk_pass") for r in visual_paired) if visual_paired else None
    gclk_v = mean(r.get("pass") for r in visual_paired) if visual_paired else None
    out.update({
        "vclk_pass_rate": vclk,
        "gclk_pass_on_vclk_paired": gclk_v,
        "gclk_to_vclk_drop": _diff(gclk_v, vclk),
    })
    return out


def global_click_bridge(items: Sequence[Row], meta: Mapping[str, Row]) -> dict[str, Any] | None:
    """Global-click bridge summary, or None when the run has no T1B rows."""
    rows = _global_click_rows(items, meta)
    if not rows:
        return None
    per_subset = {s: summarize_global_click(r) for s, r in by_subset(rows).items()}
    macro = macro_summary(per_subset)
    table = {
        "G-Cnt": macro.get("gcnt_pass_rate"),
        "G-Clk": macro.get("gclk_pass_rate"),
        "V-Clk": macro.get("vclk_pass_rate"),
        "G-Clk | G-Cnt correct": macro.get("gclk_pass_given_gcnt_correct"),
        "Card-Exact": macro.get("cardinality_exact_rate"),
        "Card-Exact | G-Cnt correct": macro.get("cardinality_exact_given_gcnt_correct"),
        "Loc. | Card": macro.get("location_exact_given_cardinality"),
        "C-F1": macro.get("click_f1_strict"),
        "VALID": macro.get("valid_rate"),
        "Delta C->G": macro.get("gcnt_to_gclk_drop"),
        "Delta G->V": macro.get("gclk_to_vclk_drop"),
    }
    return {
        "paper_table": table,
        "macro_equal_subset": macro,
        "micro_pooled": summarize_global_click(rows),
        "by_subset": per_subset,
        "definition": "analysis/evaluate_global_click_bridge.py (ROSE v0.1); "
        "Delta G->V: G-Clk minus same-scene V-Clk, macro over subsets",
    }


# ----------------------------------------------------------------------- matched local count


def _matched_local_rows(
    items: Sequence[Row], meta: Mapping[str, Row]
) -> tuple[list[dict[str, Any]], int]:
    t3 = _MainIndex(items, T3)
    out: list[dict[str, Any]] = []
    mismatches = 0
    for row in items:
        if template_of(row) != T2B_MATCHED_LOCAL_COUNT:
            continue
        source = meta.get(str(row.get("item_id")), {})
        base = t3.find(row, ("source_click_item_id", "source_item_id"), source)
        record: dict[str, Any] = {**row}
        if base is None:
            record["base_lclk_matched"] = 0
            out.append(record)
            continue
        clean = clean_action(base)
        gt_count = int(base.get("gt_count") or 0)
        pred_card = int(base.get("pred_click_count_unique") or 0)
        mismatches += int(int(row.get("gt_count") or 0) != gt_count)
        bridge_pred = row.get("pred_count")
        record.update({
            "base_lclk_matched": 1,
            "base_lclk_item_id": base.get("item_id"),
            "base_lclk_pass": int(base.get("pass") or 0),
            "base_lclk_soft": base.get("unified_soft"),
            "base_lclk_format_valid": int(base.get("format_valid") or 0),
            "base_lclk_cardinality_exact": int(clean == 1 and pred_card == gt_count),
            "base_lclk_click_f1_strict": base.get("click_f1_strict"),
            "cross_task_cardinality_consistent": (
                int(int(bridge_pred) == pred_card)
                if bridge_pred is not None and clean == 1
                else None
            ),
        })
        out.append(record)
    return out, mismatches


_UNPAIRED_MATCHED_KEYS: tuple[str, ...] = (
    "lclk_pass_rate",
    "lclk_soft",
    "lclk_valid_rate",
    "lclk_cardinality_exact_rate",
    "lclk_location_exact_given_cardinality",
    "lclk_click_f1_strict",
    "mlcnt_to_lclk_drop",
    "lclk_pass_given_mlcnt_correct",
    "transfer_failure_given_mlcnt_correct",
    "lclk_cardinality_exact_given_mlcnt_correct",
    "lclk_click_f1_given_mlcnt_correct",
    "lclk_location_exact_given_cardinality_and_mlcnt_correct",
    "cross_task_cardinality_consistency_rate",
    "both_correct_rate",
    "mlcnt_correct_lclk_wrong_rate",
)


def summarize_matched_local(rows: Sequence[Row]) -> dict[str, Any]:
    """Per-group matched-local metrics (keys as in the public script's `summarize`)."""
    if not rows:
        return {"n": 0}
    paired = [r for r in rows if r.get("base_lclk_matched") == 1]
    count_correct = [r for r in paired if r.get("pass") == 1]
    card_exact = [r for r in paired if r.get("base_lclk_cardinality_exact") == 1]
    correct_and_card = [r for r in count_correct if r.get("base_lclk_cardinality_exact") == 1]
    comparable = [r for r in paired if r.get("cross_task_cardinality_consistent") is not None]
    parsed = [r for r in rows if r.get("pred_count") is not None]
    out: dict[str, Any] = {
        "n": len(rows),
        "mlcnt_pass_rate": mean(r.get("pass") for r in rows),
        "mlcnt_soft": mean(r.get("unified_soft") for r in rows),
        "mlcnt_valid_rate": mean(r.get("format_valid") for r in rows),
        "mlcnt_count_mae": mean(r.get("count_mae") for r in parsed),
        "mlcnt_count_bias": mean(r.get("count_bias") for r in parsed),
        "n_main_lclk_matched": len(paired),
        "n_mlcnt_correct": len(count_correct),
    }
    if not paired:
        out.update(dict.fromkeys(_UNPAIRED_MATCHED_KEYS))
        return out
    mlcnt = mean(r.get("pass") for r in paired)
    lclk = mean(r.get("base_lclk_pass") for r in paired)
    conditioned = mean(r.get("base_lclk_pass") for r in count_correct) if count_correct else None
    out.update({
        "mlcnt_pass_on_paired": mlcnt,
        "lclk_pass_rate": lclk,
        "lclk_soft": mean(r.get("base_lclk_soft") for r in paired),
        "lclk_valid_rate": mean(r.get("base_lclk_format_valid") for r in paired),
        "lclk_cardinality_exact_rate": mean(r.get("base_lclk_cardinality_exact") for r in paired),
        "lclk_location_exact_given_cardinality": mean(r.get("base_lclk_pass") for r in card_exact)
        if card_exact else None,
        "lclk_click_f1_strict": mean(r.get("base_lclk_click_f1_strict") for r in paired),
        "mlcnt_to_lclk_drop": _diff(mlcnt, lclk),
        "both_correct_rate": mean(
            int(r.get("pass") == 1 and r.get("base_lclk_pass") == 1) for r in paired
        ),
        "mlcnt_correct_lclk_wrong_rate": mean(
            int(r.get("pass") == 1 and r.get("base_lclk_pass") != 1) for r in paired
        ),
        "cross_task_cardinality_consistency_rate": mean(
            r.get("cross_task_cardinality_consistent") for r in comparable
        ) if comparable else None,
        "lclk_pass_given_mlcnt_correct": conditioned,
        "transfer_failure_given_mlcnt_correct": None if conditioned is None else 1.0 - conditioned,
        "lclk_cardinality_exact_given_mlcnt_correct": mean(
            r.get("base_lclk_cardinality_exact") for r in count_correct
        ) if count_correct else None,
        "lclk_click_f1_given_mlcnt_correct": mean(
            r.get("base_lclk_click_f1_strict") for r in count_correct
        ) if count_correct else None,
        "lclk_location_exact_given_cardinality_and_mlcnt_correct": mean(
            r.get("base_lclk_pass") for r in correct_and_card
        ) if correct_and_card else None,
    })
    return out


def _matched_table(macro: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "mL-Cnt": macro.get("mlcnt_pass_rate"),
        "L-Clk": macro.get("lclk_pass_rate"),
        "L-Clk | mL-Cnt correct": macro.get("lclk_pass_given_mlcnt_correct"),
        "Fail": macro.get("transfer_failure_given_mlcnt_correct"),
        "Card-Exact": macro.get("lclk_cardinality_exact_rate"),
        "Card-Exact | mL-Cnt correct": macro.get("lclk_cardinality_exact_given_mlcnt_correct"),
        "Loc. | Card": macro.get("lclk_location_exact_given_cardinality"),
        "Loc. | Card & mL-Cnt": macro.get(
            "lclk_location_exact_given_cardinality_and_mlcnt_correct"
        ),
        "C-F1": macro.get("lclk_click_f1_strict"),
        "mL-Cnt VALID": macro.get("mlcnt_valid_rate"),
        "L-Clk VALID": macro.get("lclk_valid_rate"),
        "mL-Cnt to L-Clk drop": macro.get("mlcnt_to_lclk_drop"),
    }


def effective_case(label: str) -> str:
    """`fallback_<got>_wanted_<wanted>` -> `<got>`; other labels unchanged."""
    if label.startswith("fallback_") and "_wanted_" in label:
        return label.removeprefix("fallback_").split("_wanted_", 1)[0]
    return label


def _by_case(rows: Sequence[Row], case_of: Callable[[Row], str]) -> dict[str, Any]:
    cases: dict[str, list[Row]] = {}
    for row in rows:
        cases.setdefault(case_of(row), []).append(row)
    order = [c for c in REGION_CASE_ORDER if c in cases]
    order += sorted(c for c in cases if c not in REGION_CASE_ORDER)
    out: dict[str, Any] = {}
    for case in order:
        per_subset = {s: summarize_matched_local(r) for s, r in by_subset(cases[case]).items()}
        case_macro = macro_summary(per_subset)
        out[case] = {
            "paper_table": _matched_table(case_macro),
            "macro_equal_subset": case_macro,
            "by_subset": per_subset,
        }
    return out


def matched_local_bridge(items: Sequence[Row], meta: Mapping[str, Row]) -> dict[str, Any] | None:
    """Matched local-count bridge summary, or None when the run has no T2B rows."""
    rows, mismatches = _matched_local_rows(items, meta)
    if not rows:
        return None
    per_subset = {s: summarize_matched_local(r) for s, r in by_subset(rows).items()}
    macro = macro_summary(per_subset)
    return {
        "paper_table": _matched_table(macro),
        "macro_equal_subset": macro,
        "micro_pooled": summarize_matched_local(rows),
        "by_subset": per_subset,
        "by_region_case": _by_case(rows, lambda r: str(r.get("region_case") or "unknown")),
        "by_region_case_effective": _by_case(
            rows, lambda r: effective_case(str(r.get("region_case") or "unknown"))
        ),
        "n_target_count_mismatch": mismatches,
        "definition": "analysis/evaluate_matched_local_count_bridge.py (ROSE v0.1)",
    }
