"""The report's sections, each a pure function of the loaded runs returning markup.

Numbers are read, not re-derived: Table 1/2 and the gap from the evaluator's summary
(points) and its `analyses.bootstrap` (intervals) through the Markdown report's table
builders; consistency, bridges, abstention and lenient PASS from `analyses`; the paired
comparison from `rose-eval compare`. Only the subset x template heatmap and the error
taxonomy are tallied here, from the per-item records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES, by_subset
from rose_eval.analyses.compare import (
    CompareError,
    check_same_items,
    compare_runs,
    split_standard,
)
from rose_eval.analyses.consistency import METRIC_KEYS as CONSISTENCY_KEYS
from rose_eval.report import plots
from rose_eval.report.htmlkit import Html, el, escape, table
from rose_eval.report.markdown import (
    EFFECTIVE_MARK,
    INTERVAL_LEGEND,
    TABLE1_METRICS,
    TABLE2_KEYS,
    Value,
    design_effect_text,
    gap_values,
    is_effective_n,
    lookup,
    table1_records,
    table2_values,
)
from rose_eval.report.runs import ReportRun
from rose_eval.report.taxonomy import CATEGORIES, taxonomy_by_template
from rose_eval.summaries import mean
from rose_eval.vocab import SUBSET_ORDER, SUBSET_SHORT, TEMPLATE_SHORT, template_of

BRIDGE_SHORT = {"T1B_CLICK_GLOBAL": "G-Clk (T1B)", "T2B_COUNT_LOCAL_MATCHED": "mL-Cnt (T2B)"}
GLOBAL_BRIDGE_KEYS = ("G-Cnt", "G-Clk", "V-Clk", "G-Clk | G-Cnt correct", "Card-Exact",
                      "Loc. | Card", "Delta C->G", "Delta G->V")
MATCHED_BRIDGE_KEYS = ("mL-Cnt", "L-Clk", "L-Clk | mL-Cnt correct", "Fail", "Card-Exact",
                       "Loc. | Card", "mL-Cnt to L-Clk drop")


def short_template(template: str) -> str:
    return TEMPLATE_SHORT.get(template) or BRIDGE_SHORT.get(template, template)


def design_text(ci: Mapping[str, Any] | None) -> str:
    """`412 scenes · deff 2.1` for an interval record ('' without design facts)."""
    if not isinstance(ci, Mapping):
        return ""
    parts = []
    if isinstance(ci.get("n_scenes"), int):
        parts.append(f"{ci['n_scenes']} scenes")
    if design_effect_text(ci):
        parts.append(design_effect_text(ci))
    return " · ".join(parts)


def value_cell(point: float | None, ci: Mapping[str, Any] | None = None, *,
               compact: bool = False) -> Html:
    """A percentage with its interval below it (beside it when compact), then the scenes and
    design effect behind the interval (compact: the design effect only; `†` marks an
    effective-n interval); '--' when absent."""
    if point is None and isinstance(ci, Mapping):
        point = ci.get("point")
    if point is None:
        return el("span", "--", class_="pt")
    text = f"{100 * point:.1f}"
    bounds = ""
    if isinstance(ci, Mapping) and ci.get("lo") is not None and ci.get("hi") is not None:
        bounds = f"[{100 * ci['lo']:.1f}, {100 * ci['hi']:.1f}]"
        bounds += EFFECTIVE_MARK if is_effective_n(ci) else ""
    design = design_text(ci) if bounds else ""
    if compact:  # a second value under a main one: its design effect on a line of its own
        deff = design_effect_text(ci) if bounds else ""
        return Html(escape(f"{text} {bounds}".strip())
                    + (el("span", deff, class_="design") if deff else ""))
    return Html(el("span", text, class_="pt") + (el("span", bounds, class_="ci") if bounds else "")
                + (el("span", design, class_="design") if design else ""))


def interval(value: Value) -> plots.Interval:
    point, ci = value
    ci = ci if isinstance(ci, Mapping) else {}
    return (point if point is not None else ci.get("point"), ci.get("lo"), ci.get("hi"))


# ------------------------------------------------------------------------- headline


def _verdict(delta: plots.Interval) -> str:
    point, lo, hi = delta
    if lo is None or hi is None:
        return "action falls behind counting (no interval)" if point and point > 0 else \
            "no gap measured (no interval)"
    if lo > 0:
        return "action falls behind counting"
    if hi < 0:
        return "action is ahead of counting"
    return "no reliable gap (the interval contains 0)"


def finding(runs: Sequence[ReportRun]) -> Html:
    """The headline in words: each model's counting vs action averages and the gap."""
    lines = []
    for run in runs:
        gap = gap_values(run.summary)
        if gap is None or gap["Delta"][0] is None:
            continue
        c, a, d = (interval(gap[k]) for k in ("Counting Avg.", "Action Avg.", "Delta"))
        ci = f" [{100 * d[1]:.1f}, {100 * d[2]:.1f}]" if d[1] is not None else ""
        lines.append(el("p", el("strong", run.name), f": Counting Avg. {100 * c[0]:.1f} %, "
                        f"Action Avg. {100 * a[0]:.1f} %, Δ {100 * d[0]:.1f} points{ci}: "
                        f"{_verdict(d)}."))
    if not lines:
        return Html("")
    return el("div", el("p", el("strong", "Perception to action"), " (Δ = Counting Avg. − "
                            "Action Avg., 95 % scene-cluster interval)"), lines,
              class_="finding")


