"""rose-audit: a clean standard release has nothing flagged; planted problems are found."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_gen.check.audit import audit_release, default_audit_path, quantiles
from rose_gen.cli.audit import main
from rose_gen.release.config import load_config
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides

GLYPH = "ROSE-ChineseGlyph"


def _release(out: Path, *extra: str, subsets: str = "glyph,pixel_content") -> Path:
    overrides = [f"output_dir={out}", "progress=false", *latin_overrides(scenes=4, small=False),
                 f"subsets=[{subsets}]", *extra]
    return generate_release(load_config(overrides)).path


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    return _release(tmp_path_factory.mktemp("audit") / "release")


@pytest.fixture
def copy(clean, tmp_path) -> Path:
    dst = tmp_path / "release"
    shutil.copytree(clean, dst)
    return dst


def _t1_rows(root: Path) -> list[dict]:
    rows = [json.loads(line) for split in ("dev", "test")
            for line in (root / f"metadata_{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["task_template"] == "T1_COUNT_GLOBAL"]


def _edit_cell(root: Path, row: dict, cell: tuple[int, int], tile: np.ndarray) -> None:
    path = root / row["image"]
    image = np.asarray(Image.open(path).convert("RGB")).copy()
    size = row["cell_size"]
    r, c = cell
    image[(r - 1) * size:r * size, (c - 1) * size:c * size] = tile
    Image.fromarray(image).save(path)


def _cell(root: Path, row: dict, cell: tuple[int, int]) -> np.ndarray:
    image = np.asarray(Image.open(root / row["image"]).convert("RGB"))
    size, (r, c) = row["cell_size"], cell
    return image[(r - 1) * size:r * size, (c - 1) * size:c * size].copy()


def test_standard_release_has_nothing_flagged(clean) -> None:
    record = audit_release(clean)
    assert record["ok"] and record["standard_flagged"] == 0 and record["scenes"] == 8
    glyph = record["subsets"][GLYPH]
    assert glyph["flagged"] == 0 and glyph["majority_mismatch"] == [] and glyph["majority_checked_scenes"] == 4
    assert glyph["distinct"]["pairs"] == 4 and glyph["reused"] == 0 and glyph["distinct"]["faces"] == 1
    assert glyph["exceptions"] == sum(len(r["target_cells"]) for r in _t1_rows(clean) if r["rose_subset"] == GLYPH)
    assert 0 < glyph["similarity"]["measured_ssim"]["max"] < 1
    assert glyph["similarity"]["majority_spread_changed_fraction"]["max"] == 0.0


def test_audit_leaves_the_release_verifiable(copy) -> None:
    from rose_gen.check.verify import verify_release

    files_before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    assert main([str(copy)]) == 0
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == files_before
    assert default_audit_path(copy).is_file() and default_audit_path(copy).parent == copy.parent
    assert verify_release(copy).ok


def test_planted_invisible_exception_is_flagged(copy, capsys) -> None:
    row = next(r for r in _t1_rows(copy) if r["rose_subset"] == GLYPH)
    target = tuple(row["target_cells"][0])
    majority_cell = next((r, c) for r in range(1, row["rows"] + 1) for c in range(1, row["cols"] + 1)
                         if [r, c] not in row["target_cells"])
    tile = _cell(copy, row, majority_cell)
    tile[0, 0] = 255 - tile[0, 0]  # one pixel: a different tile, but not a visible one
    _edit_cell(copy, row, target, tile)
    assert main([str(copy)]) == 1
    out = capsys.readouterr().out
    assert "1 flagged exception(s) (1 in standard scenes)" in out
    # The record rose-audit wrote (audit_release's, one audit for both checks).
    record = json.loads(default_audit_path(copy).read_text(encoding="utf-8"))
    flagged = record["subsets"][GLYPH]["flagged_cells"]
    assert [(f["scene_id"], tuple(f["cell"])) for f in flagged] == [(row["scene_id"], target)]
    assert not record["ok"] and record["standard_flagged"] == 1


@pytest.mark.slow
def test_non_identical_majority_is_a_problem_only_for_standard(copy, tmp_path) -> None:
    row = next(r for r in _t1_rows(copy) if r["rose_subset"] == GLYPH)
    cell = next((r, c) for r in range(1, row["rows"] + 1) for c in range(1, row["cols"] + 1)
                if [r, c] not in row["target_cells"])
    tile = _cell(copy, row, cell)
    tile[1, 1] = 255 - tile[1, 1]
    _edit_cell(copy, row, cell, tile)
    record = audit_release(copy)
    assert record["subsets"][GLYPH]["majority_mismatch"] == [row["scene_id"]] and not record["ok"]
    jittered = _release(tmp_path / "jitter", "difficulty.name=jittery", "difficulty.preset.jitter.max_offset=0.05",
                        "difficulty.preset.jitter.min_scale=0.9", subsets="glyph")
    record = audit_release(jittered)
    assert record["subsets"][GLYPH]["presets"] == {"jittery": 4}
    assert record["subsets"][GLYPH]["majority_checked_scenes"] == 0 and record["standard_majority_mismatch"] == 0
    assert record["subsets"][GLYPH]["similarity"]["majority_spread_changed_fraction"]["max"] > 0


def test_bad_input_is_one_line(tmp_path, capsys) -> None:
    assert main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a directory" in err
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "metadata_test.jsonl").write_text('{"item_id": 1}\nnot json\n', encoding="utf-8")
    assert main([str(tmp_path / "rel")]) == 2
    err = capsys.readouterr().err
    assert "metadata_test.jsonl:2: invalid JSON" in err and err.count("\n") == 1
    assert not default_audit_path(tmp_path / "rel").exists()


def test_quantiles() -> None:
    assert quantiles([]) is None
    assert quantiles([1, 2, 3, 4, 5]) == {"min": 1.0, "p10": 1.4, "median": 3.0, "p90": 4.6, "max": 5.0}


def test_shortcut_figures_are_reported_and_strict_applies_the_standard_limits(tmp_path, capsys) -> None:
    # Latin look-alikes standing in for EmojiStyle: "rn" and "m" differ in size, which the
    # EmojiStyle limit forbids (art-box areas within 5 % for 98 % of exceptions).
    overrides = [f"output_dir={tmp_path / 'rel'}", "progress=false", *latin_overrides(scenes=4, small=False),
                 "subsets=[emoji_style]"]
    root = generate_release(load_config(overrides)).path
    assert main([str(root)]) == 0
    record = json.loads(default_audit_path(root).read_text(encoding="utf-8"))  # the record rose-audit wrote
    figures = record["subsets"]["ROSE-EmojiStyle"]["shortcuts"]
    assert figures["scenes"] == 4 and figures["exceptions"] == record["subsets"]["ROSE-EmojiStyle"]["exceptions"]
    assert figures["art_area_within_5pct"] < 0.98
    assert record["subsets"]["ROSE-EmojiStyle"]["position"]["exceptions"] == figures["exceptions"]
    assert record["ok"] and any("art_area_within_5pct" in b for b in record["standard_limits_broken"])
    assert main([str(root), "--strict"]) == 1
    assert "standard limit exceeded: ROSE-EmojiStyle art_area_within_5pct >= 0.98" in capsys.readouterr().out
