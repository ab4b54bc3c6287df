"""The report's figures as inline SVG, drawn with matplotlib (imported lazily, no pyplot).

Same data -> same bytes: each figure is saved with a fixed hash salt, no date and no
creator in the metadata, text kept as text (`svg.fonttype: none`) and mathtext off (a
model named `$x$` is a name, not a formula). For inlining, the XML prolog and DOCTYPE
are dropped and every id is prefixed with the figure's own id (no clashes on one page).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rose_eval.report.htmlkit import Html

Interval = tuple[float | None, float | None, float | None]  # point, lo, hi (rates in [0, 1])
MISSING_EXTRA = ("matplotlib is not installed; install the report extra: "
                 "pip install 'rose-toolkit[report]'")
LABEL_CHARS = 28


def require_matplotlib() -> None:
    """Raise ImportError naming the extra when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(MISSING_EXTRA) from exc


def _figure_class() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # never a GUI backend, even if pyplot is imported elsewhere
    from matplotlib.figure import Figure

    return Figure


def short(name: str, limit: int = LABEL_CHARS) -> str:
    """A label cut to ``limit`` characters (with an ellipsis)."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


@contextmanager
def _style(figure_id: str):
    import matplotlib

    with matplotlib.rc_context({
        "svg.hashsalt": "rose-eval-report",
        "svg.fonttype": "none",
        "text.parse_math": False,
        "font.family": "DejaVu Sans",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.titlesize": 10,
        "axes.titleweight": "bold",
    }):
        yield


_ID_USE = re.compile(r'(\sid="|url\(#|href="#)([^")]+)')


def _svg(fig: Any, figure_id: str) -> Html:
    """The figure as inline SVG; every id (and reference to one) prefixed with ``figure_id``
    so that several figures on one page never share an id."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None},
                bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg"):].strip()
    text = _ID_USE.sub(lambda m: f"{m.group(1)}{figure_id}-{m.group(2)}", text)
    return Html(text.replace("<svg ", f'<svg id="{figure_id}" ', 1))


def _pct(value: float | None) -> float:
    return float("nan") if value is None else 100.0 * value


@dataclass(frozen=True)
class GapPoint:
    """One model on the perception-to-action plot."""

    name: str
    counting: Interval
    action: Interval


def _err(iv: Interval) -> list[list[float]]:
    point, lo, hi = iv
    if point is None or lo is None or hi is None:
        return [[0.0], [0.0]]
    return [[max(0.0, 100 * (point - lo))], [max(0.0, 100 * (hi - point))]]


def perception_action(points: Sequence[GapPoint], figure_id: str = "fig-gap") -> Html:
    """Counting Avg. (x) against Action Avg. (y) per model, 95% intervals as error bars."""
    with _style(figure_id):
        fig = _figure_class()(figsize=(5.6, 4.6))
        ax = fig.add_subplot()
        ax.fill_between([0, 100], [0, 100], [0, 0], color="#fbe9e7", zorder=0)
        ax.plot([0, 100], [0, 100], ls="--", lw=1, color="#888888", zorder=1)
        ax.text(50, 52, "action = counting", rotation=45, rotation_mode="anchor",
                ha="center", va="bottom", color="#666666", fontsize=8)
        ax.text(96, 4, "action falls behind counting", ha="right", color="#b23b2e", fontsize=8)
        placed: list[tuple[float, float]] = []
        for i, p in enumerate(points):
            color = f"C{i % 10}"
            x, y = _pct(p.counting[0]), _pct(p.action[0])
            ax.errorbar([x], [y], xerr=_err(p.counting), yerr=_err(p.action), fmt="o",
                        color=color, ms=7, capsize=3, lw=1.2, zorder=3)
            delta = "" if p.counting[0] is None or p.action[0] is None else \
                f" (Δ {100 * (p.counting[0] - p.action[0]):.1f})"
            # Labels of coinciding points are stacked; near the right edge they go left.
            stack = sum(1 for px, py in placed if abs(px - x) < 6 and abs(py - y) < 6)
            placed.append((x, y))
            right = x > 70
            ax.annotate(short(p.name) + delta, (x, y), fontsize=8, color=color,
                        xytext=(-9 if right else 9, (10 if y < 10 else -4) - 11 * stack),
                        textcoords="offset points", ha="right" if right else "left")
        ax.set_xlim(0, 102)
        ax.set_ylim(0, 102)
        ax.set_aspect("equal")
        ax.set_xlabel("Counting Avg. PASS % (G-Cnt, L-Cnt)")
        ax.set_ylabel("Action Avg. PASS % (L-Clk, V-Clk, Excl. C+S)")
        ax.set_title("Perception to action")
        ax.grid(alpha=0.3)
        return _svg(fig, figure_id)


