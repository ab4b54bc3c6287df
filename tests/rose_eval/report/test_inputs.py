"""The report's Inputs section: every run's coverage and release identity, from its provenance.json."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from rose_eval.cli.eval import main
from rose_eval.coverage import Coverage
from tests.rose_eval.report.conftest import ReportInputs


def _inputs(page: str) -> list[str]:
    section = re.search(r'<section id="inputs">(.*?)</section>', page, re.S)
    assert section
    return [html.unescape(re.sub(r"<[^>]+>", "", li)) for li in re.findall(r"<li>(.*?)</li>", section.group(1), re.S)]


def test_each_run_shows_its_coverage_and_release(report_inputs: ReportInputs, tmp_path: Path):
    out = tmp_path / "r.html"
    assert main(["report", str(report_inputs.eval_dirs["oracle"]), str(report_inputs.eval_dirs["probe"]),
                 "--out", str(out), "--gallery", "0", "--n_boot", "50"]) == 0
    page = out.read_text(encoding="utf-8")
    items = _inputs(page)
    for name, text in zip(("oracle", "probe"), items, strict=True):
        record = json.loads((report_inputs.eval_dirs[name] / "provenance.json").read_text())
        c = record["coverage"]
        line = Coverage(c["scored"], c["expected"], tuple(c["absent_subsets"]), c["endpoint_errors"],
                        c["truncated_at_max_tokens"]).line()
        assert line in text
        assert record["metadata"]["rows_sha256"][:12] in text
    probe = json.loads((report_inputs.eval_dirs["probe"] / "provenance.json").read_text())["coverage"]
    oracle = json.loads((report_inputs.eval_dirs["oracle"] / "provenance.json").read_text())["coverage"]
    assert probe["endpoint_errors"] > 0 and oracle["endpoint_errors"] == 0
    # a run with a gap is flagged, a clean one is not
    assert page.count('class="note warn"') == 1


def test_an_evaluation_without_provenance_says_so(report_inputs: ReportInputs, tmp_path: Path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(report_inputs.eval_dirs["oracle"], old)
    (old / "provenance.json").unlink()
    out = tmp_path / "r.html"
    assert main(["report", str(old), "--out", str(out), "--gallery", "0", "--n_boot", "50"]) == 0
    assert "No provenance.json" in _inputs(out.read_text(encoding="utf-8"))[0]
