"""A new subset from outside the package: discovered by entry point, generated, verified, evaluated.

The example package ``rose_latin_example`` (next to this file) is made discoverable the way
an installed package is: a real ``*.dist-info`` (METADATA + entry_points.txt) in a temporary
folder on PYTHONPATH. Nothing in rose_gen names it; the commands run as subprocesses so
the discovery is the real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent
CONF = PLUGINS / "rose_latin_example" / "conf"
BIN = Path(sys.executable).parent
SUBSET = "ROSE-LatinConfusables"


def _dist_info(site: Path) -> None:
    info = site / "rose_latin_example-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rose-latin-example\nVersion: 0.1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[rose_gen.sources]\nlatin_confusables = rose_latin_example:SOURCE\n",
                                           encoding="utf-8")


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    tool = BIN / args[0]
    cmd = [str(tool), *args[1:]] if tool.exists() else [sys.executable, "-m", _MODULES[args[0]], *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(REPO), timeout=300)


_MODULES = {"rose-gen": "rose_gen.cli.gen", "rose-run": "rose_eval.cli.run", "rose-eval": "rose_eval.cli.eval",
            "rose-verify": "rose_gen.cli.verify"}


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("site")
    _dist_info(site)
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(site), str(PLUGINS), str(REPO)])
    return out


def _generate(env, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return _run(env, "rose-gen", f"hydra.searchpath=[file://{CONF}]", "+rose_plugin=latin_confusables",
                "subsets=[latin_confusables]", f"output_dir={out}", "progress=false", *extra)


def test_plugin_subset_generates_verifies_and_evaluates(env, tmp_path) -> None:
    release = tmp_path / "release"
    gen = _generate(env, release)
    assert gen.returncode == 0, gen.stderr
    rows = [json.loads(line) for line in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and {r["rose_subset"] for r in rows} == {SUBSET}
    assert rows[0]["item_id"].startswith("LATITEM_") and rows[0]["primitive_type"] == "LATIN_CONFUSABLE"
    assert {r["font_name"] for r in rows} == {"DejaVuSans"}
    pairs = {frozenset((r["background_char"], r["target_char"])) for r in rows}
    assert pairs <= {frozenset(p) for p in (("rn", "m"), ("cl", "d"), ("O", "0"), ("l", "1"), ("I", "l"),
                                            ("vv", "w"), ("5", "S"), ("8", "B"), ("2", "Z"), ("6", "b"),
                                            ("g", "q"), ("u", "v"), ("E", "F"), ("C", "G"), ("P", "R"),
                                            ("Q", "O"), ("h", "n"), ("i", "j"), ("c", "e"), ("o", "a"),
                                            ("k", "x"), ("K", "X"), ("M", "N"), ("V", "Y"))}
    assert (release / "images" / SUBSET).is_dir() and (release / "data" / "test.parquet").is_file()
    summary = json.loads((release / "export_summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["subset"]["latin_confusables"]["source"] == "latin_confusables"
    # The plug-in subset is counted like a built-in one.
    n_test_scenes = len({r["scene_id"] for r in rows})
    assert summary["counts"]["scenes"][SUBSET]["test"] == n_test_scenes
    assert summary["counts"]["tasks"][SUBSET]["test"]["T1_COUNT_GLOBAL"] == n_test_scenes

    verify = _run(env, "rose-verify", str(release))
    assert verify.returncode == 0, verify.stdout + verify.stderr

    preds = tmp_path / "oracle.jsonl"
    answered = _run(env, "rose-run", "--dataset_root", str(release), "--split", "test", "--solver", "oracle",
                    "--subsets", SUBSET, "--output", str(preds), "--no_progress")
    assert answered.returncode == 0, answered.stderr
    evaluated = _run(env, "rose-eval", "--predictions", str(preds), "--dataset_root", str(release), "--split", "test",
                     "--out_dir", str(tmp_path / "eval"), "--no_analyses")
    assert evaluated.returncode == 0, evaluated.stderr
    items = [json.loads(line) for line in (tmp_path / "eval" / "per_item_eval.jsonl").read_text().splitlines()]
    assert len(items) == len(rows) and {i["rose_subset"] for i in items} == {SUBSET}
    assert all(i["pass"] == 1 for i in items)
    overall = json.loads((tmp_path / "eval" / "evaluation_summary.json").read_text(encoding="utf-8"))["overall"]
    assert overall["n"] == len(rows) and overall["pass_rate"] == 1.0


def test_without_the_dist_info_the_source_is_unknown(tmp_path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PLUGINS), str(REPO)])
    gen = _generate(env, tmp_path / "release")
    assert gen.returncode == 2 and "latin_confusables" in gen.stderr
    assert gen.stderr.count("\n") == 1 and not (tmp_path / "release").exists()


def test_plugin_subset_takes_a_difficulty_preset(env, tmp_path) -> None:
    release = tmp_path / "hard"
    gen = _generate(env, release, "difficulty=hard", "subset.latin_confusables.scenes=3",
                    "subset.latin_confusables.dev_scenes=1", "export.parquet=false")
    assert gen.returncode == 0, gen.stderr
    rows = [json.loads(line) for line in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["difficulty_preset"]["name"] for r in rows} == {"hard"}
    assert {r["difficulty_preset"]["band_applied"] for r in rows} == {False}  # the source gives no similarity
