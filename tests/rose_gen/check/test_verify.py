"""rose-verify: a clean release passes; tampering, broken invariants and drift are named."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from rose_gen.check.verify import row_problems, verify_release
from rose_gen.cli.verify import main
from rose_gen.release.config import load_config
from rose_gen.release.folder import SUMMARY_FILE, sha256_path
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "release"
    generate_release(load_config([f"output_dir={out}", "progress=false", *latin_overrides(scenes=2)]))
    return out


@pytest.fixture
def copy(clean, tmp_path) -> Path:
    dst = tmp_path / "release"
    shutil.copytree(clean, dst)
    return dst


def _summary(root: Path) -> dict:
    return json.loads((root / SUMMARY_FILE).read_text(encoding="utf-8"))


def _save_summary(root: Path, summary: dict) -> None:
    (root / SUMMARY_FILE).write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _first_image(root: Path) -> str:
    return sorted(p.relative_to(root).as_posix() for p in (root / "images").rglob("*.png"))[0]


def test_clean_release_passes_with_every_scene_rerendered(clean, capsys) -> None:
    report = verify_release(clean, rerender="all")
    assert report.ok, report.problems
    assert report.rerendered == 10 and report.images == 20 and report.rows == 10 * 7
    assert main([str(clean), "--rerender", "none"]) == 0
    assert "rose-verify: OK" in capsys.readouterr().err


def test_a_changed_file_is_named(copy) -> None:
    rel = _first_image(copy)
    with open(copy / rel, "ab") as fh:
        fh.write(b"x")
    problems = verify_release(copy, rerender="none").problems
    assert f"{rel}: sha256 differs from export_summary.json (the file changed after export)" in problems


def test_broken_invariants_and_rederivation_are_reported(copy, capsys) -> None:
    path = copy / "metadata_test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["ground_truth_count"] += 1
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    summary = _summary(copy)
    summary["files"]["metadata_test.jsonl"] = sha256_path(path)
    _save_summary(copy, summary)
    problems = verify_release(copy, rerender="none").problems
    item = rows[0]["item_id"]
    assert any(p.startswith(f"metadata_test.jsonl line 1 ({item}): ground_truth_count is") for p in problems)
    assert any("differs from the re-derived row in ground_truth_count" in p for p in problems)
    assert main([str(copy), "--rerender", "none"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("rose-verify: FAILED:") and all(ln.startswith("rose-verify: ") for ln in lines)


@pytest.mark.parametrize(("tail", "what"), [(b"\xff\xfe\n", "undecodable bytes"),
                                           (b"[1, 2]\n", "expected a JSON object, got an array")])
def test_unreadable_metadata_line_is_a_reported_problem_not_a_crash(copy, capsys, tail, what) -> None:
    path = copy / "metadata_test.jsonl"
    n_lines = len(path.read_bytes().splitlines())
    with open(path, "ab") as fh:
        fh.write(tail)
    assert main([str(copy), "--rerender", "none"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert any(f"metadata_test.jsonl:{n_lines + 1}: {what}" in ln for ln in lines)
    assert lines[-1].startswith("rose-verify: FAILED:") and all(ln.startswith("rose-verify: ") for ln in lines)


def _swap_first_image_bytes(root: Path) -> str:
    """Re-encode the first image losslessly at another zlib level, as another Pillow might."""
    rel = _first_image(root)
    with Image.open(root / rel) as im:
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=9)
    (root / rel).write_bytes(buf.getvalue())
    return rel


def test_rerender_mismatch_blames_changed_library_versions(copy) -> None:
    rel = _swap_first_image_bytes(copy)
    summary = _summary(copy)
    summary["files"][rel] = sha256_path(copy / rel)
    summary["versions"]["pillow"] = "0.0.1"
    _save_summary(copy, summary)
    problems = verify_release(copy, rerender="sample").problems
    assert f"{rel}: re-rendered image differs from the recorded sha256" in problems
    assert any(p.startswith("re-rendered images differ: renderer/library versions changed (pillow 0.0.1 -> ")
               for p in problems), problems


def test_rerender_mismatch_blames_changed_assets_first(copy) -> None:
    rel = _swap_first_image_bytes(copy)
    summary = _summary(copy)
    summary["files"][rel] = sha256_path(copy / rel)
    font = next(iter(summary["assets"]["latin_test"]))
    summary["assets"]["latin_test"][font] = "0" * 64
    _save_summary(copy, summary)
    problems = verify_release(copy, rerender="sample").problems
    assert any(p.startswith("re-rendered images differ: asset checksums changed (latin_test: 1 asset file(s)")
               for p in problems), problems


def test_not_a_release_is_a_usage_error(tmp_path, capsys) -> None:
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"rose-verify: error: {tmp_path} has no export_summary.json; it is not a ROSE release"]


def test_row_invariants_catch_wrong_gold_and_case() -> None:
    row = {"rows": 4, "cols": 5, "cell_size": 10, "target_cells": [[2, 2], [4, 5]], "region_type": "EXCLUSION",
           "region_params": {"exclude_type": "ROW_RANGE", "exclude_params": {"r1": 1, "r2": 2}},
           "task_mode": "CLICK_COUNT", "all_target_cells": ["R2,C2", "R4,C5"], "region_target_cells": ["R4,C5"],
           "ground_truth_clicks": ["R4,C5"], "ground_truth_count": 1, "region_target_count": 1,
           "global_target_count": 2, "region_cell_count": 10, "region_non_target_count": 9,
           "num_out_region_targets": 1, "region_ratio": 0.5, "ground_truth_formal_answer": "CLICK(R4,C5); SUBMIT(1)",
           "answer": "CLICK(R4,C5); SUBMIT(1)", "prompt_global": "g\n", "prompt_local": "l", "prompt": "g\n\nl",
           "image_width": 50, "image_height": 40, "rose_subset": "S", "image_id": "I", "image": "images/S/I.png",
           "region_case": "partial"}
    assert row_problems(row) == []
    assert row_problems({**row, "region_case": "fallback_zero_wanted_all"}) == [
        "region_case 'fallback_zero_wanted_all' but the region holds 1 of 2 targets (partial)"]
    assert row_problems({**row, "ground_truth_clicks": []}) == ["ground_truth_clicks is [], expected ['R4,C5']"]
    assert row_problems({**row, "ground_truth_formal_answer": "CLICK(R4,C5); DONE"}) == [
        "ground_truth_formal_answer is 'CLICK(R4,C5); DONE', expected 'CLICK(R4,C5); SUBMIT(1)'",
        "answer is 'CLICK(R4,C5); SUBMIT(1)', expected 'CLICK(R4,C5); DONE'"]
