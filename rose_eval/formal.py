"""Build formal answers in the ROSE protocol from cells and a count (the inverse of protocol.py).

``COUNT(n)``; ``CLICK(R1,C2); CLICK(R3,C4); DONE`` (``DONE`` alone without clicks);
``CLICK(R1,C2); SUBMIT(n)`` (``SUBMIT(n)`` alone without clicks). Clicks are written in
(row, col) order, one per distinct cell, the way the gold answers are written.
"""

from __future__ import annotations

from collections.abc import Iterable

Cell = tuple[int, int]


class FormalAnswerError(ValueError):
    """The parts cannot make an answer in the requested mode (one-line message)."""


def count_text(n: int) -> str:
    """``COUNT(n)``."""
    return f"COUNT({int(n)})"


def click_tokens(cells: Iterable[Cell]) -> list[str]:
    """``CLICK(Rr,Cc)`` for each distinct cell, in (row, col) order."""
    return [f"CLICK(R{r},C{c})" for r, c in sorted({(int(r), int(c)) for r, c in cells})]


def formal_answer(task_mode: str, cells: Iterable[Cell] = (), count: int | None = None) -> str:
    """The protocol string of an answer in ``task_mode`` (COUNT, CLICK or CLICK_COUNT).

    COUNT needs ``count`` and ignores cells; CLICK ignores ``count``; CLICK_COUNT needs
    ``count`` (the submitted number, which need not equal the number of clicks).
    """
    if task_mode == "COUNT":
        if count is None:
            raise FormalAnswerError("a COUNT answer needs a count")
        return count_text(count)
    if task_mode == "CLICK":
        return "; ".join([*click_tokens(cells), "DONE"])
    if task_mode == "CLICK_COUNT":
        if count is None:
            raise FormalAnswerError("a CLICK_COUNT answer needs the submitted count")
        return "; ".join([*click_tokens(cells), f"SUBMIT({int(count)})"])
    raise FormalAnswerError(f"unknown task mode {task_mode!r}; expected COUNT, CLICK or CLICK_COUNT")
