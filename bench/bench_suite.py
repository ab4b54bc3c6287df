"""The test suite's wall time as ``./run.sh test`` runs it, on a fresh clone, at several xdist worker counts.

Each run clones this repository's HEAD into a temporary folder (no ``__pycache__``, no
``.pytest_cache``: what CI and a new user get), then runs the suite there exactly as
``./run.sh test`` at that commit does (``python -m pytest -q -n <workers>``, bytecode caching as
its run.sh sets it: :func:`suite_env`), with this checkout's ``.venv`` and the clone first on
``PYTHONPATH``. Recorded per worker count: the whole command's wall,
the CPU of every process it started, the tests that passed, and the slowest test.

    .venv/bin/python bench/bench_suite.py --workers 2 3 --markdown
    .venv/bin/python bench/bench_suite.py --runs cd98478:2 HEAD:3 --markdown   # before and after, side by side

Run it on an otherwise idle machine (the record stamps the load at each run's start); a run
takes about five minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, add_markdown_flag, bench_command, run_context, write_row  # noqa: E402

SUMMARY = re.compile(r"(\d+) passed(?:, (\d+) skipped)?.* in ([\d.]+)s")
SLOWEST = re.compile(r"^([\d.]+)s call\s+(\S+)", re.M)


def suite_env(clone: Path) -> tuple[dict[str, str], bool]:
    """The environment ``./run.sh test`` at the clone's commit gives pytest, and whether it caches
    bytecode: since 2026-12-07 it unsets PYTHONDONTWRITEBYTECODE (which this machine sets), an
    older run.sh left it as the environment had it."""
    env = {**os.environ, "PYTHONPATH": str(clone)}
    run_sh = (clone / "run.sh").read_text(encoding="utf-8")
    if "unset PYTHONDONTWRITEBYTECODE" in run_sh:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env, not env.get("PYTHONDONTWRITEBYTECODE")


def run_suite(clone: Path, workers: int) -> dict[str, str]:
    """One suite run in ``clone``: wall, CPU of all its processes, tests passed, slowest test."""
    env, bytecode = suite_env(clone)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-n", str(workers),
                           "--durations=1", "-p", "no:cacheprovider"], cwd=clone, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = SUMMARY.search(done.stdout)
    if done.returncode != 0 or summary is None:
        tail = "\n".join(done.stdout.splitlines()[-15:])
        raise SystemExit(f"bench_suite: the suite failed at -n {workers} (exit {done.returncode}):\n{tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    slowest = SLOWEST.search(done.stdout)
    return {
        "bytecode cached": "yes" if bytecode else "no",
        "wall (s)": f"{wall:.1f}",
        "CPU, all processes (s)": f"{cpu:.0f}",
        "cores busy": f"{cpu / wall:.2f}",
        "tests passed": summary.group(1),
        "slowest test": f"{slowest.group(2).split('::')[-1]} {float(slowest.group(1)):.1f} s" if slowest else "-",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[(os.cpu_count() or 1) + 1],
                        help="xdist worker counts to time at HEAD, one suite run each (default: cores + 1, as ./run.sh test)")
    parser.add_argument("--runs", nargs="+", metavar="COMMIT:WORKERS", default=None,
                        help="suite runs at given commits instead (e.g. a commit before a change and HEAD), in order")
    add_markdown_flag(parser, "suite.md")
    args = parser.parse_args()
    intro = (
        "The whole test suite on a fresh clone of the commit, run as `./run.sh test` runs it "
        "(`python -m pytest -q -n <workers>`, bytecode caching on if that commit's run.sh turns it on; "
        "ruff and the evaluator-only install check are not timed), "
        "one run per worker count (or per commit and worker count with `--runs`; the row names the commit). CPU is user + system time of every process the suite started. "
        "`./run.sh test` uses one worker per core plus one: many tests wait on child processes, local "
        "servers and Retry-After pauses, and the extra worker fills that idle core time.\n\n"
        f"Command: `{bench_command()}`"
    )
    runs = [tuple(r.rsplit(":", 1)) for r in args.runs] if args.runs else [("HEAD", str(w)) for w in args.workers]
    for commit, workers in runs:
        with tempfile.TemporaryDirectory(prefix="rose-suite-") as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
            short = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True, check=True).stdout.strip()
            context = run_context()
            figures = run_suite(clone, int(workers))
            key = f"-n {workers}" if commit == "HEAD" else f"{short}, -n {workers}"
            print(f"{key}: " + ", ".join(f"{k} {v}" for k, v in figures.items()), flush=True)
            if args.markdown:
                write_row(args.markdown, "Test suite wall time", intro, list(figures), key, list(figures.values()),
                          context)


if __name__ == "__main__":
    main()
