"""spawn_pool: a pool that starts inside a host whose default start method its children cannot load."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _host(body: str) -> subprocess.CompletedProcess:
    """``body`` run in a host (like a loky worker) whose default start method is a context only it
    has registered."""
    script = textwrap.dedent(
        """
        import multiprocessing, multiprocessing.context as mpc
        class HostOnly(mpc.SpawnContext):
            _name = "host-only"
        mpc._concrete_contexts["host-only"] = HostOnly()
        multiprocessing.set_start_method("host-only", force=True)
        """
    ) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_workers_start_and_the_host_keeps_its_start_method() -> None:
    done = _host(
        """
        import multiprocessing, operator
        from rose_gen.release.processes import spawn_pool
        with spawn_pool(2) as pool:
            print(pool.apply_async(operator.add, (2, 3)).get(timeout=60))
        print(multiprocessing.get_start_method())
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5", "host-only"]


def test_a_plain_spawn_pool_there_cannot_start_its_workers() -> None:
    # What spawn_pool guards against: the children die before running anything (the pool
    # restarts them forever), so the job never ends.
    failed = _host(
        """
        import multiprocessing, operator
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            try:
                pool.apply_async(operator.add, (2, 3)).get(timeout=3)
            except multiprocessing.TimeoutError:
                print("no result")
            pool.terminate()
        """
    )
    assert failed.stdout.strip() == "no result"
    assert "cannot find context for 'host-only'" in failed.stderr
