"""Running the analyses beside the evaluator's own work, on a second core.

The analyses (and numpy, which only they need) take about as long as aggregating and
writing the public evaluator's files, and they only read the scored records. So after
scoring, rose-eval forks: the child runs :func:`rose_eval.analyses.run_analyses` and sends
the result back as JSON through a pipe, while the parent builds the summary and writes the
per-item files. The result is the same as running them in order (JSON round-trips every
value the analyses produce exactly); where ``os.fork`` does not exist, or with
``ROSE_EVAL_SERIAL=1``, they simply run in this process.

A child that dies, or sends something unreadable, fails every analysis with one message;
the parity outputs are unaffected. Leaving the context early (an error, Ctrl-C) kills the
child, so no process outlives the command.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rose_eval.analyses import ANALYSES, FAILED, run_analyses

SERIAL_ENV = "ROSE_EVAL_SERIAL"
CHUNK = 1 << 16


def _read_all(fd: int) -> bytes:
    parts = []
    while chunk := os.read(fd, CHUNK):
        parts.append(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _child(fd: int, compute: Callable[[], Mapping[str, Any]]) -> None:
    """Run in the forked child: compute, send, and leave without running any cleanup."""
    status = 1
    try:
        _write_all(fd, json.dumps(compute(), allow_nan=False).encode("utf-8"))
        status = 0
    finally:
        os._exit(status)  # never return into the parent's code, never flush its buffers


def _all_failed(message: str) -> dict[str, Any]:
    return {name: {FAILED: message} for name in ANALYSES.names()}


@contextmanager
def analyses_in_background(items: Sequence[Mapping[str, Any]],
                           metadata_rows: Sequence[Mapping[str, Any]], *, seed: int,
                           n_boot: int) -> Iterator[Callable[[], dict[str, Any]]]:
    """Start the analyses; the context yields a function that waits for their result."""
    def compute() -> dict[str, Any]:
        return run_analyses(items, metadata_rows, seed=seed, n_boot=n_boot)

    if not hasattr(os, "fork") or os.environ.get(SERIAL_ENV) == "1":
        yield compute
        return
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is the result it sends
        os.close(read_fd)
        _child(write_fd, compute)
    os.close(write_fd)
    finished = False

    def result() -> dict[str, Any]:
        nonlocal finished
        data = _read_all(read_fd)
        _, status = os.waitpid(pid, 0)
        finished = True
        if status != 0:
            return _all_failed(f"the analyses process ended abnormally (wait status {status})")
        try:
            return json.loads(data)
        except ValueError as exc:
            return _all_failed(f"the analyses process sent unreadable output ({exc})")

    try:
        yield result
    finally:
        os.close(read_fd)
        if not finished:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
