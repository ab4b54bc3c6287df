"""Reading JSONL files line by line with one-line errors (pure stdlib, nothing heavy).

Shared by the user-facing commands that read release metadata or evaluation records. Lines
are counted as Python's text mode counts them (``\\n``, ``\\r\\n`` and a lone ``\\r`` each end
a line), blank lines are skipped and a UTF-8 byte order mark at the start is ignored. Every
fault raises the caller's error class with ``"{path}:{line}: {what}; {fix}"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_BOM = b"\xef\xbb\xbf"
READ_FIX = "check the path and its permissions"
_JSON_TYPES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def json_type(value: Any) -> str:
    """How a decoded JSON value is named in errors ("an array", "a string", ...)."""
    return _JSON_TYPES.get(type(value), "a number")


def _body(chunk: str) -> str:
    if chunk.endswith("\r\n"):
        return chunk[:-2]
    return chunk[:-1] if chunk.endswith(("\n", "\r")) else chunk


def _undecodable(path: Path, first_line: int, chunk: bytes, exc: UnicodeDecodeError, fix: str) -> str:
    before = chunk[:exc.start]
    line = first_line + before.count(b"\r")
    offset = exc.start - (before.rfind(b"\r") + 1) + 1
    return f"{path}:{line}: undecodable bytes (not UTF-8: {exc.reason} at byte {offset} of the line); {fix}"


def iter_jsonl_objects(path: Path | str, error: Callable[[str], Exception],
                       fix: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every non-blank line of a JSONL file.

    Raises ``error(message)`` (one line) for a file that cannot be opened or read (with
    :data:`READ_FIX` as the hint), undecodable bytes (byte offset within the line), invalid
    JSON (message and column) and a line that is not a JSON object; ``fix`` ends the
    message for the content faults. Callers check fields themselves.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc}); {READ_FIX}") from None
    line_no = 0
    with handle:
        while True:
            try:
                chunk = handle.readline()
            except OSError as exc:
                raise error(f"{path}: cannot read ({exc.strerror or exc}); {READ_FIX}") from None
            if not chunk:
                return
            if line_no == 0 and chunk.startswith(_BOM):
                chunk = chunk[len(_BOM):]
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(_undecodable(path, line_no + 1, chunk, exc, fix)) from None
            for piece in _body(text).split("\r"):
                line_no += 1
                if not piece.strip():
                    continue
                try:
                    row = json.loads(piece)
                except json.JSONDecodeError as exc:
                    raise error(f"{path}:{line_no}: invalid JSON ({exc.msg} at column {exc.colno}); {fix}") from None
                except RecursionError:
                    raise error(f"{path}:{line_no}: invalid JSON (nested too deeply); {fix}") from None
                if not isinstance(row, dict):
                    raise error(f"{path}:{line_no}: expected a JSON object, got {json_type(row)}; {fix}")
                yield line_no, row