def table1(runs: Sequence[ReportRun]) -> Html:
    """Table 1: per subset PASS (SOFT below it), then Avg. PASS, Avg. SOFT, VALID; rows = models."""
    records = {run.name: {label: values for label, _, values in table1_records(run.summary)}
               for run in runs}
    subsets = [s for s in SUBSET_ORDER if any(s in r for r in records.values())]
    rows = []
    for run in runs:
        rec = records[run.name]
        cells: list[object] = []
        for subset in subsets:
            values = rec.get(subset, {})
            soft = values.get("SOFT", (None, None))
            cells.append(Html(value_cell(*values.get("PASS", (None, None))) + el(
                "span", "SOFT ", value_cell(*soft, compact=True), class_="soft")))
        cells += [value_cell(*rec["Avg."][m]) for m in TABLE1_METRICS]
        rows.append([run.name, *cells])
    header = ["Model", *(SUBSET_SHORT[s] for s in subsets), "Avg. PASS", "Avg. SOFT", "VALID"]
    return table(header, rows, class_="wide",
                 caption="PASS per subset (item means; SOFT below), macro averages over "
                 "subsets; % with 95 % scene-cluster bootstrap intervals, the scenes behind each "
                 f"and its design effect. {INTERVAL_LEGEND}.")


def table2(runs: Sequence[ReportRun]) -> Html:
    """Table 2: template PASS, C-F1, R-OK, Avg. PASS (macro over subsets); rows = models."""
    rows = [[run.name, *(value_cell(*table2_values(run.summary)[k]) for k in TABLE2_KEYS)]
            for run in runs]
    return table(["Model", *TABLE2_KEYS], rows,
                 caption="PASS per template, click F1 and region-OK rate, macro over subsets; "
                 "% with 95 % scene-cluster bootstrap intervals (scenes and design effect "
                 f"below each). {INTERVAL_LEGEND}.")


def gap_section(runs: Sequence[ReportRun]) -> Html:
    """The perception-to-action plot and its numbers."""
    points, rows = [], []
    for run in runs:
        gap = gap_values(run.summary)
        if gap is None:
            continue
        points.append(plots.GapPoint(run.name, interval(gap["Counting Avg."]),
                                     interval(gap["Action Avg."])))
        retained = lookup(run.summary, "analyses", "perception_action_gap", "Action Avg. | T1 pass")
        rows.append([run.name, *(value_cell(*gap[k]) for k in gap), value_cell(retained)])
    if not points:
        return el("p", "No perception-to-action analysis in these summaries (re-run rose-eval "
                  "without --no_analyses).", class_="note")
    return el("div", el("figure", plots.perception_action(points), el(
        "figcaption", "Each model's Counting Avg. (mean PASS of G-Cnt, L-Cnt) against its Action "
        "Avg. (L-Clk, V-Clk, Excl. C+S), with 95 % scene-cluster intervals. Below the diagonal, "
        "the model acts worse than it counts.")), table(
        ["Model", "Counting Avg.", "Action Avg.", "Δ (points)", "Action Avg. | T1 passed"], rows,
        caption="% with 95 % scene-cluster intervals; last column: action PASS on the scenes "
        "whose global count (T1) passed"), class_="figs")


# ------------------------------------------------------------------------ breakdowns


def subset_template_grid(items: Sequence[Mapping[str, Any]]
                         ) -> tuple[list[str], list[str], list[list[float | None]], list[list[int]]]:
    """PASS per subset x template (item means), with item counts; templates present only."""
    grouped = by_subset(items)
    templates = [t for t in ALL_TEMPLATES if any(template_of(r) == t for r in items)]
    values, counts = [], []
    for subset in grouped:
        cells = [[r for r in grouped[subset] if template_of(r) == t] for t in templates]
        values.append([mean(r.get("pass") for r in c) for c in cells])
        counts.append([len(c) for c in cells])
    return [SUBSET_SHORT[s] for s in grouped], [short_template(t) for t in templates], values, counts


