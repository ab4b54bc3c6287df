"""The two bridge controls: global click (T1B against T1, T4) and matched local count (T2B against T3).

Definitions are those of the ROSE v0.1 analysis scripts ``evaluate_global_click_bridge.py``
and ``evaluate_matched_local_count_bridge.py``, written here as summary tables (output key
-> population, field, reducer; :mod:`rose_eval.summaries`):

- global click: each T1B row is paired with its scene's T1 row (by the bridge row's
  ``source_item_id``, else by subset and scene) and T4 row (by subset and scene).
  Card-Exact = a clean action (valid grammar, no off-grid or repeated click) with as many
  distinct clicks as targets; Loc. | Card = PASS among those; Delta C->G = G-Cnt minus
  G-Clk on the paired scenes. Delta G->V (G-Clk minus the same scene's V-Clk, the project
  page's G-Cnt -> G-Clk -> V-Clk chain) is ours.
- matched local count: each T2B row is paired with the T3 row it was made from
  (``source_click_item_id``, else ``source_item_id``, else subset and scene). Fail is
  1 - L-Clk | mL-Cnt correct (the transfer failure).

Per subset the table runs on that subset's bridge rows; ``macro_equal_subset`` is the
equal-subset mean of each entry, ``micro_pooled`` the table on all rows. Both bridges are
scored in the same run as the main rows, so a bridge/T3 target-count mismatch is counted
(``n_target_count_mismatch``) instead of aborting; the matched bridge also reports region
cases with fallback labels folded into the case actually obtained.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

from rose_eval.analyses._rows import (
    T1,
    T1B_GLOBAL_CLICK,
    T2B_MATCHED_LOCAL_COUNT,
    T3,
    T4,
    by_subset,
    by_template,
)
from rose_eval.summaries import (
    Derived,
    Population,
    Stat,
    Table,
    complement,
    count,
    difference,
    group_by,
    mean,
    share_positive,
    summarize,
)
from rose_eval.vocab import REGION_CASES

Row = Mapping[str, Any]


def clean_action(row: Row) -> bool:
    """A valid answer with no off-grid and no repeated click."""
    return (row.get("format_valid") == 1 and not int(row.get("invalid_coordinate_count") or 0)
            and not int(row.get("duplicate_click_count") or 0))


def _is(field: str, value: Any = 1) -> Callable[[Row], bool]:
    return lambda row: row.get(field) == value


def _both(first: str, second: str, second_passes: bool = True) -> Callable[[Row], int]:
    """Row field: ``first`` passed and ``second`` passed (or, with False, did not)."""
    return lambda row: int(row.get(first) == 1 and (row.get(second) == 1) == second_passes)


class _Index:
    """The main-run rows of one template, by item id and by (subset, scene)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.by_item = {str(r["item_id"]): r for r in rows if r.get("item_id") is not None}
        self.by_scene = {(str(r.get("rose_subset")), str(r["scene_id"])): r
                         for r in rows if r.get("scene_id") is not None}

    def scene_of(self, row: Row) -> Row | None:
        return self.by_scene.get((str(row.get("rose_subset")), str(row.get("scene_id"))))

    def source_of(self, row: Row, id_fields: Sequence[str], meta: Row) -> Row | None:
        """The row an id field names (metadata first, then the record), else the scene's."""
        for field in id_fields:
            found = self.by_item.get(str(meta.get(field, row.get(field))))
            if found is not None:
                return found
        return self.scene_of(row)


