"""Replacing an output folder as a whole: the previous set of files, or the new one, never a mix.

The new files are written into a hidden sibling folder; when they are all there, it
takes the output folder's place by rename (the old folder is renamed aside first and
deleted after; if the second rename fails the old one is put back). A failure at any
point leaves the previous folder as it was, or no folder when there was none. Files in
an existing output folder that the new set does not contain (your notes, other reports)
are carried over into the new folder as hard links (copies where links are refused).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _carry_over(old: Path, new: Path) -> None:
    """Bring the entries of ``old`` that ``new`` lacks into ``new`` (links, no data copied)."""
    for entry in old.iterdir():
        target = new / entry.name
        if target.exists() or target.is_symlink():
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
        elif entry.is_dir():
            shutil.copytree(entry, target, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(entry), str(target))


def replace_directory(out_dir: Path, write: Callable[[Path], None]) -> None:
    """Run ``write(staging_folder)`` and make its result ``out_dir`` in one step.

    Raises whatever ``write`` raises (nothing is changed then), NotADirectoryError when
    ``out_dir`` exists and is not a folder, and OSError from the file system.
    """
    parent, name = out_dir.parent, out_dir.name
    parent.mkdir(parents=True, exist_ok=True)
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"{out_dir} exists and is not a directory")
    tag = f"{os.getpid()}.{os.urandom(4).hex()}"
    staging = parent / f".{name}.{tag}.partial"
    retired = parent / f".{name}.{tag}.old"
    staging.mkdir()
    try:
        write(staging)
        if not out_dir.exists():
            os.rename(staging, out_dir)
            return
        _carry_over(out_dir, staging)
        os.rename(out_dir, retired)
        try:
            os.rename(staging, out_dir)
        except BaseException:
            os.rename(retired, out_dir)
            raise
        shutil.rmtree(retired, ignore_errors=True)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
