"""Shared fixtures of the source tests: the shipped v0.1 reference rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.reference import v01_rows


@pytest.fixture
def v01_subset_fields() -> Callable[[str], list[str]]:
    """subset -> the names, in order, of a v0.1 row's subset fields (between ``target_cells``
    and ``image_split``) for the first reference row of that subset."""

    def fields(subset: str) -> list[str]:
        row = next(r for r in v01_rows() if r["rose_subset"] == subset)
        keys = list(row)
        return keys[keys.index("target_cells") + 1: keys.index("image_split")]

    return fields