def equal_subset_macro(per_subset: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each metric averaged with every subset weighing the same; ``n`` is the total; keys sorted."""
    summaries = list(per_subset.values())
    metrics = sorted(set(chain.from_iterable(summaries)).difference({"n"}))
    macro: dict[str, Any] = {"n": sum(int(s.get("n") or 0) for s in summaries), "num_subsets": len(summaries)}
    macro.update((metric, mean(s.get(metric) for s in summaries)) for metric in metrics)
    return macro


def _report(rows: Sequence[Row], table: Table, populations: Mapping[str, Population],
            paper: tuple[tuple[str, str], ...], *, micro: bool = True) -> dict[str, Any]:
    """paper_table, macro_equal_subset, [micro_pooled,] by_subset for one set of bridge rows."""
    per_subset = {subset: summarize(members, table, populations)
                  for subset, members in by_subset(rows).items()}
    macro = equal_subset_macro(per_subset)
    out: dict[str, Any] = {"paper_table": {label: macro.get(key) for label, key in paper},
                           "macro_equal_subset": macro}
    if micro:
        out["micro_pooled"] = summarize(rows, table, populations)
    out["by_subset"] = per_subset
    return out


# ---- global click ---------------------------------------------------------------------------

GLOBAL_POPULATIONS: dict[str, Population] = {
    "card_exact": Population(_is("cardinality_exact")),
    "paired": Population(_is("base_gcnt_matched")),
    "gcnt_correct": Population(_is("base_gcnt_pass"), within="paired"),
    "vclk_paired": Population(_is("base_vclk_matched")),
}
GLOBAL_TABLE: Table = (
    Stat("n", reduce=count),
    Stat("gclk_pass_rate", "pass"),
    Stat("gclk_soft", "unified_soft"),
    Stat("valid_rate", "format_valid"),
    Stat("api_error_rate", "api_error"),
    Stat("cardinality_exact_rate", "cardinality_exact"),
    Stat("cardinality_exact_nonstrict_rate", "cardinality_exact_nonstrict"),
    Stat("cardinality_mae", "cardinality_abs_error"),
    Stat("cardinality_bias", "cardinality_error"),
    Stat("location_exact_given_cardinality", "pass", "card_exact"),
    Stat("click_precision", "click_precision"),
    Stat("click_recall", "click_recall"),
    Stat("click_f1_strict", "click_f1_strict"),
    Stat("click_iou_strict", "click_iou_strict"),
    Stat("invalid_coordinate_sample_rate", "invalid_coordinate_count", reduce=share_positive),
    Stat("duplicate_click_sample_rate", "duplicate_click_count", reduce=share_positive),
    Stat("n_cardinality_exact", population="card_exact", reduce=count),
    Stat("n_main_gcnt_matched", population="paired", reduce=count),
    Stat("n_main_gcnt_correct", population="gcnt_correct", reduce=count),
    Stat("n_main_vclk_matched", population="vclk_paired", reduce=count),
    Stat("gcnt_pass_rate", "base_gcnt_pass", "paired"),
    Stat("gclk_pass_on_paired", "pass", "paired"),
    Derived("gclk_minus_gcnt", ("gclk_pass_on_paired", "gcnt_pass_rate"), difference),
    Derived("gcnt_to_gclk_drop", ("gcnt_pass_rate", "gclk_pass_on_paired"), difference),
    Stat("both_correct_rate", _both("base_gcnt_pass", "pass"), "paired"),
    Stat("gcnt_correct_gclk_wrong_rate", _both("base_gcnt_pass", "pass", False), "paired"),
    Stat("gclk_pass_given_gcnt_correct", "pass", "gcnt_correct"),
    Stat("cardinality_exact_given_gcnt_correct", "cardinality_exact", "gcnt_correct"),
    Stat("click_f1_given_gcnt_correct", "click_f1_strict", "gcnt_correct"),
    Stat("vclk_pass_rate", "base_vclk_pass", "vclk_paired"),
    Stat("gclk_pass_on_vclk_paired", "pass", "vclk_paired"),
    Derived("gclk_to_vclk_drop", ("gclk_pass_on_vclk_paired", "vclk_pass_rate"), difference),
)
GLOBAL_PAPER = (
    ("G-Cnt", "gcnt_pass_rate"), ("G-Clk", "gclk_pass_rate"), ("V-Clk", "vclk_pass_rate"),
    ("G-Clk | G-Cnt correct", "gclk_pass_given_gcnt_correct"),
    ("Card-Exact", "cardinality_exact_rate"),
    ("Card-Exact | G-Cnt correct", "cardinality_exact_given_gcnt_correct"),
    ("Loc. | Card", "location_exact_given_cardinality"), ("C-F1", "click_f1_strict"),
    ("VALID", "valid_rate"), ("Delta C->G", "gcnt_to_gclk_drop"),
    ("Delta G->V", "gclk_to_vclk_drop"),
)


def _paired_pass(base: Row | None) -> int | None:
    return None if base is None else int(base.get("pass") or 0)


def global_click_rows(items: Sequence[Row], meta: Mapping[str, Row]) -> list[dict[str, Any]]:
    """Every T1B record with its cardinality facts and its scene's T1 and T4 outcomes."""
    templates = by_template(items)
    t1, t4 = _Index(templates.get(T1, [])), _Index(templates.get(T4, []))
    out: list[dict[str, Any]] = []
    for row in templates.get(T1B_GLOBAL_CLICK, []):
        clicked, targets = int(row.get("pred_click_count_unique") or 0), int(row.get("gt_count") or 0)
        base = t1.source_of(row, ("source_item_id",), meta.get(str(row.get("item_id")), {}))
        visual = t4.scene_of(row)
        out.append({
            **row,
            "clean_action": int(clean_action(row)),
            "cardinality_error": clicked - targets,
            "cardinality_abs_error": abs(clicked - targets),
            "cardinality_exact_nonstrict": int(clicked == targets),
            "cardinality_exact": int(clean_action(row) and clicked == targets),
            "base_gcnt_matched": int(base is not None),
            "base_gcnt_pass": _paired_pass(base),
            "base_vclk_matched": int(visual is not None),
            "base_vclk_pass": _paired_pass(visual),
        })
    return out


def global_click_bridge(items: Sequence[Row], meta: Mapping[str, Row]) -> dict[str, Any] | None:
    """Global-click bridge summary, or None when the run has no T1B rows."""
    rows = global_click_rows(items, meta)
    if not rows:
        return None
    return {
        **_report(rows, GLOBAL_TABLE, GLOBAL_POPULATIONS, GLOBAL_PAPER),
        "definition": "analysis/evaluate_global_click_bridge.py (ROSE v0.1); "
        "Delta G->V: G-Clk minus same-scene V-Clk, macro over subsets",
    }


# ---- matched local count -----------------------------------------------------------------------

MATCHED_POPULATIONS: dict[str, Population] = {
    "count_parsed": Population(lambda row: row.get("pred_count") is not None),
    "paired": Population(_is("base_lclk_matched")),
    "count_correct": Population(_is("pass"), within="paired"),
    "card_exact": Population(_is("base_lclk_cardinality_exact"), within="paired"),
    "correct_and_card": Population(_is("base_lclk_cardinality_exact"), within="count_correct"),
}
MATCHED_TABLE: Table = (
    Stat("n", reduce=count),
    Stat("mlcnt_pass_rate", "pass"),
    Stat("mlcnt_soft", "unified_soft"),
    Stat("mlcnt_valid_rate", "format_valid"),
    Stat("mlcnt_count_mae", "count_mae", "count_parsed"),
    Stat("mlcnt_count_bias", "count_bias", "count_parsed"),
    Stat("n_main_lclk_matched", population="paired", reduce=count),
    Stat("n_mlcnt_correct", population="count_correct", reduce=count),
    Stat("mlcnt_pass_on_paired", "pass", "paired"),
    Stat("lclk_pass_rate", "base_lclk_pass", "paired"),
    Stat("lclk_soft", "base_lclk_soft", "paired"),
    Stat("lclk_valid_rate", "base_lclk_format_valid", "paired"),
    Stat("lclk_cardinality_exact_rate", "base_lclk_cardinality_exact", "paired"),
    Stat("lclk_location_exact_given_cardinality", "base_lclk_pass", "card_exact"),
    Stat("lclk_click_f1_strict", "base_lclk_click_f1_strict", "paired"),
    Derived("mlcnt_to_lclk_drop", ("mlcnt_pass_on_paired", "lclk_pass_rate"), difference),
    Stat("both_correct_rate", _both("pass", "base_lclk_pass"), "paired"),
    Stat("mlcnt_correct_lclk_wrong_rate", _both("pass", "base_lclk_pass", False), "paired"),
    Stat("cross_task_cardinality_consistency_rate", "cross_task_cardinality_consistent", "paired"),
    Stat("lclk_pass_given_mlcnt_correct", "base_lclk_pass", "count_correct"),
    Derived("transfer_failure_given_mlcnt_correct", ("lclk_pass_given_mlcnt_correct",), complement),
    Stat("lclk_cardinality_exact_given_mlcnt_correct", "base_lclk_cardinality_exact",
         "count_correct"),
    Stat("lclk_click_f1_given_mlcnt_correct", "base_lclk_click_f1_strict", "count_correct"),
    Stat("lclk_location_exact_given_cardinality_and_mlcnt_correct", "base_lclk_pass",
         "correct_and_card"),
)
MATCHED_PAPER = (
    ("mL-Cnt", "mlcnt_pass_rate"), ("L-Clk", "lclk_pass_rate"),
    ("L-Clk | mL-Cnt correct", "lclk_pass_given_mlcnt_correct"),
    ("Fail", "transfer_failure_given_mlcnt_correct"),
    ("Card-Exact", "lclk_cardinality_exact_rate"),
    ("Card-Exact | mL-Cnt correct", "lclk_cardinality_exact_given_mlcnt_correct"),
    ("Loc. | Card", "lclk_location_exact_given_cardinality"),
    ("Loc. | Card & mL-Cnt", "lclk_location_exact_given_cardinality_and_mlcnt_correct"),
    ("C-F1", "lclk_click_f1_strict"), ("mL-Cnt VALID", "mlcnt_valid_rate"),
    ("L-Clk VALID", "lclk_valid_rate"), ("mL-Cnt to L-Clk drop", "mlcnt_to_lclk_drop"),
)


def _flag(value: Any) -> int:
    return int(value or 0)


# The source T3 outcome a T2B record carries: its field -> (the T3 field, how it is read).
_SOURCE_CLICK: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("base_lclk_item_id", "item_id", lambda v: v),
    ("base_lclk_pass", "pass", _flag),
    ("base_lclk_soft", "unified_soft", lambda v: v),
    ("base_lclk_format_valid", "format_valid", _flag),
    ("base_lclk_click_f1_strict", "click_f1_strict", lambda v: v),
)


