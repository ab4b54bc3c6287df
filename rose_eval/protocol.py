"""The ROSE answer grammar: raw model text -> ParsedAnswer (pure, never raises).

Rules (identical to the public v0.1 evaluator):

- The whole stripped text is parsed; surrounding prose makes the answer invalid.
- Tokens are case-insensitive and may contain whitespace (``CLICK( R2 , C4 )``).
  Digits are Python ``\\d`` (any Unicode decimal digit); values are unbounded.
- COUNT: the whole text must be ``COUNT(n)`` (no ``;`` splitting).
- CLICK / CLICK_COUNT: split on ``;`` and drop blank tokens; CLICK tokens followed by a
  final ``DONE`` (CLICK) or ``SUBMIT(n)`` (CLICK_COUNT). When the final token is present
  but another token is bad, the well-formed clicks (and SUBMIT's n) are kept for
  diagnostics; when the final token is missing nothing is kept.

One deliberate extension: a numeral longer than Python's integer-string limit (4,300
digits by default) cannot be converted, which makes the public evaluator crash. Here
such a token is simply ill-formed (``number_out_of_range`` for COUNT and SUBMIT, an
invalid CLICK token inside a click list).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

Cell = tuple[int, int]

_FLAGS = re.IGNORECASE
# A cell is written R<row>,C<col>: inside CLICK(...) in answers, and as a label in metadata.
CELL = r"R\s*(\d+)\s*,\s*C\s*(\d+)"
CELL_LABEL = re.compile(rf"\s*{CELL}\s*", _FLAGS)
CELL_IN_TEXT = re.compile(CELL, _FLAGS)
COUNT_TOKEN = re.compile(r"\s*COUNT\s*\(\s*(\d+)\s*\)\s*", _FLAGS)
CLICK_TOKEN = re.compile(rf"\s*CLICK\s*\(\s*{CELL}\s*\)\s*", _FLAGS)
SUBMIT_TOKEN = re.compile(r"\s*SUBMIT\s*\(\s*(\d+)\s*\)\s*", _FLAGS)
DONE_TOKEN = re.compile(r"\s*DONE\s*", _FLAGS)

ERR_EMPTY = "empty"
ERR_EXPECTED_COUNT = "expected_COUNT_only"
ERR_MISSING_DONE = "missing_DONE"
ERR_MISSING_SUBMIT = "missing_SUBMIT"
ERR_INVALID_CLICK = "invalid_CLICK_token"
ERR_NUMBER_OUT_OF_RANGE = "number_out_of_range"
ERR_UNKNOWN_MODE_PREFIX = "unknown_task_mode:"


@dataclass(frozen=True)
class ParsedAnswer:
    """One answer under the formal grammar (field meanings as in the public evaluator)."""

    format_valid: bool
    parse_error: str | None
    pred_count: int | None
    submit_count: int | None
    click_actions: tuple[Cell, ...]
    invalid_action_tokens: tuple[str, ...]
    end_token: str | None


def cell_label(cell: Cell) -> str:
    """The label of a cell: ``R<row>,C<col>``."""
    return f"R{cell[0]},C{cell[1]}"


def read_cell_label(text: str) -> Cell | None:
    """The cell a whole label names (case and spacing free), or None if it is not a label.

    Raises ValueError for a numeral beyond Python's int-string limit (metadata is not
    answer text: such a row is refused, not scored).
    """
    match = CELL_LABEL.fullmatch(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def cells_in_text(text: str) -> list[Cell]:
    """Every cell label inside a free-form text, in order (repeats kept)."""
    return [(int(row), int(col)) for row, col in CELL_IN_TEXT.findall(text)]


def _invalid(error: str, tokens: tuple[str, ...] = ()) -> ParsedAnswer:
    return ParsedAnswer(False, error, None, None, (), tokens, None)


def _to_int(digits: str) -> int | None:
    """int(digits), or None when the numeral exceeds Python's int-string limit."""
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) > limit:
        return None
    return int(digits)


def answer_text(raw_text: object) -> str:
    """The stripped text the grammar sees (None -> empty; other types via str())."""
    return "" if raw_text is None else str(raw_text).strip()


def split_tokens(text: str) -> tuple[str, ...]:
    """Split on ';', strip each token and drop blank ones."""
    return tuple(part.strip() for part in text.split(";") if part.strip())


def _parse_clicks(tokens: tuple[str, ...]) -> tuple[tuple[Cell, ...], tuple[str, ...]]:
    clicks: list[Cell] = []
    invalid: list[str] = []
    for token in tokens:
        match = CLICK_TOKEN.fullmatch(token)
        row = _to_int(match.group(1)) if match else None
        col = _to_int(match.group(2)) if match else None
        if row is None or col is None:
            invalid.append(token)
        else:
            clicks.append((row, col))
    return tuple(clicks), tuple(invalid)


def parse_count(text: str) -> ParsedAnswer:
    """COUNT(n) and nothing else."""
    match = COUNT_TOKEN.fullmatch(text)
    if not match:
        return _invalid(ERR_EXPECTED_COUNT, (text,))
    value = _to_int(match.group(1))
    if value is None:
        return _invalid(ERR_NUMBER_OUT_OF_RANGE, (text,))
    return ParsedAnswer(True, None, value, None, (), (), "COUNT")


def parse_click(text: str) -> ParsedAnswer:
    """CLICK(Rr,Cc); ...; DONE (DONE alone is valid)."""
    tokens = split_tokens(text)
    if not tokens or not DONE_TOKEN.fullmatch(tokens[-1]):
        return _invalid(ERR_MISSING_DONE, tokens)
    clicks, invalid = _parse_clicks(tokens[:-1])
    if invalid:
        return ParsedAnswer(False, ERR_INVALID_CLICK, None, None, clicks, invalid, "DONE")
    return ParsedAnswer(True, None, None, None, clicks, (), "DONE")


def parse_click_count(text: str) -> ParsedAnswer:
    """CLICK(Rr,Cc); ...; SUBMIT(n) (SUBMIT(n) alone is valid)."""
    tokens = split_tokens(text)
    if not tokens:
        return _invalid(ERR_EMPTY)
    match = SUBMIT_TOKEN.fullmatch(tokens[-1])
    if not match:
        return _invalid(ERR_MISSING_SUBMIT, tokens)
    submit = _to_int(match.group(1))
    if submit is None:
        return _invalid(ERR_NUMBER_OUT_OF_RANGE, tokens)
    clicks, invalid = _parse_clicks(tokens[:-1])
    if invalid:
        return ParsedAnswer(False, ERR_INVALID_CLICK, None, submit, clicks, invalid, "SUBMIT")
    return ParsedAnswer(True, None, None, submit, clicks, (), "SUBMIT")


PARSERS: dict[str, Callable[[str], ParsedAnswer]] = {
    "COUNT": parse_count,
    "CLICK": parse_click,
    "CLICK_COUNT": parse_click_count,
}


def parse_answer(raw_text: object, task_mode: str) -> ParsedAnswer:
    """Parse one raw answer for a task mode; never raises, whatever the input."""
    text = answer_text(raw_text)
    if not text:
        return _invalid(ERR_EMPTY)
    parser = PARSERS.get(task_mode)
    if parser is None:
        return _invalid(ERR_UNKNOWN_MODE_PREFIX + str(task_mode), (text,))
    return parser(text)
