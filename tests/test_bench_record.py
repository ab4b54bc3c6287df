"""bench/record.py: the records docs/performance.md quotes, and a real bench writing one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from record import RunContext, write_row  # noqa: E402 - the bench folder is not a package

IDLE = RunContext(date="2026-12-03 10:00", load_start=0.1, cores=2, commit="abc1234")
BUSY = RunContext(date="2026-12-03 11:00", load_start=3.0, cores=2, commit="abc1234")


def _rows(path: Path) -> list[list[str]]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_a_run_replaces_its_own_row_and_keeps_the_others(tmp_path: Path):
    record = tmp_path / "x.md"
    write_row(record, "Title", "What it measures.", ["wall s"], "writer a", ["1.0"], IDLE)
    write_row(record, "Title", "What it measures.", ["wall s"], "writer b", ["2.0"], IDLE)
    write_row(record, "Title", "What it measures.", ["wall s"], "writer a", ["3.0"], BUSY)
    rows = _rows(record)
    assert [r[0] for r in rows] == ["writer a", "writer b"]
    assert rows[0] == ["writer a", "2026-12-03 11:00", "3.00 of 2 (shared)", "abc1234", "3.0"]
    assert rows[1][2] == "0.10 of 2 (idle)"
    assert record.read_text(encoding="utf-8").startswith("# Title\n\nWhat it measures.\n\n| run |")


def test_a_new_layout_drops_the_old_rows(tmp_path: Path):
    record = tmp_path / "x.md"
    write_row(record, "Title", "Intro.", ["wall s"], "a", ["1.0"], IDLE)
    write_row(record, "Title", "Intro.", ["wall s", "CPU s"], "b", ["1.0", "2.0"], IDLE)
    assert [r[0] for r in _rows(record)] == ["b"]


def test_bad_rows_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="2 values for 1 columns"):
        write_row(tmp_path / "x.md", "T", "Intro.", ["wall s"], "a", ["1", "2"], IDLE)
    with pytest.raises(ValueError, match="headings"):
        write_row(tmp_path / "x.md", "T", "# not an intro", ["wall s"], "a", ["1"], IDLE)
    assert not (tmp_path / "x.md").exists()


def test_a_bench_records_its_figures(tmp_path: Path):
    """A real bench run with --markdown writes a record whose rows are that run's figures."""
    record = tmp_path / "glyph.md"
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_glyph.py"), "--tiles", "3",
                          "--markdown", str(record)], capture_output=True, text=True, cwd=ROOT, check=True)
    rows = _rows(record)
    assert [r[0] for r in rows] == ["42 px cells", "90 px cells", "156 px cells"]
    printed = [ln for ln in out.stdout.splitlines() if ln.startswith("tile")]
    for row, line in zip(rows, printed, strict=True):
        assert f"{row[-2]} ms uncached" in line  # the record holds what the run measured
    assert record.read_text(encoding="utf-8").startswith("# Glyph tiles\n")
