"""The interface controls: what each one gives the model, its prompt sentence, the text grid.

A control is a paired counterpart of a main task row (same scene, same region, same gold)
that removes one step between seeing and acting:

- ``coords_given``: the row's image with row and column labels in a margin (coordinate
  reading costs nothing);
- ``exceptions_given``: the labelled image with every exception cell marked (a yellow
  corner tab, :mod:`rose_gen.render.controls`): perception costs nothing, what is left is
  binding the region and executing the protocol;
- ``text_only``: no image; the grid is written in the prompt as a symbol matrix
  (:func:`grid_text`): pure symbolic execution.

The controls are nested (each gives what the one before gives and more), which is what lets
``rose-eval``'s ``interface_controls`` analysis split a model's loss into parts. A control's
``prompt_local`` is its sentence, a newline, then the template's own sentence unchanged;
``prompt_global`` is the protocol text unchanged. Pure: no pixels, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_eval.registry import Registry
from rose_eval.vocab import CONTROL_ORDER

MAJORITY_SYMBOL, EXCEPTION_SYMBOL = "A", "B"

LABELS_SENTENCE = ("The image has row labels R1, R2, ... in a margin on its left and column labels "
                   "C1, C2, ... in a margin on top; use them to name the cells.")
MARKS_SENTENCE = (" Every cell that is different from the majority is marked with a yellow triangle "
                  "with a black edge in its top-left corner.")


@dataclass(frozen=True)
class Control:
    """One interface control: whether it has an image, labels and marks, and its sentence."""

    name: str
    image: bool
    labels: bool
    marks: bool
    sentence: Callable[[Mapping[str, Any]], str]  # source row -> the control's prompt text


CONTROLS: Registry[Control] = Registry("interface control")


def highlighted_cells(row: Mapping[str, Any]) -> set[tuple[int, int]]:
    """The cells inside a cue image's highlighted rectangle (empty for rows on the base image)."""
    if row.get("image_cue_type") in (None, "NONE"):
        return set()
    p = row.get("image_region_params") or {}
    return {(r, c) for r in range(int(p["r1"]), int(p["r2"]) + 1) for c in range(int(p["c1"]), int(p["c2"]) + 1)}


def grid_text(row: Mapping[str, Any]) -> str:
    """The row's grid as a symbol matrix: a header of column names, then one line per row.

    Each cell is :data:`MAJORITY_SYMBOL` or :data:`EXCEPTION_SYMBOL`; a cell of a cue image's
    highlighted region is written in square brackets.
    """
    rows, cols = int(row["rows"]), int(row["cols"])
    targets = {(int(r), int(c)) for r, c in row["target_cells"]}
    lit = highlighted_cells(row)
    width = max(3, len(f"C{cols}"))
    head = max(len(f"R{rows}"), 2)

    def token(r: int, c: int) -> str:
        symbol = EXCEPTION_SYMBOL if (r, c) in targets else MAJORITY_SYMBOL
        return (f"[{symbol}]" if (r, c) in lit else f" {symbol} ").center(width)

    lines = [" " * head + " " + " ".join(f"C{c}".center(width) for c in range(1, cols + 1))]
    lines += [f"R{r}".ljust(head) + " " + " ".join(token(r, c) for c in range(1, cols + 1))
              for r in range(1, rows + 1)]
    return "\n".join(line.rstrip() for line in lines)


def parse_grid_text(text: str) -> tuple[int, int, set[tuple[int, int]], set[tuple[int, int]]]:
    """(rows, cols, exception cells, bracketed cells) read back from a :func:`grid_text` block."""
    exceptions: set[tuple[int, int]] = set()
    lit: set[tuple[int, int]] = set()
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0].split()
    cols = len(header)
    rows = 0
    for line in lines[1:]:
        name, *cells = line.replace("[", " [").split()
        rows = int(name[1:])
        for c, cell in enumerate(cells, start=1):
            if cell.strip("[]") == EXCEPTION_SYMBOL:
                exceptions.add((rows, c))
            if cell.startswith("["):
                lit.add((rows, c))
    return rows, cols, exceptions, lit


def _text_sentence(row: Mapping[str, Any]) -> str:
    lit = " Cells in square brackets form the highlighted region." if highlighted_cells(row) else ""
    return (f"There is no image: the grid of {row['rows']} rows and {row['cols']} columns is written below, "
            f"one line per row (R1 is the top row), one symbol per cell from column C1 on the left; "
            f"{MAJORITY_SYMBOL} is the majority symbol.{lit}\n" + grid_text(row))


for _control in (
    Control("coords_given", image=True, labels=True, marks=False, sentence=lambda row: LABELS_SENTENCE),
    Control("exceptions_given", image=True, labels=True, marks=True,
            sentence=lambda row: LABELS_SENTENCE + MARKS_SENTENCE),
    Control("text_only", image=False, labels=False, marks=False, sentence=_text_sentence),
):
    CONTROLS.add(_control.name, _control)


def check_controls(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` in :data:`CONTROL_ORDER` order; ValueError naming an unknown or repeated one."""
    for name in names:
        if name not in CONTROLS.names():
            raise ValueError(f"unknown control {name!r}; known: {', '.join(CONTROL_ORDER)}")
    if len(set(names)) != len(names):
        raise ValueError(f"controls repeat a name: {list(names)}")
    return tuple(n for n in CONTROL_ORDER if n in names)


def control_item_id(source_item_id: str, control: str) -> str:
    """A control row's item id: ``<source item id>__<control>``."""
    return f"{source_item_id}__{control}"
