"""Balanced answers: uniform counts per template, blind regions, zero-exception scenes, v0_1 untouched."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rose_eval.answer_prior import fit_prior, guess_for, prompt_key
from rose_gen.check.verify import verify_release
from rose_gen.release.config import ConfigError, load_config
from rose_gen.release.pipeline import generate_release
from rose_gen.scene.balance import BalanceSpec, balanced_scene, coupling
from rose_gen.scene.regions import RegionSizes, region_mask
from tests.fixtures.latin_source import latin_overrides

KINDS = (("ROW_RANGE", "ROW_RANGE"), ("COL_RANGE", "COL_RANGE"), ("VISUAL_REGION", "RECTANGLE"),
         ("EXCLUSION", "RECTANGLE"))


@pytest.mark.parametrize(("max_count", "local_max"), [(5, 3), (8, 4), (3, 2), (2, 0)])
def test_coupling_has_uniform_margins_and_never_exceeds_n(max_count, local_max):
    table = np.array(coupling(max_count, local_max))
    assert table.shape == (max_count + 1, local_max + 1)
    assert np.allclose(table.sum(axis=1), 1)
    assert np.allclose(table.mean(axis=0), 1 / (local_max + 1))  # n uniform: margin of m
    assert all(table[n, m] == 0 for n in range(max_count + 1) for m in range(local_max + 1) if m > n)


def test_scenes_hold_the_drawn_counts_and_answers_are_uniform():
    spec = BalanceSpec(max_count=5, local_max=3)
    totals: Counter[int] = Counter()
    local: list[Counter[int]] = [Counter() for _ in KINDS]
    zero_scenes = 0
    for seed in range(600):
        rng = np.random.default_rng(seed)
        rows, cols = 8 + seed % 5, 8 + seed % 7
        targets, regions = balanced_scene(rng, spec, rows, cols, KINDS, RegionSizes())
        assert len(set(targets)) == len(targets) and 2 * len(targets) < rows * cols
        totals[len(targets)] += 1
        zero_scenes += not targets
        for t, region in enumerate(regions):
            mask = region_mask(region.type, region.params, rows, cols)
            inside = sum(bool(mask[r - 1, c - 1]) for r, c in targets)
            local[t][inside] += 1
            expected = "zero" if inside == 0 else "all" if inside == len(targets) else "partial"
            assert region.case == region.wanted_case == expected
            assert inside <= spec.local_max
    assert zero_scenes > 0 and set(totals) == set(range(6))
    assert max(totals.values()) / 600 < 1 / 6 + 0.05  # about 100 each
    for counts in local:
        assert set(counts) == set(range(4))
        assert max(counts.values()) / 600 < 1 / 4 + 0.05


def _rows(root: Path, split: str) -> list[dict]:
    return [json.loads(line) for line in (root / f"metadata_{split}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def balanced(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("balanced") / "release"
    generate_release(load_config([f"output_dir={out}", "progress=false", "profile=balanced", "seed=3",
                                  *latin_overrides(scenes=12, dev=6)]))
    return out


def test_a_balanced_release_verifies_and_has_zero_exception_scenes(balanced):
    report = verify_release(balanced, rerender="sample")
    assert report.ok, report.problems
    rows = _rows(balanced, "dev") + _rows(balanced, "test")
    t1 = [r for r in rows if r["task_template"] == "T1_COUNT_GLOBAL"]
    assert any(r["answer"] == "COUNT(0)" and r["target_cells"] == [] for r in t1)
    answers = {r["answer"] for r in rows}
    assert {"COUNT(0)", "DONE", "SUBMIT(0)"} <= answers
    summary = json.loads((balanced / "export_summary.json").read_text())
    assert summary["config"]["subset"]["glyph"]["balance"] == {"max_count": 5, "local_max": 3}


def test_no_local_answer_is_likelier_than_chance_whatever_the_stated_size():
    """The best blind guess of a region task's count is right 1/(local_max + 1) of the time,
    and the region size a prompt states does not change that."""
    from rose_gen.scene.balance import draw_counts

    rng = np.random.default_rng(0)
    shares = Counter(draw_counts(rng, BalanceSpec(5, 3), 1)[1][0] for _ in range(3000))
    assert max(shares.values()) / 3000 == pytest.approx(0.25, abs=0.03)
    # the prompt's region size says nothing: the same law for every size class
    by_size: dict[int, Counter[int]] = {}
    for seed in range(1600):
        r = np.random.default_rng(seed)
        targets, regions = balanced_scene(r, BalanceSpec(5, 3), 10, 10, KINDS[:1], RegionSizes())
        size = regions[0].params["r2"] - regions[0].params["r1"] + 1
        mask = region_mask("ROW_RANGE", regions[0].params, 10, 10)
        by_size.setdefault(size, Counter())[sum(bool(mask[a - 1, b - 1]) for a, b in targets)] += 1
    for counts in by_size.values():
        assert max(counts.values()) / sum(counts.values()) < 0.25 + 0.08  # ~400 a size: 3.6 sd


def test_prior_on_a_balanced_release_matches_its_key(balanced):
    """Sanity of the fitted prior on a real balanced release: its keys carry the stated sizes."""
    prior = fit_prior(_rows(balanced, "dev"))
    for row in _rows(balanced, "test")[:20]:
        assert prompt_key(row)[0] == row["task_template"]
        assert guess_for(prior, row, row["task_mode"])


def test_v0_1_records_no_balance_and_balance_refuses_presets():
    cfg = load_config(["profile=v0_1", "output_dir=/tmp/x"])
    assert all("balance" not in sub for sub in cfg.recorded["subset"].values())
    assert all("balance" not in plan.to_json() for plan in cfg.plans)
    with pytest.raises(ConfigError, match="balance"):
        load_config(["profile=balanced", "difficulty=hard", "output_dir=/tmp/x"])
    with pytest.raises(ConfigError, match="local_max"):
        load_config(["profile=balanced", "subset.glyph.balance.local_max=5", "output_dir=/tmp/x"])