def heatmaps(runs: Sequence[ReportRun]) -> Html:
    figures = []
    for i, run in enumerate(runs):
        subsets, templates, values, counts = subset_template_grid(run.items)
        if subsets:
            figures.append(el("figure", plots.heatmap(run.name, subsets, templates, values, counts,
                                                      figure_id=f"fig-heat-{i}")))
    return el("div", figures, class_="figs")


def _swatch(name: str) -> Html:
    return el("span", class_="swatch", style=f"background:{CATEGORIES.get(name).color}")


def taxonomy(runs: Sequence[ReportRun]) -> Html:
    """Per model: stacked bars and a counts table; then the category definitions."""
    names = CATEGORIES.names()
    tallies = [taxonomy_by_template(run.items) for run in runs]
    used = [n for n in names if any(r.counts.get(n) for rows in tallies for r in rows)]
    figures, tables = [], []
    for i, (run, rows) in enumerate(zip(runs, tallies, strict=True)):
        if not any(r.failed for r in rows):
            tables.append(el("p", el("strong", run.name), ": no failed item.", class_="note"))
            continue
        figures.append(el("figure", plots.taxonomy_bars(
            run.name, [short_template(r.template) for r in rows], [r.n for r in rows],
            [r.counts for r in rows], [(n, CATEGORIES.get(n).color) for n in names],
            figure_id=f"fig-tax-{i}")))
        mine = [n for n in used if any(r.counts.get(n) for r in rows)]
        tables.append(table(
            ["Template", "Items", "Failed", *(CATEGORIES.get(n).label for n in mine)],
            [[short_template(r.template), r.n, r.failed, *(r.counts.get(n, 0) for n in mine)]
             for r in rows], caption=f"{run.name}: failed items per category", class_="wide"))
    legend = el("p", [el("span", _swatch(n), CATEGORIES.get(n).label) for n in used],
                class_="legend")
    definitions = table(["Category", "Definition"],
                        [[Html(_swatch(n) + escape(CATEGORIES.get(n).label)),
                          CATEGORIES.get(n).definition] for n in names], class_="defs",
                        caption="Each failed item gets the first category that matches, in "
                        "this order (rose_eval/report/taxonomy.py)")
    return Html("".join([legend, el("div", figures, class_="figs"), *tables,
                         el("h3", "Category definitions"), definitions]))


def diagnostics(runs: Sequence[ReportRun]) -> Html:
    """Validity, lenient PASS and abstention per model (from the summary's analyses)."""
    rows = []
    for run in runs:
        lenient = lookup(run.summary, "analyses", "lenient", "overall") or {}
        abst = lookup(run.summary, "analyses", "abstention", "overall") or {}
        rows.append([run.name, value_cell(lookup(run.summary, "paper_metrics", "table1", "VALID")),
                     value_cell(lenient.get("pass_rate")), value_cell(lenient.get("lenient_pass_rate")),
                     abst.get("n_zero", "--"), value_cell(abst.get("pass_zero")),
                     value_cell(abst.get("abstention_rate_zero")),
                     value_cell(abst.get("false_abstention_rate"))])
    return table(["Model", "VALID", "PASS (items)", "Lenient PASS", "Zero-target items",
                  "PASS on zero-target", "Abstains on zero-target", "False abstention"], rows,
                 caption="lenient PASS re-scores the last well-formed answer inside the text "
                 "(diagnostic only); abstaining = a valid answer that claims no target")


def consistency(runs: Sequence[ReportRun]) -> Html | None:
    rows = [[run.name, *(value_cell(macro.get(k)) for k in CONSISTENCY_KEYS)]
            for run in runs
            if (macro := lookup(run.summary, "analyses", "scene_consistency", "macro_equal_subset"))]
    if not rows:
        return None
    return table(["Model", *("G-Cnt (T1)" if k == "T1" else k for k in CONSISTENCY_KEYS)], rows,
                 caption="PASS of each template on the scenes whose global count (T1) passed; "
                 "Action Ret. = mean of the three action templates; macro over subsets")


