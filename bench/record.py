"""Bench records: the Markdown files the docs quote their measured figures from.

A record is one file per benchmark, ``bench/<name>.md``::

    # <title>

    <what is measured, and the command that reproduces it>

    | run | date (UTC) | load at start | commit | <figure columns...> |
    |---|---|---|---|---|
    | <key> | 2026-12-03 15:10 | 0.21 of 2 (idle) | 05d920f | ... |

Each run of a bench with ``--markdown`` replaces its own row (same key) or adds one, so runs
side by side (e.g. two writers) sit in one table, each with the date and load it was measured
at. ``docs/*.md`` quote the file in a figure block (``scripts/sync_doc_figures.py``);
``tests/test_docs.py`` fails when a block and its record differ.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTEXT_COLUMNS = ("run", "date (UTC)", "load at start", "commit")
# A 1-minute load average below this share of the cores at the start counts as idle.
IDLE_SHARE = 0.25


@dataclass(frozen=True)
class RunContext:
    """Where and when a bench ran: stamped beside every figure it records."""

    date: str
    load_start: float
    cores: int
    commit: str

    @property
    def load_label(self) -> str:
        kind = "idle" if self.load_start < IDLE_SHARE * self.cores else "shared"
        return f"{self.load_start:.2f} of {self.cores} ({kind})"


def run_context() -> RunContext:
    """Call at the bench's start, before it loads the machine itself."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        # Records and docs change with every bench run; only edits to the measured code count.
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":!bench", ":!docs"], capture_output=True, text=True, check=True).stdout.strip()
        commit += "+edits" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return RunContext(date=time.strftime("%Y-%m-%d %H:%M", time.gmtime()), load_start=os.getloadavg()[0],
                      cores=os.cpu_count() or 1, commit=commit)


def bench_command() -> str:
    """The command line that ran this bench, as a user would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script_text = str(script.relative_to(ROOT))
    except ValueError:
        script_text = str(script)
    return " ".join([".venv/bin/python", script_text, *map(shlex.quote, sys.argv[1:])])


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def write_row(path: Path, title: str, intro: str, columns: list[str], key: str, values: list[str],
              context: RunContext) -> None:
    """Put one run's figures into the record at ``path`` (its row replaced if ``key`` exists).

    Rows whose columns differ from ``columns`` (an older layout) are dropped, so a record never
    mixes layouts. The title and intro are rewritten each time: they describe the bench as it is.
    """
    header = [*CONTEXT_COLUMNS, *columns]
    row = [key, context.date, context.load_label, context.commit, *values]
    if len(row) != len(header):
        raise ValueError(f"{len(values)} values for {len(columns)} columns")
    kept: list[list[str]] = []
    if path.is_file():
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("|")]
        if lines and _cells(lines[0]) == header:
            kept = [_cells(ln) for ln in lines[2:]]
    replaced = False
    for i, old in enumerate(kept):
        if old[0] == key:
            kept[i], replaced = row, True
    if not replaced:
        kept.append(row)
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(r) + " |" for r in kept]
    text = f"# {title}\n\n{intro.strip()}\n\n" + "\n".join(table) + "\n"
    if re.search(r"^#", intro, flags=re.M):
        raise ValueError("the intro must not hold headings (the docs quote the record by its title)")
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    print(f"recorded {key!r} in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def add_markdown_flag(parser, default_name: str) -> None:
    """``--markdown [FILE]``: record the figures (default ``bench/<default_name>``)."""
    parser.add_argument("--markdown", nargs="?", type=Path, const=ROOT / "bench" / default_name, default=None,
                        metavar="FILE", help=f"record the figures in FILE (default bench/{default_name}), "
                                             "the file docs/performance.md quotes")
