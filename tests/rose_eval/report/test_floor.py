"""The report's "What guessing gets" section: the chance floor beside every run, references apart."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from rose_eval.cli.eval import main
from rose_eval.report.floor import TEMPLATE_KEYS
from tests.rose_eval.report.conftest import ReportInputs


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match, anchor
    return match.group(1)


def _row_cells(section: str, label: str) -> list[str]:
    labels = []
    for row in re.findall(r"<tr>(.*?)</tr>", section, re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        if cells and cells[0].split(" [")[0] == label:  # a run's name may carry a [mark]
            return cells
        labels.append(cells[0] if cells else "")
    raise AssertionError(f"no row {label!r} among {labels} ({re.findall(r'class=.note.>(.*?)<', section)})")


def test_every_run_has_its_floor_and_a_reference_is_not_ranked(report_inputs: ReportInputs, tmp_path: Path):
    out = tmp_path / "r.html"
    runs = [str(report_inputs.eval_dirs[r]) for r in ("oracle", "cv")]
    assert main(["report", *runs, "--out", str(out), "--gallery", "0",
                 "--reference", str(report_inputs.eval_dirs["prior"]), "--n_boot", "50"]) == 0
    page = out.read_text(encoding="utf-8")
    floor_html = _section(page, "floor")
    summary = json.loads((report_inputs.eval_dirs["cv"] / "evaluation_summary.json").read_text())
    floor = summary["analyses"]["chance_floor"]
    assert floor["available"]
    cells = _row_cells(floor_html, "chance floor (dev prior)")
    assert cells[1:6] == [f"{100 * floor['floor']['by_template'][k]:.1f}" for k in TEMPLATE_KEYS]
    assert cells[-1] == f"{100 * floor['floor_gap']['Delta']:.1f}"
    # the prior baseline, run through rose-run, scores exactly the floor stored with every run
    prior = json.loads((report_inputs.eval_dirs["prior"] / "evaluation_summary.json").read_text())
    assert _row_cells(floor_html, "reference: prior-baseline")[1:6] == cells[1:6]
    assert prior["analyses"]["perception_action_gap"]["Delta"] == floor["floor_gap"]["Delta"]
    # a reference is shown only here: not in Table 1, Table 2, the gap figure or the comparison
    for anchor in ("table1", "table2", "gap", "compare"):
        assert "prior-baseline" not in _section(page, anchor)
    assert floor_html.count("chance floor (dev prior)") == 2  # one per run


def test_a_missing_reference_is_one_line(report_inputs: ReportInputs, tmp_path: Path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(report_inputs.eval_dirs["cv"]), "--out", str(out),
                 "--reference", str(tmp_path / "nowhere")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not out.exists()
