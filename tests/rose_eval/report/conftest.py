"""Report fixtures: a small generated release, four runs on it, their evaluations.

The release comes from the pipeline with the Latin test sources (real rendering, tiny
cells); its bridge rows are appended to the test metadata so the runs score them too
(bridge panels). Runs: the oracle, random, cv and prior baselines through `rose-run`, and a
"probe" run (oracle answers with a few planted failures, one of them an answer carrying
HTML and a script). Each is evaluated by `rose-eval` with a small bootstrap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.cli.run import main as rose_run_main
from rose_gen.release.config import load_config
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides

INJECTION = ('</pre><script>window.__rosePwned = 1</script>'
             '<img src="x" onerror="window.__rosePwned = 2"><b id="bold">not bold</b>')
N_BOOT = "200"


@dataclass(frozen=True)
class ReportInputs:
    """The release, the evaluation folders by run name, and the probe's planted items."""

    release: Path
    eval_dirs: dict[str, Path]
    planted: dict[str, str]  # what was planted -> item_id


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def _probe_predictions(oracle: list[dict], metadata: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """Oracle answers, with one planted failure per kind."""
    by_template: dict[str, list[dict]] = {}
    for row in metadata:
        by_template.setdefault(row["task_template"], []).append(row)
    t4 = next(r for r in by_template["T4_CLICK_VISUAL_REGION"]
              if set(r["all_target_cells"]) - set(r["region_target_cells"]))
    outside = sorted(set(t4["all_target_cells"]) - set(t4["region_target_cells"]))[0]
    t5 = by_template["T5_CLICK_COUNT_EXCLUSION"][0]
    t1 = by_template["T1_COUNT_GLOBAL"][1]
    planted = {
        "injection": by_template["T3_CLICK_LOCAL_NUMERIC"][0]["item_id"],
        "outside_target": t4["item_id"],
        "count_click_mismatch": t5["item_id"],
        "over": t1["item_id"],
        "no_answer": by_template["T2_COUNT_LOCAL_NUMERIC"][0]["item_id"],
    }
    gold_t4 = [f"CLICK({c}); " for c in sorted(t4["ground_truth_clicks"])]
    answers = {
        planted["injection"]: (INJECTION, None),
        planted["outside_target"]: ("".join(gold_t4) + f"CLICK({outside}); DONE", None),
        planted["count_click_mismatch"]: (
            "".join(f"CLICK({c}); " for c in t5["ground_truth_clicks"])
            + f"SUBMIT({t5['ground_truth_count'] + 1})", None),
        planted["over"]: (f"COUNT({t1['ground_truth_count'] + 2})", None),
        planted["no_answer"]: (None, "timeout after 3 retries"),
    }
    out = []
    for row in oracle:
        raw, error = answers.get(row["item_id"], (row["raw_text"], row.get("error")))
        out.append({**row, "model": "probe", "raw_text": raw, "error": error})
    return out, planted


@pytest.fixture(scope="session")
def report_inputs(tmp_path_factory) -> ReportInputs:
    root = tmp_path_factory.mktemp("report")
    release = root / "release"
    generate_release(load_config([f"output_dir={release}", "progress=false",
                                  *latin_overrides(scenes=3, dev=1)]))
    # Bridge rows are scored in the same run as the main rows (as in v0.1's combined files).
    metadata = release / "metadata_test.jsonl"
    rows = _jsonl(metadata)
    for folder in ("global_click", "matched_local_count"):
        rows += _jsonl(release / "analysis" / folder / "metadata_test.jsonl")
    _write_jsonl(metadata, rows)

    predictions: dict[str, Path] = {}
    for solver in ("oracle", "random", "cv", "prior"):
        predictions[solver] = root / f"{solver}.jsonl"
        assert rose_run_main(["--dataset_root", str(release), "--split", "test", "--solver",
                              solver, "--model", f"{solver}-baseline", "--output",
                              str(predictions[solver])]) == 0
    probe, planted = _probe_predictions(_jsonl(predictions["oracle"]), rows)
    predictions["probe"] = root / "probe.jsonl"
    _write_jsonl(predictions["probe"], probe)

    eval_dirs = {}
    for name, path in predictions.items():
        eval_dirs[name] = root / f"eval_{name}"
        assert rose_eval_main(["--dataset_root", str(release), "--split", "test",
                               "--predictions", str(path), "--out_dir", str(eval_dirs[name]),
                               "--n_boot", N_BOOT]) == 0
    return ReportInputs(release, eval_dirs, planted)
