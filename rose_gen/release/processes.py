"""Worker pools that start the same way whatever process hosts them.

The generator's render workers and the merge's subset workers are spawned: fresh interpreters,
whatever threads the host runs. A spawned child first re-applies its parent's *default* start
method (``multiprocessing.spawn.prepare``), and a host may have set one that only exists where
its own library is imported: inside a joblib (loky) worker, as Hydra's joblib launcher runs a
shard with ``workers=2``, the default is ``"loky"``. The child then fails before it runs any of
our code and ``multiprocessing.Pool`` restarts it forever: the run hangs. :func:`spawn_pool`
makes the default a standard one while its pool lives, and puts the host's back after.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any


@contextmanager
def standard_start_method() -> Iterator[None]:
    """While open, this process's default start method is one every child knows (``spawn`` if the
    host set another, such as loky's); the host's setting is restored on exit."""
    current = multiprocessing.get_start_method(allow_none=True)
    if current is None or current in multiprocessing.get_all_start_methods():
        yield
        return
    multiprocessing.set_start_method("spawn", force=True)
    try:
        yield
    finally:
        multiprocessing.set_start_method(current, force=True)


@contextmanager
def spawn_pool(
    processes: int, initializer: Callable[..., Any] | None = None, initargs: tuple = ()
) -> Iterator[Pool]:
    """A ``multiprocessing`` pool of ``processes`` spawned workers that also starts (and restarts)
    inside a host whose default start method its children cannot load (a loky worker)."""
    with standard_start_method(), multiprocessing.get_context("spawn").Pool(
        processes, initializer=initializer, initargs=initargs
    ) as pool:
        yield pool
