"""`rose-eval report EVAL_DIR... --out report.html`: one self-contained HTML report.

Builds the page with :func:`rose_eval.report.html.build_report` and writes it atomically.
Exit status 0 done, 2 bad input or a missing ``report`` extra (one stderr line, nothing
written).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from rose_eval.atomic import write_atomic
from rose_eval.cli.args import EXIT_USAGE, OneLineParser
from rose_eval.report.html import DEFAULT_GALLERY, ReportConfig, build_report
from rose_eval.report.runs import ReportError

PROG = "rose-eval report"


def build_parser() -> OneLineParser:
    """The flags of `rose-eval report`."""
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("eval_dirs", nargs="+", type=Path, metavar="EVAL_DIR",
                        help="evaluation folder written by rose-eval --out_dir")
    parser.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    parser.add_argument("--dataset_root", type=Path, default=None,
                        help="release folder (images, prompts); default: the metadata path "
                        "recorded in the first summary")
    parser.add_argument("--reference", type=Path, action="append", default=[], metavar="EVAL_DIR",
                        help="a reference run (e.g. rose-run --solver prior, evaluated): shown "
                        "beside the chance floor, never ranked; repeatable")
    parser.add_argument("--gallery", type=int, default=DEFAULT_GALLERY,
                        help="failed items shown per model (0 = no gallery images)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the gallery sample and of the paired comparison")
    parser.add_argument("--include_controls", action="store_true",
                        help="rank control and changed-benchmark runs in the paired "
                             "leaderboard (they are always marked; by default not ranked)")
    parser.add_argument("--n_boot", type=int, default=10_000,
                        help="paired scene resamples of the comparison (several runs)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `rose-eval report`; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    try:
        from rose_eval.report.plots import require_matplotlib

        require_matplotlib()
    except ImportError as exc:
        print(f"{PROG}: error: {exc} (environment)", file=sys.stderr)
        return EXIT_USAGE
    config = ReportConfig(tuple(args.eval_dirs), args.out, args.dataset_root, args.gallery,
                          args.seed, args.n_boot, include_controls=args.include_controls,
                          references=tuple(args.reference))
    try:
        if config.gallery < 0 or config.n_boot < 1 or config.seed < 0:
            raise ReportError("--gallery must be >= 0, --n_boot >= 1 and --seed >= 0 "
                              "(command line)")
        data = build_report(config)
        try:
            write_atomic(config.out.expanduser(), data)
        except OSError as exc:
            raise ReportError(f"{config.out}: cannot write ({exc.strerror or exc}); choose a "
                              "writable --out path") from None
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{PROG}: wrote {config.out} ({len(data) / 1024:.0f} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
