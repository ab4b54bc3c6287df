"""``rose-gen preview <release> [--out DIR] [--per_subset N]``: contact sheets and an HTML index."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rose_eval.cli.args import OneLineParser
from rose_gen.check.preview.build import DEFAULT_PER_SUBSET, build_preview
from rose_gen.check.preview.scenes import PreviewError
from rose_gen.core.errors import AssetError


def build_parser() -> OneLineParser:
    """The flags of rose-gen preview."""
    p = OneLineParser(prog="rose-gen preview", description=__doc__.split(":", 1)[1].strip(),
                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("release", type=Path, help="release folder (metadata_*.jsonl, images/)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: <release>.preview beside it)")
    p.add_argument("--per_subset", type=int, default=DEFAULT_PER_SUBSET, help="scenes per subset sheet")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-gen preview``; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    try:
        result = build_preview(args.release, args.out, args.per_subset)
    except PreviewError as exc:
        print(f"rose-gen preview: error: {exc}", file=sys.stderr)
        return 2
    except (AssetError, OSError) as exc:
        print(f"rose-gen preview: error: {exc}", file=sys.stderr)
        return 1
    for sheet in result.sheets:
        print(f"rose-gen preview: {sheet.subset}: {len(sheet.bands)} of {sheet.scenes_total} scenes -> "
              f"{result.out / sheet.file}", file=sys.stderr)
    print(f"rose-gen preview: open {result.index}", file=sys.stderr)
    return 0
