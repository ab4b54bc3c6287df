"""Markdown summary of one evaluation: Table 1 and Table 2 rows with 95% intervals.

Points are the evaluator's paper numbers (`paper_metrics`); intervals come from
`analyses.bootstrap`: the scene-cluster bootstrap's, or (marked †) the effective-n interval
where the bootstrap degenerates. Each interval is followed by its design effect, and each
row by the number of scenes behind it. Either part may be missing (an older summary,
bootstrap switched off): the table then shows what is there.
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


EFFECTIVE_MARK = "†"  # the interval is the effective-n one (the bootstrap degenerated)
ASSUMED_MARK = "*"  # the design effect is assumed (rows per scene), not estimated


def design_effect_text(ci: Node | None) -> str:
    """`deff 2.1` (`deff 5.0*` when assumed); '' when the record has none."""
    if not isinstance(ci, Mapping) or ci.get("deff") is None:
        return ""
    return f"deff {ci['deff']:.1f}" + (ASSUMED_MARK if ci.get("deff_assumed") else "")


def is_effective_n(ci: Node | None) -> bool:
    """Whether the record's interval is the effective-n one."""
    return isinstance(ci, Mapping) and ci.get("interval") == "effective n"


def cell(point: float | None, ci: Node | None, digits: int = 1) -> str:
    """`50.3 [47.1, 53.4] deff 2.1` in percent (`†` after an effective-n interval, `*` after an
    assumed design effect); `--` when there is no value."""
    if point is None and isinstance(ci, Mapping):
        point = ci.get("point")
    if point is None:
        return "--"
    text = percent_text(point, digits)
    if isinstance(ci, Mapping) and ci.get("lo") is not None and ci.get("hi") is not None:
        text += f" [{percent_text(ci['lo'], digits)}, {percent_text(ci['hi'], digits)}]"
        text += EFFECTIVE_MARK if is_effective_n(ci) else ""
    deff = design_effect_text(ci)
    return f"{text} {deff}" if deff else text


def scenes_behind(*cis: Node | None) -> int | None:
    """The largest scene count among interval records (None without any)."""
    counts = [ci["n_scenes"] for ci in cis if isinstance(ci, Mapping)
              and isinstance(ci.get("n_scenes"), int)]
    return max(counts) if counts else None


INTERVAL_LEGEND = (
    f"{EFFECTIVE_MARK}: effective-n interval (Korn-Graubard: Clopper-Pearson on the effective "
    "number of rows, df-adjusted), shown where the scene bootstrap degenerates (fewer than 30 "
    "scenes, resamples that do not vary, or fewer than 5 effective passes or failures); deff: "
    "design effect of the scene clustering (variance over that of independent rows; "
    f"{ASSUMED_MARK} assumed = rows per scene where it cannot be estimated, e.g. at 0 or 100 %)"
)


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


def _count(value: int | None) -> str:
    return "" if value is None else str(value)


def _table1(summary: Node) -> list[str]:
    lines = ["| Subset | n | scenes | PASS | SOFT | VALID |", "|---|---:|---:|---|---|---|"]
    for label, n, values in table1_records(summary):
        scenes = _count(scenes_behind(*(values[m][1] for m in TABLE1_METRICS)))
        head = (f"| **{label}** | | {scenes} |" if n is None
                else f"| {SUBSET_SHORT.get(label, label)} | {n} | {scenes} |")
        lines.append(f"{head} " + " | ".join(cell(*values[m]) for m in TABLE1_METRICS) + " |")
    return lines


def _table2(summary: Node) -> list[str]:
    values = table2_values(summary)
    scenes = _count(scenes_behind(*(values[k][1] for k in TABLE2_KEYS)))
    lines = ["| scenes | " + " | ".join(TABLE2_KEYS) + " |",
             "|---:|" + "---|" * len(TABLE2_KEYS)]
    lines.append(f"| {scenes} | " + " | ".join(cell(*values[k]) for k in TABLE2_KEYS) + " |")
    return lines


def _gap_line(summary: Node) -> str | None:
    values = gap_values(summary)
    if values is None:
        return None
    scenes = scenes_behind(*(values[k][1] for k in GAP_KEYS))
    text = (
        f"Perception-to-action gap: Counting Avg. {cell(*values['Counting Avg.'])}, "
        f"Action Avg. {cell(*values['Action Avg.'])}, Delta {cell(*values['Delta'])} points"
        + (f" ({scenes} scenes)" if scenes else "")
    )
    retained = lookup(summary, "analyses", "perception_action_gap", "Action Avg. | T1 pass")
    if retained is not None:
        text += f"; Action Avg. on scenes whose T1 passed {cell(retained, None)}"
    return text + "."


def _floor_line(summary: Node) -> str | None:
    """The chance floor beside the run (``analyses.chance_floor``), when it is available."""
    floor = lookup(summary, "analyses", "chance_floor")
    if not isinstance(floor, Mapping) or not floor.get("available"):
        return None
    table, gap = floor["floor"]["by_template"], floor["floor_gap"]
    per = ", ".join(f"{k} {cell(v, None)}" for k, v in table.items())
    return (f"Chance floor (a blind guess from the prompt text and the dev split's answers, on the "
            f"same items): {per}; its Counting Avg. {cell(gap['Counting Avg.'], None)}, Action Avg. "
            f"{cell(gap['Action Avg.'], None)}, Delta {cell(gap['Delta'], None)} points; uniform chance "
            f"Avg. {cell(floor['uniform']['by_template']['Avg. PASS'], None)}.")


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
    floor = _floor_line(summary)
    if floor:
        parts += ["", floor]
    if isinstance(boot, Mapping) and boot.get("fallback"):
        parts += ["", INTERVAL_LEGEND + "."]
    return "\n".join(parts) + "\n"
