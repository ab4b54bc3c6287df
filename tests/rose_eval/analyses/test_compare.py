"""`rose-eval compare`: paired leaderboard, ranking stability, and one-line input errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from rose_eval.cli.compare import main
from rose_eval.vocab import SUBSET_ORDER
from tests.rose_eval.analyses.factory import scene


def _run(tmp_path: Path, name: str, items: list[dict]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for row in items:
        row["model"] = name
    text = "".join(json.dumps(row) + "\n" for row in items)
    (folder / "per_item_eval.jsonl").write_text(text, encoding="utf-8")
    return folder


def _models(seed: int = 0, n_scenes: int = 25) -> dict[str, list[dict]]:
    """'strong' passes one more item than 'weak' in every scene; 'coin' is a noisy match."""
    rng = np.random.default_rng(seed)
    runs: dict[str, list[dict]] = {"strong": [], "weak": [], "coin": []}
    for subset in SUBSET_ORDER[:3]:
        for k in range(n_scenes):
            base = [int(x) for x in rng.random(5) < 0.4]
            base[rng.integers(5)] = 0
            better = list(base)
            better[base.index(0)] = 1
            coin = [int(x) for x in rng.random(5) < 0.5]
            runs["weak"] += scene(subset, f"{subset}-{k}", tuple(base))
            runs["strong"] += scene(subset, f"{subset}-{k}", tuple(better))
            runs["coin"] += scene(subset, f"{subset}-{k}", tuple(coin))
    return runs


def test_a_model_better_on_every_scene_has_a_positive_paired_difference(tmp_path, capsys):
    runs = _models()
    dirs = [_run(tmp_path, name, items) for name, items in runs.items()]
    out = tmp_path / "cmp" / "compare.json"
    assert main([str(d) for d in dirs] + ["--out", str(out), "--n_boot", "2000", "--seed", "3"]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    board = {row["model"]: row for row in result["leaderboard"]}
    assert result["best"] == "strong" and board["strong"]["rank"] == 1
    weak = board["weak"]
    assert weak["diff_vs_best"]["point"] == pytest.approx(0.2)  # one of five items per scene
    assert weak["diff_vs_best"]["lo"] > 0  # interval excludes 0
    assert weak["share_best_ahead"] == 1.0
    assert board["strong"]["diff_vs_best"] == {"point": 0.0, "lo": 0.0, "hi": 0.0}
    assert board["strong"]["rank_stability"] > board["coin"]["rank_stability"] - 1e-9
    for row in result["leaderboard"]:
        ci = row["table1 Avg. PASS"]
        assert ci["lo"] <= ci["point"] <= ci["hi"]
        assert 0.0 <= row["rank_stability"] <= 1.0
    printed = capsys.readouterr().out
    assert "| 1 | strong |" in printed and "Rank kept" in printed
    # Same seed, same answer; the output is written atomically with no leftovers.
    assert main([str(d) for d in dirs] + ["--out", str(out), "--n_boot", "2000", "--seed", "3"]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert [p.name for p in out.parent.iterdir()] == ["compare.json"]


def test_paired_difference_is_tighter_than_unpaired_intervals(tmp_path):
    runs = _models(seed=1)
    dirs = [_run(tmp_path, name, runs[name]) for name in ("strong", "weak")]
    out = tmp_path / "c.json"
    assert main([str(d) for d in dirs] + ["--out", str(out), "--n_boot", "1000"]) == 0
    board = {r["model"]: r for r in json.loads(out.read_text(encoding="utf-8"))["leaderboard"]}
    diff = board["weak"]["diff_vs_best"]
    single = board["weak"]["table1 Avg. PASS"]
    assert diff["hi"] - diff["lo"] < 0.5 * (single["hi"] - single["lo"])
    # Better on every scene means better on every subsample: both ranks always kept.
    assert board["strong"]["rank_stability"] == board["weak"]["rank_stability"] == 1.0


def _expect_error(capsys, argv: list[str], *fragments: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rose-eval compare: error:"), captured.err
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in captured.err and captured.out == ""


def test_bad_inputs_give_one_clear_line(tmp_path, capsys):
    runs = _models(n_scenes=3)
    good = _run(tmp_path, "strong", runs["strong"])
    _expect_error(capsys, [str(good)], "at least two")
    _expect_error(capsys, [str(good), str(good), "--subsample_fraction", "0"], "subsample_fraction")
    _expect_error(capsys, [str(good), str(tmp_path / "nope")], "nope", "not a directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    _expect_error(capsys, [str(good), str(empty)], "per_item_eval.jsonl", "missing")
    broken = _run(tmp_path, "broken", runs["weak"][:4])
    with (broken / "per_item_eval.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    _expect_error(capsys, [str(good), str(broken)], "per_item_eval.jsonl:5", "invalid JSON")
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "per_item_eval.jsonl").write_text("[1, 2]\n", encoding="utf-8")
    _expect_error(capsys, [str(good), str(listed)], ":1", "JSON object")
    partial = _run(tmp_path, "weak", runs["weak"][:-1])
    out = tmp_path / "never.json"
    _expect_error(capsys, [str(good), str(partial), "--out", str(out)],
                  "item set differs", "1 missing")
    assert not out.exists()
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "per_item_eval.jsonl").write_bytes(b"\xff\xfe\x00bad\n")
    _expect_error(capsys, [str(good), str(binary)], "not UTF-8")


def test_same_model_name_in_two_folders_is_disambiguated(tmp_path, capsys):
    runs = _models(n_scenes=4)
    first = _run(tmp_path, "a", runs["strong"])
    second = _run(tmp_path, "b", runs["weak"])
    for folder in (first, second):
        path = folder / "per_item_eval.jsonl"
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["model"] = "same"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main([str(first), str(second), "--n_boot", "50"]) == 0
    printed = capsys.readouterr().out
    assert "same (a)" in printed and "same (b)" in printed


def test_holm_adjusts_step_down() -> None:
    from rose_eval.analyses.compare import holm

    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 0.04)
    assert holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1; and order-preserving below
    assert holm([]) == []


def _three_close_models(seed: int = 36, n_scenes: int = 30) -> dict[str, list[dict]]:
    """a is 8 points above c, b 3 points above c, every scene shares one ability draw."""
    rng = np.random.default_rng(seed)
    runs: dict[str, list[dict]] = {"a": [], "b": [], "c": []}
    for subset in SUBSET_ORDER[:2]:
        for k in range(n_scenes):
            ability = rng.random()
            for name, shift in (("a", 0.08), ("b", 0.03), ("c", 0.0)):
                passes = tuple(int(x) for x in rng.random(5) < min(1.0, ability + shift))
                runs[name] += scene(subset, f"{subset}-{k}", passes)
    return runs


def test_three_pairwise_claims_are_holm_adjusted_and_say_so(tmp_path, capsys):
    from rose_eval.analyses.compare import holm

    runs = _three_close_models()
    dirs = [_run(tmp_path, name, items) for name, items in runs.items()]
    out = tmp_path / "c.json"
    assert main([str(d) for d in dirs] + ["--out", str(out), "--n_boot", "2000"]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    pairs = result["pairs"]
    assert len(pairs) == 3 and result["family_wise"]["n_claims"] == 3
    assert result["family_wise"]["method"].startswith("Holm")
    raw = [p["p"] for p in pairs]
    assert [p["p_holm"] for p in pairs] == pytest.approx(holm(raw))
    for pair in pairs:  # a claim exactly when the adjusted p-value is at most alpha
        assert (pair["claim"] == f"{pair['a']} ahead") == (pair["p_holm"] <= 0.05)
        # the p-value inverts the paired percentile interval: below 5 % iff it excludes 0
        boot = pair["difference"]["bootstrap"]
        assert (pair["p"] < 0.05) == (boot["lo"] > 0 or boot["hi"] < 0)
    claims = {(p["a"], p["b"]): p for p in pairs}
    # The adjustment matters here: b vs c alone would pass at 5 %, not within the family.
    assert claims[("b", "c")]["p"] <= 0.05 < claims[("b", "c")]["p_holm"]
    assert claims[("b", "c")]["claim"] == "not separated"
    assert claims[("a", "c")]["claim"] == "a ahead"
    # Each pair's minimum detectable difference is stated (at alpha/3, 80 % power) and
    # sits above the difference it cannot separate.
    assert result["family_wise"]["mdd_alpha"] == pytest.approx(0.05 / 3)
    assert claims[("b", "c")]["mdd"] > claims[("b", "c")]["difference"]["point"] > 0
    printed = capsys.readouterr().out
    assert "family-wise error at most 0.05 (Holm step-down on paired-bootstrap p-values" in printed
    assert "| b | c |" in printed and "not separated" in printed


def test_bootstrap_p_value_counts_the_other_side() -> None:
    from rose_eval.analyses.compare import bootstrap_p_value

    draws = np.array([0.1] * 90 + [-0.1] * 9 + [0.0])  # 10 of 100 at or below 0
    assert bootstrap_p_value(draws, 0.05) == pytest.approx(2 * 11 / 101)
    assert bootstrap_p_value(-draws, -0.05) == pytest.approx(2 * 11 / 101)
    assert bootstrap_p_value(draws, 0.0) == 1.0


def test_out_is_written_with_the_mode_of_an_ordinary_file(tmp_path, capsys):
    """compare --out used to leave 0600 (mkstemp's mode); the report 0644 (issue 22)."""
    runs = _models(n_scenes=3)
    dirs = [_run(tmp_path, name, items) for name, items in list(runs.items())[:2]]
    out = tmp_path / "result.json"
    previous = os.umask(0o022)
    try:
        assert main([*map(str, dirs), "--out", str(out), "--n_boot", "20"]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert json.loads(out.read_text(encoding="utf-8"))["leaderboard"]

