"""Shared fixtures of the source tests: the v0.1 reference rows, read in place."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "rose-v0.1" / \
    "matched_local_count_test.jsonl"


@pytest.fixture
def v01_subset_fields() -> Callable[[str], list[str]]:
    """subset -> the names, in order, of a v0.1 row's subset fields (between ``target_cells``
    and ``image_split``) for the first reference row of that subset; skips the test when the
    reference file is absent (call it after the checks that need no reference)."""

    def fields(subset: str) -> list[str]:
        if not REFERENCE.is_file():
            pytest.skip(f"v0.1 reference rows not found at {REFERENCE}")
        with REFERENCE.open(encoding="utf-8") as fh:
            row = next(r for r in map(json.loads, fh) if r["rose_subset"] == subset)
        keys = list(row)
        return keys[keys.index("target_cells") + 1: keys.index("image_split")]

    return fields
