"""`rose-eval compare EVAL_DIR... [--out result.json]`: the leaderboard of evaluated runs.

Prints the leaderboard (Markdown) of :func:`rose_eval.analyses.compare.compare_runs`, with
every pairwise claim Holm-adjusted at ``--alpha`` and each pair's minimum detectable
difference at ``--power``, and writes its JSON with ``--out``. Exit status 0 done, 2 bad input (one stderr line, nothing
written).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rose_eval.analyses.compare import (
    PER_ITEM_FILE,
    SUBSAMPLE_FRACTION,
    CompareError,
    check_same_items,
    check_same_metadata,
    compare_runs,
    leaderboard_markdown,
    load_runs,
    split_standard,
)
from rose_eval.analyses.power import DEFAULT_ALPHA, DEFAULT_POWER
from rose_eval.atomic import write_atomic
from rose_eval.cli.args import EXIT_USAGE, OneLineParser

PROG = "rose-eval compare"


def build_parser() -> OneLineParser:
    """The flags of `rose-eval compare`."""
    parser = OneLineParser(
        prog=PROG,
        description="Leaderboard of evaluated runs with paired scene-bootstrap intervals.")
    parser.add_argument("eval_dirs", nargs="+", type=Path, metavar="EVAL_DIR",
                        help=f"evaluation output folder holding {PER_ITEM_FILE}")
    parser.add_argument("--out", type=Path, default=None, help="write the result as JSON here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n_boot", type=int, default=10_000,
                        help="paired scene resamples (and scene subsamples for rank stability)")
    parser.add_argument("--subsample_fraction", type=float, default=SUBSAMPLE_FRACTION,
                        help="share of each subset's scenes kept per rank-stability subsample")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                        help="family-wise error of the pairwise claims (Holm), default 0.05")
    parser.add_argument("--power", type=float, default=DEFAULT_POWER,
                        help="power of each pair's minimum detectable difference, default 0.8")
    parser.add_argument("--include_controls", action="store_true",
                        help="rank control and changed-benchmark runs beside standard runs "
                             "(marked); by default they are set aside")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `rose-eval compare`; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    try:
        if len(args.eval_dirs) < 2:
            raise CompareError("need at least two EVAL_DIRs to compare")
        if args.n_boot < 1 or args.seed < 0 or not 0 < args.subsample_fraction <= 1:
            raise CompareError("--n_boot must be >= 1, --seed >= 0 and --subsample_fraction "
                               "in (0, 1]")
        if not 0 < args.alpha < 1 or not 0 < args.power < 1:
            raise CompareError("--alpha and --power must lie strictly between 0 and 1")
        runs = load_runs(args.eval_dirs)
        check_same_metadata(runs)
        runs, aside = split_standard(runs, include_nonstandard=args.include_controls)
        for run, why in aside:
            print(f"{PROG}: not ranked: {run.name} ({run.path}) is not a standard run ({why}); "
                  "pass --include_controls to rank it beside the others", file=sys.stderr)
        if len(runs) < 2:
            raise CompareError(f"{len(runs)} standard run(s) left to rank; pass "
                               "--include_controls to rank control runs")
        check_same_items(runs)
        result = compare_runs(runs, seed=args.seed, n_boot=args.n_boot,
                              subsample_fraction=args.subsample_fraction, alpha=args.alpha,
                              power=args.power)
        if args.out is not None:
            try:
                write_atomic(args.out, json.dumps(result, ensure_ascii=False, indent=2) + "\n")
            except OSError as exc:
                raise CompareError(f"{args.out}: cannot write ({exc.strerror}); choose a "
                                   "writable --out path") from None
    except CompareError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(leaderboard_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
