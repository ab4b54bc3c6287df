"""``rose-human``: answer a release split in the browser, for a human baseline.

    rose-human --dataset_root REL --split test --output human.jsonl [--name NAME]
               [--subsets ...] [--templates ...] [--limit N] [--shuffle --seed S] [--port P]

Serves a page on 127.0.0.1 and prints its address (with the session token). Each answer
is appended to ``--output`` as a predictions row (``model`` = ``human:<name>``, the formal
answer in ``raw_text``, ``seconds`` taken) that ``rose-eval`` scores like any model's.
Running the same command again resumes: items with a row are done.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rose_eval.cli.args import EXIT_USAGE, OneLineParser
from rose_eval.human.server import HumanServer
from rose_eval.human.session import HumanSession, SessionError
from rose_eval.runners.dataset import DatasetError, Selection, load_split
from rose_eval.vocab import SPLITS

EXIT_OK = 0
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def build_parser() -> OneLineParser:
    """The flags of rose-human."""
    p = OneLineParser(prog="rose-human", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dataset_root", type=Path, required=True, help="release folder (metadata_<split>.jsonl, images/)")
    p.add_argument("--split", choices=SPLITS, default="test")
    p.add_argument("--output", type=Path, required=True, help="predictions JSONL (appended; resumed when it exists)")
    p.add_argument("--name", default="anonymous", help="who answers; rows carry model = human:<name>")
    p.add_argument("--subsets", nargs="*", default=[], help="subsets: full, short (PixelEdit) or id prefix (PEDIT)")
    p.add_argument("--templates", nargs="*", default=[], help="templates: T1..T5 or full names")
    p.add_argument("--limit", type=int, default=0, help="answer the first N selected items (0 = all)")
    p.add_argument("--shuffle", action="store_true", help="shuffle the items (reproducibly, from --seed)")
    p.add_argument("--seed", type=int, default=42, help="seed of --shuffle")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0 = any free port)")
    return p


def _split_list(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def open_session(args: argparse.Namespace) -> HumanSession:
    """The session for parsed arguments (raises DatasetError or SessionError with one line)."""
    if not NAME.match(args.name):
        raise SessionError(f"--name {args.name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    if args.limit < 0:
        raise SessionError(f"--limit must be 0 or more, not {args.limit}")
    selection = Selection(subsets=_split_list(args.subsets), templates=_split_list(args.templates),
                          shuffle=args.shuffle, seed=args.seed)
    loaded = load_split(args.dataset_root, args.split, selection)
    items = loaded.items[: args.limit] if args.limit else loaded.items
    return HumanSession(items, args.output, f"human:{args.name}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-human``; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    if not 0 <= args.port <= 65535:
        print(f"rose-human: error: --port {args.port} is not a port number (0-65535)", file=sys.stderr)
        return EXIT_USAGE
    try:
        session = open_session(args)
    except (DatasetError, SessionError) as exc:
        print(f"rose-human: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        server = HumanServer(session, args.port)
    except OSError as exc:
        session.close()
        print(f"rose-human: error: cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
              "pass another --port", file=sys.stderr)
        return EXIT_USAGE
    state = session.state()
    print(f"rose-human: {state['done']} of {state['total']} items done; answers go to {args.output}\n"
          f"rose-human: open {server.url}\nrose-human: Ctrl+C stops (answers are saved as you go)",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        session.close()
    state = session.state()
    print(f"rose-human: stopped after {time.monotonic() - started:.0f} s; {state['done']} of {state['total']} "
          "items done", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