def heatmap(title: str, rows: Sequence[str], cols: Sequence[str],
            values: Sequence[Sequence[float | None]], counts: Sequence[Sequence[int]],
            figure_id: str) -> Html:
    """A PASS-rate heatmap (0-100 %), each cell annotated with its value and item count."""
    import numpy as np

    data = np.array([[np.nan if v is None else 100 * v for v in row] for row in values])
    with _style(figure_id):
        fig = _figure_class()(figsize=(1.2 + 0.75 * len(cols), 0.8 + 0.34 * len(rows)))
        ax = fig.add_subplot()
        image = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=0, vmax=100,
                          aspect="auto")
        ax.set_xticks(range(len(cols)), labels=list(cols))
        ax.set_yticks(range(len(rows)), labels=list(rows))
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        flat = {n for row in counts for n in row}
        same_n = len(flat) == 1
        for r in range(len(rows)):
            for c in range(len(cols)):
                value = data[r, c]
                text = "–" if np.isnan(value) else f"{value:.0f}"
                if not same_n:
                    text += f"\nn={counts[r][c]}"
                dark = not np.isnan(value) and (value < 20 or value > 80)
                ax.text(c, r, text, ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
        if same_n:
            title = f"{title} (n={flat.pop()} per cell)"
        fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="PASS %")
        ax.set_title(short(title, 60))
        return _svg(fig, figure_id)


def taxonomy_bars(title: str, templates: Sequence[str], n_items: Sequence[int],
                  counts: Sequence[Mapping[str, int]], categories: Sequence[tuple[str, str]],
                  figure_id: str) -> Html:
    """Stacked horizontal bars: each template's failures as a share of its items, by category.

    ``categories`` is (name, colour) in the classifier's order; the page carries the legend.
    """
    with _style(figure_id):
        fig = _figure_class()(figsize=(5.4, 0.8 + 0.34 * len(templates)))
        ax = fig.add_subplot()
        ys = list(range(len(templates)))[::-1]
        left = [0.0] * len(templates)
        for name, color in categories:
            widths = [100.0 * c.get(name, 0) / n if n else 0.0
                      for c, n in zip(counts, n_items, strict=True)]
            if any(widths):
                ax.barh(ys, widths, left=left, color=color, height=0.66, edgecolor="white",
                        linewidth=0.5)
                left = [a + b for a, b in zip(left, widths, strict=True)]
        for y, total in zip(ys, left, strict=True):
            ax.text(total + 1.5, y, f"{total:.0f}%", va="center", fontsize=7.5, color="#444444")
        ax.set_yticks(ys, labels=list(templates))
        ax.set_xlim(0, 112)
        ax.set_xticks([0, 20, 40, 60, 80, 100])
        ax.set_xlabel("failed items, % of the template's items")
        ax.set_title(short(title, 60))
        return _svg(fig, figure_id)


def comparison(rows: Sequence[tuple[str, Interval, Interval]], best: str,
               figure_id: str = "fig-compare") -> Html:
    """Two panels per model: Avg. PASS with its interval; best minus model with its interval."""
    with _style(figure_id):
        fig = _figure_class()(figsize=(7.6, 0.9 + 0.42 * len(rows)))
        left, right = fig.subplots(1, 2, sharey=True)
        ys = list(range(len(rows)))[::-1]
        for y, (name, avg, diff) in zip(ys, rows, strict=True):
            left.errorbar([_pct(avg[0])], [y], xerr=_err(avg), fmt="o", color="#2457a6",
                          capsize=3)
            if name != best:
                right.errorbar([_pct(diff[0])], [y], xerr=_err(diff), fmt="s", color="#b23b2e",
                               capsize=3)
        left.set_yticks(ys, labels=[short(r[0]) for r in rows])
        left.set_xlim(0, 102)
        left.set_xlabel("Avg. PASS % (Table 1), 95% CI")
        left.set_title("Score")
        right.axvline(0, color="#888888", lw=1, ls="--")
        right.set_xlabel(f"{short(best, 20)} minus model (points), paired 95% CI")
        right.set_title("Gap to the best")
        for ax in (left, right):
            ax.grid(axis="x", alpha=0.3)
        return _svg(fig, figure_id)


def bridge_chain(series: Sequence[tuple[str, Sequence[float | None]]], steps: Sequence[str],
                 figure_id: str = "fig-bridge") -> Html:
    """PASS along G-Cnt -> G-Clk -> V-Clk per model (the global-click bridge)."""
    with _style(figure_id):
        fig = _figure_class()(figsize=(5.2, 3.4))
        ax = fig.add_subplot()
        for i, (name, values) in enumerate(series):
            ax.plot(range(len(steps)), [_pct(v) for v in values], marker="o",
                    color=f"C{i % 10}", label=short(name))
        ax.set_xticks(range(len(steps)), labels=list(steps))
        ax.set_ylim(0, 102)
        ax.set_ylabel("PASS %")
        ax.set_title("Count the whole grid → click it → click in a box")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, frameon=False, loc="center left", bbox_to_anchor=(1.02, 0.5))
        return _svg(fig, figure_id)
