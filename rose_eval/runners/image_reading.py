"""One cached reading per image file for the pixel solvers (cv and robust).

A base image serves four tasks, so each (file, highlighted) is read once, even when several
worker threads ask for it at the same moment. A labelled interface-control image is read
beside its labels (``rose_eval.controls.label_margins``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

from rose_eval.runners.cv_grid import load_rgb

T = TypeVar("T")
FileKey = tuple[str, int, int, bool]  # resolved path, mtime_ns, size, highlighted


class CachedReader(Generic[T]):
    """``reader(path, highlighted)``: ``read(rgb, highlighted)`` of the file, cached by path and stat."""

    def __init__(self, read: Callable[[np.ndarray, bool], T], maxsize: int = 256) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._key_locks: dict[FileKey, threading.Lock] = {}
        self._cached = lru_cache(maxsize=maxsize)(self._read_key)

    def _read_key(self, path: str, mtime_ns: int, size: int, highlighted: bool) -> T:
        from rose_eval.controls import label_margins

        rgb = load_rgb(path)
        top, left = label_margins(rgb)
        return self._read(rgb[top:, left:] if top or left else rgb, highlighted)

    def __call__(self, path: Path | str, highlighted: bool) -> T:
        resolved = Path(path).resolve()
        stat = resolved.stat()
        key: FileKey = (str(resolved), stat.st_mtime_ns, stat.st_size, highlighted)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            return self._cached(*key)

    def cache_clear(self) -> None:
        """Forget every reading (tests that change the reader's behaviour)."""
        self._cached.cache_clear()
