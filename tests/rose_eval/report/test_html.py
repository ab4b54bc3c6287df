"""`rose-eval report`: the page in headless Chromium, determinism, escaping, bad input."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rose_eval.cli.eval import main
from rose_eval.report.htmlkit import CONTENT_SECURITY_POLICY
from tests.rose_eval.report.conftest import INJECTION, ReportInputs

REPO = Path(__file__).resolve().parents[3]
RUNS = ("oracle", "random", "cv", "probe")
GALLERY = 6
SECTIONS = ["Table 1: PASS by subset", "Table 2: PASS by template", "Perception to action",
            "What guessing gets", "PASS by subset and template", "Error taxonomy", "Scene consistency", "Bridges",
            "Interface controls: where the points are lost", "Paired comparison", "Failure gallery", "Inputs"]


def _args(inputs: ReportInputs, out: Path, *extra: str) -> list[str]:
    return ["report", *(str(inputs.eval_dirs[r]) for r in RUNS), "--out", str(out),
            "--dataset_root", str(inputs.release), "--gallery", str(GALLERY), "--seed", "5",
            "--n_boot", "300", *extra]


@pytest.fixture(scope="module")
def report(report_inputs: ReportInputs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    assert main(_args(report_inputs, out)) == 0
    return out


def _failed(inputs: ReportInputs, run: str) -> int:
    text = (inputs.eval_dirs[run] / "per_item_eval.jsonl").read_text(encoding="utf-8")
    return sum(1 for line in text.splitlines() if '"pass": 0' in line)


def test_page_loads_offline_with_headings_plots_and_gallery(report, report_inputs, page,
                                                            page_log) -> None:
    url = report.as_uri()
    page.goto(url, wait_until="load")
    assert page_log.page_errors == [] and page_log.console_errors == []
    assert all(u == url or u.startswith(("data:", "about:")) for u in page_log.requests), \
        page_log.requests
    assert page.locator("h1").inner_text() == "ROSE evaluation report"
    assert page.locator("h2").all_inner_texts() == SECTIONS
    # Figures: perception->action, 4 heatmaps, 3 taxonomy bars (oracle has no failure),
    # the bridge chain and the comparison; every one drawn with a real size.
    svgs = page.locator("svg")
    assert svgs.count() == 1 + 4 + 3 + 1 + 1
    for i in range(svgs.count()):
        box = svgs.nth(i).bounding_box()
        assert box and box["width"] > 150 and box["height"] > 100
    assert page.locator("#gap svg text", has_text="probe").count() == 1
    # Gallery: oracle has no failure; the others show min(failures, GALLERY) decoded images.
    expected = sum(min(_failed(report_inputs, r), GALLERY) for r in RUNS)
    images = page.locator("#gallery img")
    assert images.count() == expected == page.locator("#gallery article.card").count()
    assert page.evaluate("Array.from(document.images).every(i => i.complete && "
                         "i.naturalWidth >= 300 && i.currentSrc.startsWith('data:image/png'))")
    for planted in report_inputs.planted.values():  # the probe's 5 failures are all shown
        assert page.locator(f'article[data-item="{planted}"]').count() >= 1
    # Tables carry the evaluator's numbers with intervals.
    row = page.locator("#table2 tr", has_text="probe").inner_text()
    assert re.search(r"\d+\.\d\s+\[\d+\.\d, \d+\.\d\]", row)
    # Each interval carries the scenes behind it and its design effect (mini: effective-n).
    assert re.search(r"\d+ scenes · deff \d+\.\d", page.locator("#table1").inner_text())
    assert "†" in page.locator("#table2").inner_text()
    # The comparison: 4 models, 6 pairwise claims (Holm), the resolution stated.
    tables = page.locator("#compare table")
    assert tables.count() == 2
    assert tables.nth(0).locator("tbody tr").count() == 4
    assert tables.nth(1).locator("tbody tr").count() == 6
    resolution = page.locator("#compare .finding").inner_text()
    assert "minimum detectable difference per pair is" in resolution
    assert "Holm step-down" in resolution and "over 6 pairs" in resolution
    assert page.locator("#bridges table").count() == 2


def test_an_injected_script_in_an_answer_stays_visible_text(report, report_inputs, page,
                                                            page_log) -> None:
    page.goto(report.as_uri(), wait_until="load")
    card = page.locator(f'article[data-item="{report_inputs.planted["injection"]}"]')
    raw = card.locator("pre.raw")
    assert raw.inner_text() == INJECTION and raw.is_visible()
    assert page.evaluate("typeof window.__rosePwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 0
    assert page.locator("img[onerror], #bold").count() == 0
    assert "Clicked excluded/outside target" in page.locator(
        f'article[data-item="{report_inputs.planted["outside_target"]}"] .tag').all_inner_texts()
    assert page_log.console_errors == []


def test_csp_forbids_scripts_and_network(report, page) -> None:
    page.goto(report.as_uri())
    meta = page.locator('meta[http-equiv="Content-Security-Policy"]')
    assert meta.get_attribute("content") == CONTENT_SECURITY_POLICY
    text = report.read_text(encoding="utf-8")
    assert text.index("Content-Security-Policy") < text.index("<style>")
    assert "script-src 'none'" in CONTENT_SECURITY_POLICY
    assert "connect-src 'none'" in CONTENT_SECURITY_POLICY
    assert not re.search(r"""(?:src|href)=["'](?!data:|#)""", text)
    ids = re.findall(r'\sid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # several SVGs on one page never share an id


def test_same_inputs_give_the_same_bytes(report, report_inputs, tmp_path) -> None:
    again = tmp_path / "again.html"
    done = subprocess.run([sys.executable, "-m", "rose_eval.cli.eval", *_args(report_inputs, again)],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert again.read_bytes() == report.read_bytes()
    other_seed = tmp_path / "seed.html"
    args = _args(report_inputs, other_seed)
    args[args.index("--seed") + 1] = "6"
    assert main(args) == 0 and other_seed.read_bytes() != report.read_bytes()


def test_one_model_without_a_release_still_renders(report_inputs, tmp_path, page,
                                                   page_log) -> None:
    out = tmp_path / "one.html"
    assert main(["report", str(report_inputs.eval_dirs["random"]), "--out", str(out),
                 "--gallery", "3"]) == 0  # the summary's recorded metadata path finds the release
    page.goto(out.as_uri())
    assert page.locator("#compare").inner_text().endswith("One run: nothing to compare.")
    assert page.locator("#gallery img").count() == 3
    assert page_log.console_errors == []


def test_the_report_file_has_the_mode_of_an_ordinary_file(report_inputs, tmp_path) -> None:
    out = tmp_path / "mode.html"
    previous = os.umask(0o022)
    try:
        assert main(["report", str(report_inputs.eval_dirs["random"]), "--out", str(out),
                     "--gallery", "0"]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["mode.html"]


def _fails(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("rose-eval report: error: ")
    return err


def test_bad_input_is_one_line_and_writes_nothing(report_inputs, tmp_path, capsys) -> None:
    out = tmp_path / "r.html"
    good = str(report_inputs.eval_dirs["cv"])
    assert "not a directory" in _fails(["report", str(tmp_path / "nope"), "--out", str(out)],
                                       capsys)
    assert "per_item_eval.jsonl: missing" in _fails(["report", str(tmp_path), "--out", str(out)],
                                                    capsys)
    assert "--dataset_root" in _fails(["report", good, "--out", str(out), "--dataset_root",
                                       str(tmp_path / "none")], capsys)
    assert "metadata_test.jsonl" in _fails(["report", good, "--out", str(out), "--dataset_root",
                                            str(tmp_path)], capsys)
    assert "--gallery" in _fails(["report", good, "--out", str(out), "--gallery", "-1"], capsys)
    assert "--out" in _fails(["report", good], capsys)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_missing_matplotlib_names_the_extra(report_inputs, tmp_path) -> None:
    out = tmp_path / "r.html"
    code = ("import sys; sys.modules['matplotlib'] = None; from rose_eval.cli.eval import main; "
            f"sys.exit(main(['report', {str(report_inputs.eval_dirs['cv'])!r}, '--out', "
            f"{str(out)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "rose-eval report: error: matplotlib is not installed; install the report extra: "
        "pip install 'rose-toolkit[report]' (environment)")
    assert not out.exists()


def test_a_summary_without_analyses_renders_points_only(report_inputs, tmp_path, page,
                                                        page_log) -> None:
    bare = tmp_path / "bare"
    assert main(["--dataset_root", str(report_inputs.release), "--predictions",
                 str(report_inputs.release.parent / "random.jsonl"), "--out_dir", str(bare),
                 "--no_analyses"]) == 0
    out = tmp_path / "bare.html"
    assert main(["report", str(bare), "--out", str(out), "--gallery", "2"]) == 0
    page.goto(out.as_uri())
    assert page_log.console_errors == [] and page_log.page_errors == []
    assert page.locator("#table1 td .ci").count() == 0  # no bootstrap: no intervals
    assert page.locator("#table1 td .pt").count() == 5 + 3
    assert "No perception-to-action analysis" in page.locator("#gap").inner_text()
    assert page.locator(".finding").count() == 0
    assert page.locator("#gallery img").count() == 2


def test_a_hostile_model_name_is_text_in_tables_and_figures(report_inputs, tmp_path, page,
                                                            page_log) -> None:
    name = "<i>$x^2$</i> & co"
    evaluated = tmp_path / "named"
    assert main(["--dataset_root", str(report_inputs.release), "--predictions",
                 str(report_inputs.release.parent / "random.jsonl"), "--out_dir",
                 str(evaluated), "--display_name", name, "--n_boot", "50"]) == 0
    out = tmp_path / "named.html"
    assert main(["report", str(evaluated), str(report_inputs.eval_dirs["oracle"]), "--out",
                 str(out), "--gallery", "1", "--n_boot", "50"]) == 0
    page.goto(out.as_uri())
    assert page_log.console_errors == [] and page.locator("main i").count() == 0
    assert page.locator("#table2 tbody th").first.inner_text() == name
    assert page.locator("#gap svg text", has_text="$x^2$").count() == 1  # no mathtext