def _source_click_fields(base: Row, clean_card: bool) -> dict[str, Any]:
    fields = {name: read(base.get(source)) for name, source, read in _SOURCE_CLICK}
    fields["base_lclk_cardinality_exact"] = int(clean_card)
    return fields


def matched_local_rows(items: Sequence[Row], meta: Mapping[str, Row]
                       ) -> tuple[list[dict[str, Any]], int]:
    """Every T2B record with its source T3 outcome; and how many disagree on the target count."""
    templates = by_template(items)
    t3 = _Index(templates.get(T3, []))
    out: list[dict[str, Any]] = []
    mismatches = 0
    for row in templates.get(T2B_MATCHED_LOCAL_COUNT, []):
        meta_row = meta.get(str(row.get("item_id")), {})
        base = t3.source_of(row, ("source_click_item_id", "source_item_id"), meta_row)
        if base is None:
            out.append({**row, "base_lclk_matched": 0})
            continue
        targets = int(base.get("gt_count") or 0)
        clean_card = clean_action(base) and int(base.get("pred_click_count_unique") or 0) == targets
        mismatches += int(int(row.get("gt_count") or 0) != targets)
        counted = row.get("pred_count")
        out.append({**row, "base_lclk_matched": 1, **_source_click_fields(base, clean_card),
                    "cross_task_cardinality_consistent": (
                        int(int(counted) == int(base.get("pred_click_count_unique") or 0))
                        if counted is not None and clean_action(base) else None)})
    return out, mismatches


