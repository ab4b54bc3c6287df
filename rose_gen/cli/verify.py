"""``rose-verify <release>``: check a release's files, rows, invariants and images.

Exit status 0 when the release checks out, 1 when problems were found (one line each on
stderr), 2 for bad usage.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from rose_eval.cli.args import OneLineParser


def build_parser() -> OneLineParser:
    """rose-verify's arguments."""
    parser = OneLineParser(prog="rose-verify", description="Check a ROSE release: sha256 of every file, rows "
                     "re-derived from the recorded config, row invariants, image sizes, re-rendered images.")
    parser.add_argument("release", type=Path, help="release directory (holds export_summary.json)")
    parser.add_argument("--rerender", choices=("none", "sample", "all"), default="sample",
                        help="re-render no scene, the first and last scene of each subset (default), or all")
    parser.add_argument("--no-rederive", action="store_true",
                        help="skip re-planning from the recorded config (files, invariants and images only)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-verify``; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args

    from rose_gen.check.verify import iter_lines, verify_release
    from rose_gen.release.folder import ReleaseError

    try:
        report = verify_release(args.release, rerender=args.rerender, rederive=not args.no_rederive)
    except ReleaseError as exc:
        print(f"rose-verify: error: {exc}", file=sys.stderr)
        return 2
    for line in iter_lines(report):
        print(f"rose-verify: {line}", file=sys.stderr)
    if not report.ok:
        print(f"rose-verify: FAILED: {len(report.problems)} problem(s) in {args.release}", file=sys.stderr)
        return 1
    print(f"rose-verify: OK: {args.release} ({report.files} files, {report.rows} rows, {report.images} images, "
          f"{report.rerendered} scenes re-rendered)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
