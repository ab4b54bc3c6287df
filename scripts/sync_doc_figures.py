"""Fill the README's and docs/' figure blocks from the files the bench scripts write.

    .venv/bin/python scripts/sync_doc_figures.py [--check]

A figure block is

    <!-- figures: bench/prior.md#per-template -->
    ...
    <!-- /figures -->

and holds exactly that file (or that section of it: the heading with this GitHub anchor, up
to the next heading of the same or a higher level). Re-run a bench script, then this, and
the docs quote its new output; ``--check`` only says which blocks differ (exit 1), which is
what ``tests/test_docs.py`` asserts.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = re.compile(r"^<!-- figures: (\S+?)(?:#(\S+))? -->\n(.*?)^<!-- /figures -->", flags=re.S | re.M)


def doc_files() -> list[Path]:
    """The README and every docs page."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def figure_source(path: str, section: str | None) -> str:
    """The text a block must hold: the file at ``path`` (from the repository root), or its section."""
    text = (ROOT / path).read_text(encoding="utf-8")
    if section is None:
        return text.strip("\n") + "\n"
    out, level = [], None
    for line in text.splitlines(keepends=True):
        m = re.match(r"^(#{1,6}) (.+)$", line)
        if m and level is not None and len(m.group(1)) <= level:
            break
        if level is not None:
            out.append(line)
        if m and level is None and github_slug(m.group(2)) == section:
            level = len(m.group(1))
    if level is None:
        raise KeyError(f"{path} has no section #{section}")
    return "".join(out).strip("\n") + "\n"


def synced(text: str) -> str:
    """``text`` with every figure block refilled from its source."""
    def refill(m: re.Match) -> str:
        head = m.group(0).split("\n", 1)[0]
        return f"{head}\n{figure_source(m.group(1), m.group(2))}<!-- /figures -->"
    return FIGURES.sub(refill, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block differs")
    args = parser.parse_args()
    stale = []
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        try:
            new = synced(text)
        except (KeyError, OSError) as exc:
            print(f"sync_doc_figures: error: {doc.relative_to(ROOT)}: {exc}", file=sys.stderr)
            return 2
        if new != text:
            stale.append(doc)
            if not args.check:
                doc.write_text(new, encoding="utf-8")
    for doc in stale:
        print(f"{'differs' if args.check else 'updated'}: {doc.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
