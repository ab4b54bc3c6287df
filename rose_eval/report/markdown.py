"""Markdown summary of one evaluation: Table 1 and Table 2 rows with 95% intervals.

Points are the evaluator's paper numbers (`paper_metrics`); intervals come from the
scene-cluster bootstrap under `analyses.bootstrap`. Either part may be missing (an
older summary, bootstrap switched off): the table then shows what is there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rose_eval.percent import percent_text
from rose_eval.vocab import SUBSET_ORDER, SUBSET_SHORT, TEMPLATE_ORDER, TEMPLATE_SHORT

Node = Mapping[str, Any]


def lookup(tree: Any, *path: str) -> Any:
    """``tree[path[0]][path[1]]...``, or None where a level is missing or not a mapping."""
    for key in path:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(key)
    return tree


def cell(point: float | None, ci: Node | None, digits: int = 1) -> str:
    """`50.3 [47.1, 53.4]` in percent; `--` when there is no value."""
    if point is None and isinstance(ci, Mapping):
        point = ci.get("point")
    if point is None:
        return "--"
    text = percent_text(point, digits)
    if isinstance(ci, Mapping) and ci.get("lo") is not None and ci.get("hi") is not None:
        text += f" [{percent_text(ci['lo'], digits)}, {percent_text(ci['hi'], digits)}]"
    return text


Value = tuple[float | None, Node | None]  # a point and its 95% interval (either may be None)
TABLE1_METRICS: tuple[str, ...] = ("PASS", "SOFT", "VALID")
TABLE2_KEYS: tuple[str, ...] = (*(TEMPLATE_SHORT[t] for t in TEMPLATE_ORDER), "C-F1", "R-OK",
                                "Avg. PASS")
GAP_KEYS: tuple[str, ...] = ("Counting Avg.", "Action Avg.", "Delta")
AVERAGE_LABEL = "Avg."
_TABLE1_AVERAGE_KEYS = {"PASS": "Avg. PASS", "SOFT": "Avg. SOFT", "VALID": "VALID"}


def table1_records(summary: Node) -> list[tuple[str, int | None, dict[str, Value]]]:
    """Table 1 as data: (subset, n, {PASS, SOFT, VALID: value}) per subset with rows, then
    the macro average row labelled ``Avg.`` (n None). Points are the evaluator's
    `paper_metrics`; intervals the scene bootstrap's."""
    table = lookup(summary, "paper_metrics", "table1") or {}
    boot = lookup(summary, "analyses", "bootstrap")
    records: list[tuple[str, int | None, dict[str, Value]]] = []
    for subset in SUBSET_ORDER:
        record = lookup(table, "by_subset", subset) or {}
        ci = lookup(boot, "table1", subset) or {}
        if not record.get("n") and not ci:
            continue
        records.append((subset, record.get("n"),
                        {m: (record.get(m), ci.get(m)) for m in TABLE1_METRICS}))
    avg = lookup(boot, "table1") or {}
    records.append((AVERAGE_LABEL, None, {
        m: (table.get(key), avg.get(key)) for m, key in _TABLE1_AVERAGE_KEYS.items()}))
    return records


def table2_values(summary: Node) -> dict[str, Value]:
    """Table 2 as data: template PASS, C-F1, R-OK and Avg. PASS, each (point, interval)."""
    table = lookup(summary, "paper_metrics", "table2") or {}
    ci = lookup(summary, "analyses", "bootstrap", "table2") or {}
    return {key: (table.get(key), ci.get(key)) for key in TABLE2_KEYS}


def gap_values(summary: Node) -> dict[str, Value] | None:
    """Counting Avg., Action Avg. and Delta with intervals; None when the run has no gap."""
    gap = lookup(summary, "analyses", "perception_action_gap")
    boot = lookup(summary, "analyses", "bootstrap", "gap") or {}
    if not gap and not boot:
        return None
    gap = gap or {}
    return {key: (gap.get(key), boot.get(key)) for key in GAP_KEYS}


def _table1(summary: Node) -> list[str]:
    lines = ["| Subset | n | PASS | SOFT | VALID |", "|---|---:|---|---|---|"]
    for label, n, values in table1_records(summary):
        head = f"| **{label}** | |" if n is None else f"| {SUBSET_SHORT.get(label, label)} | {n} |"
        lines.append(f"{head} " + " | ".join(cell(*values[m]) for m in TABLE1_METRICS) + " |")
    return lines


def _table2(summary: Node) -> list[str]:
    values = table2_values(summary)
    lines = ["| " + " | ".join(TABLE2_KEYS) + " |", "|" + "---|" * len(TABLE2_KEYS)]
    lines.append("| " + " | ".join(cell(*values[k]) for k in TABLE2_KEYS) + " |")
    return lines


def _gap_line(summary: Node) -> str | None:
    values = gap_values(summary)
    if values is None:
        return None
    text = (
        f"Perception-to-action gap: Counting Avg. {cell(*values['Counting Avg.'])}, "
        f"Action Avg. {cell(*values['Action Avg.'])}, Delta {cell(*values['Delta'])} points"
    )
    retained = lookup(summary, "analyses", "perception_action_gap", "Action Avg. | T1 pass")
    if retained is not None:
        text += f"; Action Avg. on scenes whose T1 passed {cell(retained, None)}"
    return text + "."


def render_markdown(summary: dict) -> str:
    """Table 1 and Table 2 rows (percent, 95% scene-bootstrap intervals) and the gap line."""
    boot = lookup(summary, "analyses", "bootstrap")
    name = summary.get("display_name") or summary.get("model") or "model"
    split = summary.get("split")
    head = f"## ROSE evaluation: {name}" + (f" ({split})" if split else "")
    note = "Values in %; brackets: 95% scene-cluster bootstrap interval"
    if isinstance(boot, Mapping) and boot.get("n_boot"):
        note += f" ({boot['n_boot']} resamples, seed {boot.get('seed')})"
    parts = [head, "", note + ".", "", "### Table 1", "", *_table1(summary), "",
             "### Table 2", "", *_table2(summary)]
    gap = _gap_line(summary)
    if gap:
        parts += ["", gap]
    return "\n".join(parts) + "\n"
