"""The scene bootstrap in a helper process, so that its cost overlaps the evaluator's own work.

The bootstrap (and numpy, which only it needs) takes about a third of a full run. On Linux,
rose-eval forks a helper as soon as it starts: while the parent reads the inputs, the
helper imports numpy; after scoring, the parent sends it the few fields the bootstrap
reads (JSON through a pipe) and goes on with the other analyses, the summary and the files,
and collects the result at the end. Forking before anything is loaded keeps the helper
small (it shares only the interpreter's start-up state). The result is exactly the
in-process one (JSON round-trips every value the bootstrap produces); elsewhere, with
``ROSE_EVAL_SERIAL=1``, or when the caller already runs other threads (rose-eval used as a
library inside a threaded program: a fork there may copy a lock another thread holds and
hang the helper), the bootstrap simply runs in process.

A helper that dies or sends something unreadable makes the bootstrap analysis fail (one
message); the rest is unaffected. Leaving early (an input error, Ctrl-C) kills the helper.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

SERIAL_ENV = "ROSE_EVAL_SERIAL"
# The per-item fields the scene bootstrap reads (see bootstrap.build_scene_table).
BOOTSTRAP_FIELDS = ("rose_subset", "scene_id", "pass", "unified_soft", "format_valid",
                    "click_applicable", "click_f1_strict", "region_ok", "task_template")
_CHUNK = 1 << 16


def _read_all(fd: int) -> bytes:
    parts = []
    while chunk := os.read(fd, _CHUNK):
        parts.append(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _serve(requests: int, replies: int) -> None:
    """The helper: import numpy now, then answer one bootstrap request, then leave."""
    status = 1
    try:
        from rose_eval.analyses.bootstrap import scene_bootstrap

        request = json.loads(_read_all(requests))
        items = [dict(zip(BOOTSTRAP_FIELDS, values, strict=True)) for values in request["items"]]
        result = scene_bootstrap(items, seed=request["seed"], n_boot=request["n_boot"])
        _write_all(replies, json.dumps(result, allow_nan=False).encode("utf-8"))
        status = 0
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the reply
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        _write_all(replies, json.dumps({"__failed__": message}).encode("utf-8"))
    finally:
        os._exit(status)  # never return into the parent's code, never flush its buffers


class BootstrapHelper:
    """A forked helper waiting for one bootstrap request (or None where forking is not used)."""

    def __init__(self) -> None:
        self.pid = 0
        if (not sys.platform.startswith("linux") or os.environ.get(SERIAL_ENV) == "1"
                or threading.active_count() > 1):
            return
        to_child, self._request = os.pipe()
        self._reply, from_child = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's work is checked through its reply
            os.close(self._request)
            os.close(self._reply)
            _serve(to_child, from_child)
        os.close(to_child)
        os.close(from_child)
        self.pid = pid

    @property
    def active(self) -> bool:
        return self.pid > 0

    def send(self, items: Sequence[Mapping[str, Any]], *, seed: int, n_boot: int) -> None:
        """Hand over the scored items (their bootstrap fields only)."""
        rows = [[item.get(field) for field in BOOTSTRAP_FIELDS] for item in items]
        payload = json.dumps({"seed": seed, "n_boot": n_boot, "items": rows})
        _write_all(self._request, payload.encode("utf-8"))
        os.close(self._request)
        self._request = -1

    def result(self) -> dict[str, Any]:
        """The bootstrap's result; raises RuntimeError when the helper failed."""
        data = _read_all(self._reply)
        os.close(self._reply)
        self._reply = -1
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        try:
            reply = json.loads(data)
        except ValueError:
            raise RuntimeError(f"the bootstrap helper ended without a result "
                               f"(wait status {status})") from None
        if "__failed__" in reply:
            raise RuntimeError(reply["__failed__"])
        return reply

    def close(self) -> None:
        """Stop the helper if it is still running (leaving early)."""
        for fd in (getattr(self, "_request", -1), getattr(self, "_reply", -1)):
            if fd >= 0:
                os.close(fd)
        self._request = self._reply = -1
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0