def bridges(runs: Sequence[ReportRun]) -> Html | None:
    parts: list[Html] = []
    global_rows = [(run, t) for run in runs
                   if (t := lookup(run.summary, "analyses", "global_click_bridge", "paper_table"))]
    if global_rows:
        parts.append(el("h3", "Global-click bridge (T1B)"))
        parts.append(el("figure", plots.bridge_chain(
            [(run.name, [t.get(k) for k in ("G-Cnt", "G-Clk", "V-Clk")]) for run, t in global_rows],
            ["G-Cnt", "G-Clk", "V-Clk"])))
        parts.append(table(["Model", *GLOBAL_BRIDGE_KEYS],
                           [[run.name, *(value_cell(t.get(k)) for k in GLOBAL_BRIDGE_KEYS)]
                            for run, t in global_rows],
                           caption="same scene: count the whole grid, click every exception, "
                           "click inside the highlighted box; Δ in points of PASS"))
    matched = [(run, t) for run in runs
               if (t := lookup(run.summary, "analyses", "matched_local_bridge", "paper_table"))]
    if matched:
        parts.append(el("h3", "Matched local-count bridge (T2B)"))
        parts.append(table(["Model", *MATCHED_BRIDGE_KEYS],
                           [[run.name, *(value_cell(t.get(k)) for k in MATCHED_BRIDGE_KEYS)]
                            for run, t in matched],
                           caption="count exactly the cells the local click task asks for, "
                           "then compare with the click answer (Fail = clicks wrong although "
                           "the count was right)"))
    return Html("".join(parts)) if parts else None


def comparison(runs: Sequence[ReportRun], *, seed: int, n_boot: int,
               include_controls: bool = False) -> Html | None:
    """The paired leaderboard of `rose-eval compare` (None for a single run), with every
    pairwise claim (Holm-adjusted) and the minimum detectable difference of each pair.
    Control and changed-benchmark runs are not ranked unless ``include_controls``."""
    if len(runs) < 2:
        return None
    evaluated, aside = split_standard([run.evaluated for run in runs],
                                      include_nonstandard=include_controls)
    if len(evaluated) < 2:
        return el("p", "No paired comparison: fewer than two standard runs (control and "
                       "changed-benchmark runs are not ranked beside them).", class_="note")
    try:
        check_same_items(evaluated)
        result = compare_runs(evaluated, seed=seed, n_boot=n_boot)
    except CompareError as exc:
        return el("p", f"No paired comparison: {exc}", class_="note")
    board = result["leaderboard"]
    fw = result["family_wise"]
    figure = plots.comparison([(r["model"], interval((None, r["table1 Avg. PASS"])),
                                interval((None, r["diff_vs_best"]))) for r in board],
                              result["best"])

    def points(value: float | None) -> str:
        return "--" if value is None else f"{100 * value:.1f}"

    def p_text(value: float | None) -> str:
        return "--" if value is None else ("< 0.001" if value < 0.001 else f"{value:.3f}")

    rows = [[r["model"], r["rank"], value_cell(None, r["table1 Avg. PASS"]),
             value_cell(None, r["diff_vs_best"]),
             "--" if r["share_best_ahead"] is None else f"{100 * r['share_best_ahead']:.1f} %",
             p_text(r["p_vs_best_holm"]), points(r["mdd_vs_best"]),
             f"{100 * r['rank_stability']:.1f} %", value_cell(None, r["gap Delta"])]
            for r in board]
    mdds = [p["mdd"] for p in result["pairs"]]
    span = points(min(mdds)) + (f" to {points(max(mdds))}" if max(mdds) > min(mdds) else "")
    resolution = el("p", el("strong", "Resolution: "),
                    f"on these {sum(result['n_scenes'].values())} scenes the minimum detectable "
                    f"difference per pair is {span} points of Avg. PASS "
                    f"({100 * fw['mdd_power']:.0f} % power at alpha/m = {fw['mdd_alpha']:.4g}); "
                    "a smaller gap is below the resolution of these scenes. "
                    f"Claims: {fw['method']}, family-wise error at most {fw['alpha']:g} over "
                    f"{fw['n_claims']} pair{'s' if fw['n_claims'] != 1 else ''}.",
                    class_="finding")
    pair_rows = [[p["a"], p["b"], value_cell(None, p["difference"]), p_text(p["p"]),
                  p_text(p["p_holm"]), points(p["mdd"]), p["claim"]] for p in result["pairs"]]
    return Html(el("figure", figure) + resolution + table(
        ["Model", "Rank", "Avg. PASS", "Best minus model", "Best ahead", "p vs best (Holm)",
         "MDD (points)", "Rank kept", "Δ counting-action"], rows,
        caption=f"{result['n_boot']} paired scene resamples (seed {result['seed']}); rank kept: "
        f"{result['rank_stability']}") + table(
        ["A", "B", "A − B", "p", "p (Holm)", "MDD (points)", "Claim"], pair_rows,
        caption="every pair of models: paired difference (95 % interval, unadjusted), "
        "paired-bootstrap p-value, Holm-adjusted p-value, minimum detectable difference; a "
        "pair is claimed only when its adjusted p-value is at most the family-wise alpha"))
