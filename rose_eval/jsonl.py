"""Reading JSONL files line by line with one-line errors (pure stdlib, nothing heavy).

The one JSONL reader of the toolkit: rose-eval, rose-eval compare, rose-run (its datasets,
and its predictions on resume through :func:`intact_objects`) and the generator's
verify/audit/replay/merge read through it. Lines are counted as Python's text mode
counts them (``\\n``, ``\\r\\n`` and a lone ``\\r`` each end a line), blank lines are skipped,
a UTF-8 byte order mark at the start is ignored, and the file is streamed (one line in
memory at a time). A fault raises :class:`JsonlFault` (what is wrong, file and line);
:func:`iter_jsonl_objects` turns it into the caller's error class with a fix hint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_BOM = b"\xef\xbb\xbf"
READ_FIX = "check the path and its permissions"
_JSON_TYPES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


UNREADABLE, UNDECODABLE, NOT_JSON, NOT_OBJECT = "unreadable", "undecodable", "not JSON", "not an object"


class JsonlFault(ValueError):
    """A JSONL file that cannot be read as JSON objects: what is wrong, where (line 0: the file).

    ``kind`` is one of UNREADABLE, UNDECODABLE, NOT_JSON, NOT_OBJECT (callers pick the fix).
    """

    def __init__(self, path: Path, line: int, what: str, kind: str) -> None:
        super().__init__(f"{path}:{line}: {what}" if line else f"{path}: {what}")
        self.path, self.line, self.what, self.kind = path, line, what, kind

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


def json_type(value: Any) -> str:
    """How a decoded JSON value is named in errors ("an array", "a string", ...)."""
    return _JSON_TYPES.get(type(value), "a number")


def _body(chunk: str) -> str:
    if chunk.endswith("\r\n"):
        return chunk[:-2]
    return chunk[:-1] if chunk.endswith(("\n", "\r")) else chunk


def _undecodable(path: Path, first_line: int, chunk: bytes, exc: UnicodeDecodeError) -> JsonlFault:
    before = chunk[:exc.start]
    line = first_line + before.count(b"\r")
    offset = exc.start - (before.rfind(b"\r") + 1) + 1
    return JsonlFault(path, line, f"undecodable bytes (not UTF-8: {exc.reason} at byte {offset} "
                                  "of the line)", UNDECODABLE)


def json_object(path: Path, line_no: int, text: str) -> dict[str, Any]:
    """One line's JSON object; JsonlFault (naming file and line) when it is not one."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonlFault(path, line_no, f"invalid JSON ({exc.msg} at column {exc.colno})",
                         NOT_JSON) from None
    except RecursionError:
        raise JsonlFault(path, line_no, "invalid JSON (nested too deeply)", NOT_JSON) from None
    if not isinstance(row, dict):
        raise JsonlFault(path, line_no, f"expected a JSON object, got {json_type(row)}", NOT_OBJECT)
    return row


def jsonl_lines(path: Path, errors: str = "strict") -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` of every non-blank line, stripped, not yet decoded as JSON (for
    callers that skip most lines); JsonlFault when unreadable (and, with ``errors="strict"``,
    on undecodable bytes)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise JsonlFault(path, 0, f"cannot read ({exc.strerror or exc})", UNREADABLE) from None
    line_no = 0
    with handle:
        try:
            for chunk in handle:
                if line_no == 0 and chunk.startswith(_BOM):
                    chunk = chunk[len(_BOM):]
                try:
                    text = chunk.decode("utf-8", errors)
                except UnicodeDecodeError as exc:
                    raise _undecodable(path, line_no + 1, chunk, exc) from None
                for piece in _body(text).split("\r"):
                    line_no += 1
                    piece = piece.strip()
                    if piece:
                        yield line_no, piece
        except OSError as exc:
            raise JsonlFault(path, 0, f"cannot read ({exc.strerror or exc})", UNREADABLE) from None


def jsonl_objects(path: Path | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every non-blank line; JsonlFault on the first fault."""
    path = Path(path)
    for line_no, text in jsonl_lines(path, "strict"):
        yield line_no, json_object(path, line_no, text)


def intact_objects(path: Path | str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(line text, object)`` of every line that holds a JSON object, skipping the others.

    For files this toolkit appends to and resumes (predictions): a line cut by an
    interruption is not an error, its item simply runs again. JsonlFault only when the file
    cannot be read at all.
    """
    path = Path(path)
    for line_no, text in jsonl_lines(path, "replace"):
        try:
            yield text, json_object(path, line_no, text)
        except JsonlFault:
            continue


def iter_jsonl_objects(path: Path | str, error: Callable[[str], Exception],
                       fix: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`jsonl_objects` raising ``error("{file}:{line}: {what}; {fix}")`` (one line).

    An unreadable file ends with :data:`READ_FIX` instead of ``fix``.
    """
    try:
        yield from jsonl_objects(path)
    except JsonlFault as fault:
        raise error(f"{fault}; {READ_FIX if fault.kind == UNREADABLE else fix}") from None
