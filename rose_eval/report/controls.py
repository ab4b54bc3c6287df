"""The report's "Interface controls" section: each model's gap split into where it is lost.

Read from ``analyses.interface_controls`` of each run's summary (:mod:`rose_eval.analyses.controls`):
one figure (a bar per model from 0 to 100 %: PASS on the standard items, then each part of the
gap in chain order, so a bar's segments are the consecutive PASS levels standard ->
coords_given -> exceptions_given -> text_only -> 100) and one table with every number and its
scene bootstrap interval. A part below zero (a control that hurt) is drawn hatched, going back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.report.htmlkit import Html, el, table
from rose_eval.report.runs import ReportRun

PART_LABEL = {
    "pass_standard": "PASS (standard)",
    "lost_to_coordinate_reading": "lost to coordinate reading",
    "lost_to_perception": "lost to perception",
    "lost_to_image_modality": "lost to the image modality",
    "lost_to_execution": "lost to execution",
}
PART_COLOUR = {
    "pass_standard": "#4c9a5b",
    "lost_to_coordinate_reading": "#e0a030",
    "lost_to_perception": "#d0553d",
    "lost_to_image_modality": "#8e6bbf",
    "lost_to_execution": "#5a6f8f",
}
NOTE = ("Controls are paired counterparts of the same items (same scene, region and gold): "
        "coords_given adds row/column labels, exceptions_given also marks every exception cell, "
        "text_only gives the grid as a symbol matrix without an image. Each part is the PASS "
        "difference between consecutive controls; they add up to the gap 100 − PASS(standard). "
        "[lo, hi]: 95 % scene bootstrap within subsets.")


def decompositions(runs: Sequence[ReportRun]) -> list[tuple[str, Mapping[str, Any]]]:
    """(run name, its pooled decomposition) for the runs that have one."""
    out = []
    for run in runs:
        analyses = run.summary.get("analyses")
        result = analyses.get("interface_controls") if isinstance(analyses, Mapping) else None
        if isinstance(result, Mapping) and isinstance(result.get("all"), Mapping):
            out.append((run.name, result))
    return out


def _point(entry: Any) -> float | None:
    return entry.get("point") if isinstance(entry, Mapping) else None


def _cell(entry: Any) -> str:
    if not isinstance(entry, Mapping) or entry.get("point") is None:
        return "--"
    text = f"{entry['point']:.1f}"
    if entry.get("lo") is not None and entry.get("hi") is not None:
        text += f" [{entry['lo']:.1f}, {entry['hi']:.1f}]"
    return text


def figure(series: Sequence[tuple[str, Mapping[str, Any]]], figure_id: str = "fig-controls") -> Html:
    """One horizontal bar per model: the PASS levels along the chain, each segment a part."""
    from rose_eval.report.plots import _figure_class, _style, _svg, short

    with _style(figure_id):
        fig = _figure_class()(figsize=(7.2, 0.9 + 0.55 * len(series)))
        ax = fig.add_subplot()
        shown: set[str] = set()
        for y, (_name, result) in enumerate(series):
            whole = result["all"]
            level = 0.0
            for part in ["pass_standard", *result["parts"]]:
                size = _point(whole.get(part))
                if size is None:
                    continue
                left, width = (level, size) if size >= 0 else (level + size, -size)
                label = PART_LABEL[part] if part not in shown else None
                shown.add(part)
                ax.barh([y], [width], left=[left], color=PART_COLOUR[part], edgecolor="white",
                        hatch="//" if size < 0 else None, label=label, height=0.6)
                if width >= 6:
                    ax.text(left + width / 2, y, f"{size:.0f}", ha="center", va="center", fontsize=7.5,
                            color="white")
                level += size
        ax.set_yticks(range(len(series)), labels=[short(name) for name, _ in series])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of the paired items")
        ax.set_title("Where the points are lost (interface controls)")
        ax.legend(fontsize=7.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.35 - 0.05 * len(series)),
                  ncol=3)
        return _svg(fig, figure_id)


def controls_section(runs: Sequence[ReportRun]) -> Html | None:
    """The section's body, or None when no run has scored control items."""
    series = decompositions(runs)
    if not series:
        return None
    header = ["model", "paired items", "PASS standard", "coords_given", "exceptions_given", "text_only",
              *[PART_LABEL[p] for p in PART_LABEL if p != "pass_standard"]]
    rows = []
    for name, result in series:
        whole = result["all"]
        rows.append([name, str(result.get("n_paired_items")),
                     *[_cell(whole.get(f"pass_{c}")) for c in ("standard", "coords_given", "exceptions_given",
                                                              "text_only")],
                     *[_cell(whole.get(p)) for p in PART_LABEL if p != "pass_standard"]])
    return Html(el("p", NOTE, class_="note") + figure(series) + table(header, rows))
