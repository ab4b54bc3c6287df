"""The report's "What guessing gets" section: every run beside its chance floor.

Per template, each run's PASS and counting-vs-action gap next to the chance floor that
``rose-eval`` stored with the run (``analyses.chance_floor``: the dev-fitted answer prior
scored on the same items), the uniform-count chance and the random solver's expectation.
Reference runs (``rose-eval report --reference EVAL_DIR``, e.g. ``rose-run --solver prior``
or ``cv``) are shown here as references, never in the leaderboard, Table 1/2 or the
comparison. Numbers are read from the summaries, not recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.report.htmlkit import Html, el, table
from rose_eval.report.runs import ReportRun
from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT

TEMPLATE_KEYS = tuple(TEMPLATE_SHORT[t] for t in TEMPLATE_ORDER)
GAP_KEYS = ("Counting Avg.", "Action Avg.", "Delta")
HEADER = ["", *TEMPLATE_KEYS, "Avg. PASS", *GAP_KEYS[:2], "Δ (points)"]


def _analysis(run: ReportRun, name: str) -> Mapping[str, Any] | None:
    analyses = run.summary.get("analyses")
    value = analyses.get(name) if isinstance(analyses, Mapping) else None
    return value if isinstance(value, Mapping) and "error" not in value else None


def _pct(value: Any) -> str:
    return "--" if not isinstance(value, int | float) else f"{100 * value:.1f}"


def _gap_of(by_template: Mapping[str, Any]) -> dict[str, float | None]:
    """Counting Avg., Action Avg. and Delta of a per-template PASS table (missing -> None)."""
    counting = [by_template.get(k) for k in TEMPLATE_KEYS[:2]]
    action = [by_template.get(k) for k in TEMPLATE_KEYS[2:]]
    if any(v is None for v in counting + action):
        return dict.fromkeys(GAP_KEYS)
    c, a = sum(counting) / 2, sum(action) / 3
    return {"Counting Avg.": c, "Action Avg.": a, "Delta": c - a}


def _row(label: object, by_template: Mapping[str, Any], gap: Mapping[str, Any] | None) -> list[object]:
    templates = [by_template.get(k) for k in TEMPLATE_KEYS]
    present = [v for v in templates if v is not None]
    avg = by_template.get("Avg. PASS", sum(present) / len(present) if len(present) == len(templates) else None)
    gap = gap or _gap_of(by_template)
    return [label, *map(_pct, templates), _pct(avg), *(_pct(gap.get(k)) for k in GAP_KEYS)]


def run_row(run: ReportRun, label: object) -> list[object] | None:
    """A run's PASS per template and its gap (from ``analyses.perception_action_gap``)."""
    gap = _analysis(run, "perception_action_gap")
    if gap is None:
        return None
    return _row(label, gap.get("template_pass") or {}, gap)


def floor_rows(run: ReportRun) -> list[list[object]]:
    """The run's floor, uniform and random rows (empty when the summary has no floor)."""
    floor = _analysis(run, "chance_floor")
    if not floor or not floor.get("available"):
        return []
    return [_row(el("span", "chance floor (dev prior)", class_="ref"), floor["floor"]["by_template"],
                 floor.get("floor_gap")),
            _row(el("span", "uniform count guess", class_="ref"), floor["uniform"]["by_template"], None),
            _row(el("span", "random solver (expected)", class_="ref"), floor["random"]["by_template"], None)]


def _unavailable_reason(run: ReportRun) -> str:
    floor = _analysis(run, "chance_floor")
    if floor is None:
        return "no chance_floor analysis in the summary (re-run rose-eval without --no_analyses)"
    return str(floor.get("reason", "not available"))


def section(runs: Sequence[ReportRun], references: Sequence[ReportRun] = ()) -> Html:
    """Each run with its floor rows below it, then the reference runs."""
    rows: list[list[object]] = []
    notes: list[str] = []
    for run in runs:
        main = run_row(run, el("strong", run.name))
        if main is not None:
            rows.append(main)
        extra = floor_rows(run)
        rows.extend(extra)
        if not extra:
            notes.append(f"{run.name}: no chance floor ({_unavailable_reason(run)}).")
    for ref in references:
        row = run_row(ref, el("span", f"reference: {ref.name}", class_="ref"))
        if row is not None:
            rows.append(row)
        else:
            notes.append(f"reference {ref.name}: no perception_action_gap analysis in its summary.")
    method = next((str(f["method"]) for f in (_analysis(r, "chance_floor") for r in runs)
                   if f and f.get("available")), "")
    caption = ("PASS % per template; Δ = Counting Avg. (G-Cnt, L-Cnt) − Action Avg. (L-Clk, V-Clk, "
               "Excl. C+S), in points. The chance floor reads only the prompt text and the dev "
               "split's answers" + (f" ({method})" if method else "") + "; a model's PASS or gap "
               "at the floor is not perception. Uniform: 1 / (largest gold count + 1) per template "
               "and subset. References are shown here only, not ranked.")
    parts: list[object] = [table(HEADER, rows, caption=caption)] if rows else []
    parts += [el("p", note, class_="note") for note in notes]
    return Html("".join(map(str, parts))) if parts else el("p", "Nothing to show.", class_="note")
