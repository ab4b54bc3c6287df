"""Markdown summary: Table 1/2 rows with intervals and the gap line."""

from __future__ import annotations

from rose_eval.aggregate import paper_table1, paper_table2
from rose_eval.analyses import run_analyses
from rose_eval.report.markdown import cell, render_markdown
from tests.rose_eval.analyses.factory import GLYPH, STYLE, scene


def _summary() -> dict:
    items = []
    for k in range(6):
        items += scene(GLYPH, f"g{k}", (1, 1, k % 2, 0, 0))
        items += scene(STYLE, f"s{k}", (1, 0, 0, 0, 1))
    return {
        "model": "m", "display_name": "Model-M", "split": "test",
        "paper_metrics": {"table1": paper_table1(items), "table2": paper_table2(items)},
        "analyses": run_analyses(items, [], n_boot=300),
    }


def test_cell_formats_percent_with_interval() -> None:
    assert cell(0.503, {"point": 0.503, "lo": 0.471, "hi": 0.534}) == "50.3 [47.1, 53.4]"
    assert cell(0.5, None) == "50.0"
    assert cell(None, None) == "--"
    assert cell(None, {"point": 0.25, "lo": None, "hi": None}) == "25.0"


def test_cell_shows_the_design_effect_and_marks_the_effective_n_interval() -> None:
    record = {"point": 1.0, "lo": 0.398, "hi": 1.0, "interval": "effective n", "deff": 5.0,
              "deff_assumed": True, "n_scenes": 4}
    assert cell(1.0, record) == "100.0 [39.8, 100.0]† deff 5.0*"
    record.update(interval="scene bootstrap", deff=2.04, deff_assumed=False)
    assert cell(1.0, record) == "100.0 [39.8, 100.0] deff 2.0"


def test_render_has_both_tables_with_intervals_design_and_the_gap() -> None:
    text = render_markdown(_summary())
    assert text.startswith("## ROSE evaluation: Model-M (test)")
    assert "300 resamples, seed 0" in text
    assert "| Subset | n | scenes | PASS | SOFT | VALID |" in text
    # Glyph PASS = (6 + 6 + 3) / 30 = 50%, scenes differ only on L-Clk; 6 scenes: the
    # effective-n interval (marked) with the estimated design effect.
    assert "| ChineseGlyph | 30 | 6 | 50.0 [" in text
    # EmojiStyle: every scene identical -> the bootstrap collapses, the shown interval does
    # not; the design effect cannot be estimated (assumed, marked *).
    assert "| EmojiStyle | 30 | 6 | 40.0 [18.6, 64.6]† deff 1.0* |" in text
    assert "40.0 [40.0, 40.0]" not in text
    # VALID is 100 % everywhere: each scene counted once (deff = 5 rows per scene, assumed):
    # 0.025^(1/6) = 54.1 %.
    assert "100.0 [54.1, 100.0]† deff 5.0*" in text
    assert "| **Avg.** | | 12 | 45.0 [" in text
    assert "| scenes | G-Cnt | L-Cnt | L-Clk | V-Clk | Excl. C+S | C-F1 | R-OK | Avg. PASS |" in text
    assert "| 12 | 100.0 [73.0, 100.0]† deff 1.0* | 50.0 [" in text
    assert "Counting Avg. 75.0 [" in text and "Action Avg. 25.0 [" in text
    assert "Delta 50.0 [" in text and "points (12 scenes)" in text
    assert "†: effective-n interval (Korn-Graubard" in text
    assert "PixelEdit" not in text  # subsets without rows are left out


def test_render_without_analyses_shows_points_only() -> None:
    summary = _summary()
    del summary["analyses"]
    text = render_markdown(summary)
    assert "| EmojiStyle | 30 |  | 40.0 | " in text
    assert "Perception-to-action gap" not in text
    assert "†" not in text
