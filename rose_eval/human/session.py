"""A human-baseline session: which items a person still has to answer, and their answers on disk.

The session owns the queue (the selected items without a row in the predictions file,
in selection order; a skipped item goes to the back for this session), turns what the
page sends (clicked cells, a typed count, the seconds taken) into the formal answer
with :func:`rose_eval.formal.formal_answer`, and appends one row per answer, flushed
and fsynced before the page moves on. Reopening the file resumes: items with a row are
done.

What the page may see of an item is an explicit allowlist (:data:`PAGE_FIELDS`); no
ground-truth field ever leaves this module.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from rose_eval.formal import formal_answer
from rose_eval.jsonl import JsonlFault
from rose_eval.runners.dataset import DatasetItem
from rose_eval.runners.predictions import PredictionsFile, read_successes

# Row fields the page receives, and nothing else (no answer, targets, regions, difficulty).
PAGE_FIELDS: tuple[str, ...] = ("item_id", "task_mode", "prompt_global", "prompt_local", "rows", "cols")
COUNT_MODES = frozenset({"COUNT", "CLICK_COUNT"})
MAX_COUNT = 9999
MAX_SECONDS = 24 * 3600.0


class SessionError(ValueError):
    """A session cannot start (bad output file, bad rows); the message is one line."""


class AnswerRejected(ValueError):
    """What the page sent is not an answer to the current item (HTTP 4xx; message is one line)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class HumanAnswer:
    """One predictions row written for a person: the evaluator's fields plus ``seconds``."""

    item_id: str
    model: str
    raw_text: str
    error: None
    seconds: float

    @property
    def failed(self) -> bool:
        return False

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def image_url_path(item: DatasetItem) -> str:
    """The URL path the page loads an item's image from: ``/`` + its release-relative path."""
    return "/" + str(PurePosixPath(str(item.row["image"]).replace("\\", "/")))


def _check_rows(items: Sequence[DatasetItem]) -> None:
    for item in items:
        row = item.row
        place = item.where or f"line {item.line_no}"
        mode = row.get("task_mode")
        if mode not in ("COUNT", "CLICK", "CLICK_COUNT"):
            raise SessionError(f"row {item.item_id} ({place}) has task_mode {mode!r}; "
                               "expected COUNT, CLICK or CLICK_COUNT")
        for key in ("rows", "cols"):
            if not isinstance(row.get(key), int) or row[key] < 1:
                raise SessionError(f"row {item.item_id} ({place}) has no positive integer {key!r}")
        for key in ("prompt_global", "prompt_local"):
            if not isinstance(row.get(key), str):
                raise SessionError(f"row {item.item_id} ({place}) has no {key!r} text")


def _existing_models(path: Path) -> set[str]:
    """Who answered in an existing predictions file (its successful rows)."""
    models = (json.loads(line).get("model") for line in read_successes(path).values())
    return {m for m in models if isinstance(m, str)}


class HumanSession:
    """The queue and the predictions file of one person on one selection of items (thread-safe)."""

    def __init__(self, items: Sequence[DatasetItem], output: Path, model: str) -> None:
        _check_rows(items)
        try:
            others = sorted(_existing_models(output) - {model})
        except (OSError, UnicodeDecodeError, JsonlFault) as exc:
            raise SessionError(f"cannot read {output} as a predictions file ({exc}); pass another --output") from None
        if others:
            raise SessionError(f"{output} already holds answers by {others[0]!r}, not {model!r}; "
                               "pass the same --name to resume or another --output")
        self.items = {item.item_id: item for item in items}
        self.order = [item.item_id for item in items]
        self.model = model
        self._lock = threading.Lock()
        try:
            self._file = PredictionsFile(output)
        except (OSError, UnicodeDecodeError, JsonlFault) as exc:
            raise SessionError(f"cannot use {output} as the predictions file ({exc}); pass another --output") from None
        self.done = {item_id for item_id in self._file.done if item_id in self.items}
        self.pending = [item_id for item_id in self.order if item_id not in self.done]
        self.skipped: set[str] = set()
        self.images = {image_url_path(item): item.image_path for item in items}
        self._open = False  # the file is opened for appending at the first answer

    def close(self) -> None:
        self._file.close()

    # ------------------------------------------------------------------ state

    def page_item(self, item: DatasetItem) -> dict[str, Any]:
        """The allowlisted view of one item that the page receives."""
        view = {key: item.row[key] for key in PAGE_FIELDS}
        view["image_url"] = image_url_path(item)
        view["needs_count"] = item.row["task_mode"] in COUNT_MODES
        return view

    def state(self) -> dict[str, Any]:
        """Progress and the current item (None when everything is done)."""
        with self._lock:
            current = self.items[self.pending[0]] if self.pending else None
            return {
                "model": self.model,
                "total": len(self.order),
                "done": len(self.done),
                "skipped": len(self.skipped & set(self.pending)),
                "position": len(self.done) + 1 if current else len(self.done),
                "item": self.page_item(current) if current else None,
            }

    # ------------------------------------------------------------------ actions

    def _pending_item(self, item_id: object) -> DatasetItem:
        if not isinstance(item_id, str) or item_id not in self.items:
            raise AnswerRejected("unknown item_id", 404)
        if item_id in self.done:
            raise AnswerRejected(f"{item_id} is already answered", 409)
        return self.items[item_id]

    def submit(self, payload: Mapping[str, Any]) -> str:
        """Validate an answer from the page, write its row, return the formal answer written."""
        with self._lock:
            item = self._pending_item(payload.get("item_id"))
            row = item.row
            cells = _cells(payload.get("cells"), row["rows"], row["cols"])
            mode = row["task_mode"]
            count = _count(payload.get("count")) if mode in COUNT_MODES else None
            seconds = _seconds(payload.get("seconds"))
            raw = formal_answer(mode, cells, count)
            if not self._open:
                self._file.__enter__()
                self._open = True
            self._file.append(HumanAnswer(item.item_id, self.model, raw, None, seconds))
            self.done.add(item.item_id)
            self.pending.remove(item.item_id)
            return raw

    def skip(self, payload: Mapping[str, Any]) -> None:
        """Move an unanswered item to the back of this session's queue."""
        with self._lock:
            item = self._pending_item(payload.get("item_id"))
            self.pending.remove(item.item_id)
            self.pending.append(item.item_id)
            self.skipped.add(item.item_id)


def _cells(value: object, rows: int, cols: int) -> list[tuple[int, int]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > rows * cols:
        raise AnswerRejected("cells must be a list of [row, col] pairs")
    out = []
    for cell in value:
        if (not isinstance(cell, list) or len(cell) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in cell)):
            raise AnswerRejected("cells must be a list of [row, col] integer pairs")
        r, c = cell
        if not (1 <= r <= rows and 1 <= c <= cols):
            raise AnswerRejected(f"cell [{r}, {c}] is outside the {rows}x{cols} grid")
        out.append((r, c))
    return out


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
        raise AnswerRejected(f"this task needs a whole number from 0 to {MAX_COUNT}")
    return value


def _seconds(value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
            or not 0 <= value <= MAX_SECONDS:
        raise AnswerRejected("seconds must be a number of seconds from 0 to 86400")
    return round(float(value), 3)
