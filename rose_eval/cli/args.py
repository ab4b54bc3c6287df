"""The toolkit's one argument parser: a command-line fault is one stderr line and exit 2.

argparse's own answer to a bad flag is the whole usage block and a traceback-free exit 2;
a user who mistyped one flag needs one line saying which, and where to read more:

    rose-run: error: argument --max_tokens: invalid int value: 'x' (command line); see rose-run --help

Every console script and subcommand of rose_eval and rose_gen builds its parser with
:class:`OneLineParser` (``tests/rose_eval/cli/test_args.py`` checks that no other parser is
built). Subparsers inherit the class, so ``rose-export predictions --bogus`` is one line too.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit status 2.

    The line starts with the command's name (``command``, default ``prog``; a subparser
    keeps its parent's) and points at the help of the (sub)command that failed.
    """

    def __init__(self, *args: Any, command: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command or self.prog

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", functools.partial(type(self), command=self.command))
        return super().add_subparsers(**kwargs)

    def error(self, message: str) -> NoReturn:
        line = " ".join(f"{message} (command line); see {self.prog} --help".split())
        print(f"{self.command}: error: {line}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)

    def parse_or_status(self, argv: Sequence[str] | None) -> argparse.Namespace | int:
        """The parsed arguments, or the exit status when parsing ended the command (--help: 0,
        a fault: 2, after its one line)."""
        try:
            return self.parse_args(argv)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (no upper bound when ``high`` is None)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value
    return parse


def finite_float(text: str) -> float:
    """An argparse type: a finite number (nan and inf are refused: JSON cannot carry them)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def http_url(text: str) -> str:
    """An argparse type: an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1."""
    parts = urllib.parse.urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"expected an http(s) URL with a host like "
                                         f"http://127.0.0.1:8000/v1, got {text!r}")
    return text.strip()
