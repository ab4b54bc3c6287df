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


def _get(tree: Any, *path: str) -> Any:
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


def _table1(summary: Node, boot: Node | None) -> list[str]:
    table = _get(summary, "paper_metrics", "table1") or {}
    lines = ["| Subset | n | PASS | SOFT | VALID |", "|---|---:|---|---|---|"]
    for subset in SUBSET_ORDER:
        record = _get(table, "by_subset", subset) or {}
        ci = _get(boot, "table1", subset) or {}
        if not record.get("n") and not ci:
            continue
        lines.append(
            f"| {SUBSET_SHORT[subset]} | {record.get('n', '--')} | "
            f"{cell(record.get('PASS'), ci.get('PASS'))} | {cell(record.get('SOFT'), ci.get('SOFT'))} | "
            f"{cell(record.get('VALID'), ci.get('VALID'))} |")
    avg = _get(boot, "table1") or {}
    lines.append(
        f"| **Avg.** | | {cell(table.get('Avg. PASS'), avg.get('Avg. PASS'))} | "
        f"{cell(table.get('Avg. SOFT'), avg.get('Avg. SOFT'))} | "
        f"{cell(table.get('VALID'), avg.get('VALID'))} |")
    return lines


def _table2(summary: Node, boot: Node | None) -> list[str]:
    table = _get(summary, "paper_metrics", "table2") or {}
    ci = _get(boot, "table2") or {}
    keys = [TEMPLATE_SHORT[t] for t in TEMPLATE_ORDER] + ["C-F1", "R-OK", "Avg. PASS"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines.append("| " + " | ".join(cell(table.get(k), ci.get(k)) for k in keys) + " |")
    return lines


def _gap_line(summary: Node) -> str | None:
    gap = _get(summary, "analyses", "perception_action_gap")
    boot = _get(summary, "analyses", "bootstrap", "gap") or {}
    if not gap and not boot:
        return None
    gap = gap or {}
    text = (
        f"Perception-to-action gap: Counting Avg. "
        f"{cell(gap.get('Counting Avg.'), boot.get('Counting Avg.'))}, Action Avg. "
        f"{cell(gap.get('Action Avg.'), boot.get('Action Avg.'))}, "
        f"Delta {cell(gap.get('Delta'), boot.get('Delta'))} points"
    )
    retained = gap.get("Action Avg. | T1 pass")
    if retained is not None:
        text += f"; Action Avg. on scenes whose T1 passed {cell(retained, None)}"
    return text + "."


def render_markdown(summary: dict) -> str:
    """Table 1 and Table 2 rows (percent, 95% scene-bootstrap intervals) and the gap line."""
    boot = _get(summary, "analyses", "bootstrap")
    name = summary.get("display_name") or summary.get("model") or "model"
    split = summary.get("split")
    head = f"## ROSE evaluation: {name}" + (f" ({split})" if split else "")
    note = "Values in %; brackets: 95% scene-cluster bootstrap interval"
    if isinstance(boot, Mapping) and boot.get("n_boot"):
        note += f" ({boot['n_boot']} resamples, seed {boot.get('seed')})"
    parts = [head, "", note + ".", "", "### Table 1", "", *_table1(summary, boot), "",
             "### Table 2", "", *_table2(summary, boot)]
    gap = _gap_line(summary)
    if gap:
        parts += ["", gap]
    return "\n".join(parts) + "\n"
