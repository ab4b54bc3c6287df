"""The ``cv`` baseline's reading of the prompt: the answer mode and the asked region (whole
grid, rows, columns, rectangle, exclusion) from the task sentence; :class:`CVError` when
the sentence cannot be read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


class CVError(ValueError):
    """The image or prompt cannot be read as a ROSE item."""


@dataclass(frozen=True)
class Span:
    """Inclusive 1-based row and column bounds; None = unbounded."""

    rows: tuple[int, int] | None = None
    cols: tuple[int, int] | None = None

    def mask(self, n_rows: int, n_cols: int) -> np.ndarray:
        r = np.arange(1, n_rows + 1)[:, None]
        c = np.arange(1, n_cols + 1)[None, :]
        ok = np.ones((n_rows, n_cols), dtype=bool)
        if self.rows is not None:
            ok &= (r >= self.rows[0]) & (r <= self.rows[1])
        if self.cols is not None:
            ok &= (c >= self.cols[0]) & (c <= self.cols[1])
        return ok


@dataclass(frozen=True)
class TaskText:
    """What the prompt sentence asks: answer mode, the region, and an exclusion."""

    mode: str  # COUNT | CLICK | CLICK_COUNT
    include: Span | None  # None = whole grid (or the highlight when highlighted)
    exclude: Span | None
    highlighted: bool


_RECT = re.compile(r"from row ([0-9]+) column ([0-9]+) to row ([0-9]+) column ([0-9]+)", re.I)


_ROWS = re.compile(r"\brows ([0-9]+) to ([0-9]+)", re.I)


_ROW = re.compile(r"\brow ([0-9]+)", re.I)


_COLS = re.compile(r"\bcolumns ([0-9]+) to ([0-9]+)", re.I)


_COL = re.compile(r"\bcolumn ([0-9]+)", re.I)


_EXCLUDING = re.compile(r"excluding (.*?)(?:, then|\.|$)", re.I)


def parse_span(text: str) -> Span | None:
    """The first region phrase in ``text`` as a Span (None when it names none)."""
    if m := _RECT.search(text):
        r1, c1, r2, c2 = (int(x) for x in m.groups())
        return Span(rows=(r1, r2), cols=(c1, c2))
    if m := _ROWS.search(text):
        return Span(rows=(int(m[1]), int(m[2])))
    if m := _COLS.search(text):
        return Span(cols=(int(m[1]), int(m[2])))
    if m := _ROW.search(text):
        return Span(rows=(int(m[1]), int(m[1])))
    if m := _COL.search(text):
        return Span(cols=(int(m[1]), int(m[1])))
    return None


def parse_task(prompt: str) -> TaskText:
    """Read mode and region from the task sentence (prompt_local or the whole prompt)."""
    # Use the last paragraph: the shared preamble lists every answer format.
    sentence = prompt.strip().split("\n")[-1]
    lower = sentence.lower()
    if "submit(" in lower or "then submit" in lower:
        mode = "CLICK_COUNT"
    elif "count(" in lower or lower.startswith("count"):
        mode = "COUNT"
    elif "click" in lower:
        mode = "CLICK"
    else:
        raise CVError(f"cannot tell the answer mode from the prompt: {sentence[:120]!r}")
    excluding = _EXCLUDING.search(sentence)
    exclude = parse_span(excluding[1]) if excluding else None
    if excluding and exclude is None:
        raise CVError(f"cannot read the excluded region from: {excluding[1][:120]!r}")
    highlighted = "highlighted" in lower
    include = None if (highlighted or excluding or "whole grid" in lower) else parse_span(sentence)
    return TaskText(mode=mode, include=include, exclude=exclude, highlighted=highlighted)
