"""The one atomic writer: whole files or none, and the modes a plain open() would give."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rose_eval.atomic import atomic_output, write_atomic


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for the test; the previous one is restored after."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    try:
        yield set_mask
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    target = tmp_path / "new.json"
    write_atomic(target, "{}\n")
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert mode(target) == expected


def test_replacing_a_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "shared.html"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and mode(target) == 0o640


def test_a_failure_mid_write_keeps_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "preds.jsonl"
    target.write_text("kept\n", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_output(target) as handle:
        handle.write("half a fi")
        raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["preds.jsonl"]


def test_ctrl_c_mid_write_leaves_nothing_new(tmp_path):
    target = tmp_path / "sub" / "out.tsv"
    with pytest.raises(KeyboardInterrupt), atomic_output(target, "w", newline="") as handle:
        handle.write("a\tb\r\n")
        raise KeyboardInterrupt
    assert not target.exists() and list((tmp_path / "sub").iterdir()) == []


def test_text_options_reach_the_file(tmp_path):
    target = tmp_path / "t.tsv"
    with atomic_output(target, "w", encoding="utf-8", newline="") as handle:
        handle.write("é\r\n")
    assert target.read_bytes() == "é\r\n".encode()
    with pytest.raises(ValueError, match="mode"), atomic_output(target, "a"):
        pass


def test_a_directory_at_the_target_is_an_oserror_and_leaves_nothing(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError):
        write_atomic(tmp_path / "out", "x")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_symlink_at_the_target_is_replaced_not_written_through(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("real", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "new"
    assert real.read_text(encoding="utf-8") == "real"
