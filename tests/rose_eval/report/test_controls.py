"""The report's interface-controls section in headless Chromium: a generated release with
controls, two runs through rose-run --controls all (the oracle, and the oracle with planted
failures on standard items), their evaluations, the figure and its table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose_eval.cli.eval import main as eval_main
from rose_eval.cli.run import main as run_main
from rose_eval.report.controls import PART_LABEL
from rose_gen.release.config import load_config
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    tmp = tmp_path_factory.mktemp("controls_report")
    release = generate_release(load_config([f"output_dir={tmp / 'release'}", "progress=false", "export=controls",
                                            *latin_overrides(scenes=3, dev=1)])).path
    preds = tmp / "oracle.jsonl"
    assert run_main(["--dataset_root", str(release), "--split", "test", "--solver", "oracle", "--controls", "all",
                     "--output", str(preds), "--no_progress"]) == 0
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    # a "half-blind" run: every other standard item answered wrong, every control item right
    standard = sorted(r["item_id"] for r in rows if "__" not in r["item_id"])
    wrong = set(standard[::2])
    half = tmp / "half.jsonl"
    half.write_text("".join(json.dumps({**r, "model": "half-blind", "raw_text": "COUNT(999)" if r["item_id"] in wrong
                                        else r["raw_text"]}) + "\n" for r in rows))
    results = {}
    for name, path in (("oracle", preds), ("half-blind", half)):
        out = tmp / f"eval_{name}"
        assert eval_main(["--dataset_root", str(release), "--split", "test", "--predictions", str(path),
                          "--out_dir", str(out), "--n_boot", "200"]) == 0
        results[name] = json.loads((out / "evaluation_summary.json").read_text())["analyses"]["interface_controls"]
    html = tmp / "report.html"
    assert eval_main(["report", str(tmp / "eval_oracle"), str(tmp / "eval_half-blind"), "--out", str(html),
                      "--dataset_root", str(release), "--n_boot", "200"]) == 0
    return html, results


def test_the_section_shows_each_models_gap_split_into_parts(report, page, page_log) -> None:
    html, results = report
    page.goto(html.as_uri(), wait_until="load")
    assert page_log.page_errors == [] and page_log.console_errors == []
    section = page.locator("#controls")
    assert section.locator("h2").inner_text() == "Interface controls: where the points are lost"
    svg = section.locator("svg")
    assert svg.count() == 1
    box = svg.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 100
    for label in PART_LABEL.values():  # the legend names every part
        assert section.locator("svg text", has_text=label).count() >= 1
    for name in ("oracle-baseline", "half-blind"):
        assert section.locator("svg text", has_text=name).count() == 1
    half = results["half-blind"]["all"]
    assert half["pass_standard"]["point"] < 60 and half["pass_coords_given"]["point"] == 100.0
    cells = section.locator("tbody tr").nth(1).locator("td").all_inner_texts()
    point = f"{half['lost_to_coordinate_reading']['point']:.1f}"
    assert cells[0] == str(results["half-blind"]["n_paired_items"])
    assert cells[5].replace("\n", " ").startswith(point + " [")  # lost to coordinate reading, with its interval
    assert section.locator("tbody tr").nth(0).locator("td").all_inner_texts()[1].startswith("100.0")