def effective_case(label: str) -> str:
    """`fallback_<got>_wanted_<wanted>` -> `<got>`; other labels unchanged."""
    if label.startswith("fallback_") and "_wanted_" in label:
        return label.removeprefix("fallback_").split("_wanted_", 1)[0]
    return label


def _by_case(rows: Sequence[Row], case_of: Callable[[Row], str]) -> dict[str, Any]:
    cases = group_by(rows, case_of)
    order = [c for c in REGION_CASES if c in cases] + sorted(c for c in cases if c not in REGION_CASES)
    return {case: _report(cases[case], MATCHED_TABLE, MATCHED_POPULATIONS, MATCHED_PAPER,
                          micro=False) for case in order}


def matched_local_bridge(items: Sequence[Row], meta: Mapping[str, Row]) -> dict[str, Any] | None:
    """Matched local-count bridge summary, or None when the run has no T2B rows."""
    rows, mismatches = matched_local_rows(items, meta)
    if not rows:
        return None

    def case(row: Row) -> str:
        return str(row.get("region_case") or "unknown")

    return {
        **_report(rows, MATCHED_TABLE, MATCHED_POPULATIONS, MATCHED_PAPER),
        "by_region_case": _by_case(rows, case),
        "by_region_case_effective": _by_case(rows, lambda row: effective_case(case(row))),
        "n_target_count_mismatch": mismatches,
        "definition": "analysis/evaluate_matched_local_count_bridge.py (ROSE v0.1)",
    }
