"""`rose-eval power`: the plan printed, the rose-gen line that makes exactly that many scenes
(checked by generating it), the release's recorded config, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rose_eval.cli.power import SUBSET_KEYS, main
from rose_eval.vocab import SUBSET_ORDER
from tests.rose_eval.analyses.factory import scene

REPO = Path(__file__).resolve().parents[3]


def _eval_dir(tmp_path: Path, name: str, counts: list[list[int]], *, release: Path | None,
              split: str = "test") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    rows = []
    for s, subset in enumerate(SUBSET_ORDER[:len(counts)]):
        for c, passed in enumerate(counts[s]):
            for row in scene(subset, f"{subset}-{c}", tuple([1] * passed + [0] * (5 - passed))):
                rows.append({**row, "model": name})
    (folder / "per_item_eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"split": split, "metadata_jsonl": str(release / f"metadata_{split}.jsonl")
               if release else ""}
    (folder / "evaluation_summary.json").write_text(json.dumps(summary))
    return folder


def _release(tmp_path: Path) -> Path:
    root = tmp_path / "release"
    root.mkdir()
    config = {"profile_name": "mini", "seed": 7, "difficulty": {"name": "hard"},
              "subset": {"glyph": {"name": SUBSET_ORDER[0], "scenes": 10, "dev_scenes": 3},
                         "emoji_style": {"name": SUBSET_ORDER[1], "scenes": 10, "dev_scenes": 4},
                         "pixel_edit": {"name": SUBSET_ORDER[3], "scenes": 10, "dev_scenes": 2}}}
    (root / "export_summary.json").write_text(json.dumps({"config": config}))
    (root / "metadata_test.jsonl").write_text("")
    return root


def _counts(seed: int, subsets: int = 2, scenes: int = 30) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(x) for x in rng.binomial(5, rng.random(scenes))] for _ in range(subsets)]


def test_the_command_prints_the_plan_and_the_rose_gen_line(tmp_path, capsys) -> None:
    release = _release(tmp_path)
    a = _eval_dir(tmp_path, "a", _counts(1), release=release)
    out = tmp_path / "plan.json"
    assert main([str(a), "--delta", "10", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    record = json.loads(out.read_text())
    n = record["plan"]["scenes_per_subset"]
    assert f"**{n:,} scenes per subset**" in text
    assert "Minimum detectable difference now" in text and "| ChineseGlyph |" in text
    # The scored split is test: scenes = n + the recorded dev scenes, dev kept; a fresh seed;
    # the pilot covered two of the three recorded subsets, so subsets= restricts to them.
    assert record["rose_gen"] == (
        f"rose-gen profile=mini difficulty=hard seed=8 output_dir=out/rose_{n}_scenes "
        f"subset.glyph.scenes={n + 3} subset.glyph.dev_scenes=3 "
        f"subset.emoji_style.scenes={n + 4} subset.emoji_style.dev_scenes=4 "
        "subsets=[glyph,emoji_style]")
    assert record["rose_gen"] in text


def test_a_dev_pilot_sets_the_dev_scenes(tmp_path, capsys) -> None:
    release = _release(tmp_path)
    a = _eval_dir(tmp_path, "a", _counts(2, subsets=1), release=release, split="dev")
    b = _eval_dir(tmp_path, "b", _counts(3, subsets=1), release=release, split="dev")
    out = tmp_path / "plan.json"
    assert main([str(a), str(b), "--out", str(out), "--output_dir", "out/x"]) == 0
    record = json.loads(out.read_text())
    n = record["plan"]["scenes_per_subset"]
    assert record["plan"]["paired"] is True
    assert (f"subset.glyph.scenes={n + 7} subset.glyph.dev_scenes={n} subsets=[glyph]"
            in record["rose_gen"])
    assert "A - B" in capsys.readouterr().out


def test_stated_rates_need_no_pilot(capsys) -> None:
    assert main(["--rate", "60", "--rate_b", "55", "--correlation", "0.5", "--icc", "0.3",
                 "--delta", "5", "--subsets", "glyph,pixel_edit", "--dev_scenes", "2"]) == 0
    text = capsys.readouterr().out
    assert "No pilot: stated rate 60.0 % and 55.0 %" in text
    assert "subset.glyph.dev_scenes=2" in text and "subset.pixel_edit.scenes=" in text
    assert "MDD now" not in text


@pytest.mark.parametrize(("argv", "message"), [
    ([], "nothing to plan from"),
    (["--rate", "120"], "must be from 0 to 100"),
    (["--rate", "50", "--delta", "0"], "delta must be above 0"),
    (["--rate", "50", "--alpha", "1.5"], "must lie in (0, 1)"),
    (["--rate", "50", "--icc", "2"], "must lie in [0, 1]"),
    (["--rate_b", "50"], "--rate_b needs --rate"),
    (["x", "y", "z"], "3 EVAL_DIRs given"),
    (["--rate", "50", "--metric", "F1"], "invalid choice"),
    (["no_such_dir"], "not a directory"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-eval power: error:") and message in err


def test_runs_on_different_items_are_refused(tmp_path, capsys) -> None:
    a = _eval_dir(tmp_path, "a", _counts(1), release=None)
    b = _eval_dir(tmp_path, "b", _counts(1, scenes=29), release=None)
    assert main([str(a), str(b)]) == 2
    assert "item set differs" in capsys.readouterr().err


def test_subset_keys_are_the_generators() -> None:
    import yaml

    names = {}
    for path in (REPO / "conf" / "subset").glob("*.yaml"):
        names[yaml.safe_load(path.read_text())["name"]] = path.stem
    assert names == SUBSET_KEYS


def test_the_suggested_line_makes_exactly_that_many_scenes(mini_release, tmp_path, capsys,
                                                            monkeypatch):
    """End to end: baselines on a generated release, the plan, then rose-gen with the
    suggested overrides (plus the test sources the pilot release was made with)."""
    import tqdm

    # rose-run's progress bar would leave tqdm's monitor thread running for the rest of the
    # session, and the bootstrap helper (test_worker) refuses to fork beside other threads.
    monkeypatch.setattr(tqdm.tqdm, "monitor_interval", 0)
    from rose_eval.cli.eval import main as rose_eval_main
    from rose_eval.cli.run import main as rose_run_main
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    evals = []
    for solver in ("random", "oracle"):
        predictions = tmp_path / f"{solver}.jsonl"
        assert rose_run_main(["--dataset_root", str(mini_release), "--split", "test",
                              "--solver", solver, "--output", str(predictions)]) == 0
        evals.append(tmp_path / f"eval_{solver}")
        assert rose_eval_main(["--dataset_root", str(mini_release), "--predictions",
                               str(predictions), "--out_dir", str(evals[-1]), "--n_boot", "50"]) == 0
    out = tmp_path / "plan.json"
    capsys.readouterr()
    assert main([str(evals[0]), "--delta", "45", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    n = record["plan"]["scenes_per_subset"]
    words = record["rose_gen"].split()
    assert words[0] == "rose-gen" and 2 <= n <= 12
    release = tmp_path / "planned"
    overrides = [w for w in words[1:] if not w.startswith("output_dir=")]
    sources = [o for o in latin_overrides(scenes=1, dev=1)
               if ".scenes=" not in o and ".dev_scenes=" not in o]
    generate_release(load_config([*overrides, *sources, f"output_dir={release}",
                                  "progress=false"]))
    test_rows = [json.loads(line) for line in (release / "metadata_test.jsonl").read_text().splitlines()]
    per_subset: dict[str, set[str]] = {}
    for row in test_rows:
        per_subset.setdefault(row["rose_subset"], set()).add(row["scene_id"])
    assert {s: len(ids) for s, ids in per_subset.items()} == dict.fromkeys(SUBSET_ORDER, n)


def test_stated_rates_take_the_keys_from_a_given_release(tmp_path, capsys) -> None:
    release = _release(tmp_path)
    assert main(["--rate", "50", "--delta", "10", "--subsets", "glyph", "--dataset_root",
                 str(release)]) == 0
    text = capsys.readouterr().out
    assert "rose-gen profile=mini difficulty=hard seed=8 " in text
    assert "subset.glyph.dev_scenes=3 subsets=[glyph]" in text
    assert "unknown" not in text
    assert main(["--rate", "50", "--dataset_root", str(tmp_path)]) == 2
    assert "no export_summary.json" in capsys.readouterr().err
