"""The one argument parser: every command answers a bad flag with one line and exit 2."""

from __future__ import annotations

import argparse
import ast
import importlib
from pathlib import Path

import pytest

import rose_eval
import rose_gen
from rose_eval.cli.args import EXIT_USAGE, OneLineParser, int_in

# (name printed first, module with main(argv), argv prefix): every argparse command we ship.
COMMANDS = [
    ("rose-eval", "rose_eval.cli.eval", []),
    ("rose-eval compare", "rose_eval.cli.compare", []),
    ("rose-eval report", "rose_eval.cli.report", []),
    ("rose-eval compare", "rose_eval.cli.eval", ["compare"]),  # dispatched by rose-eval
    ("rose-eval power", "rose_eval.cli.power", []),
    ("rose-eval power", "rose_eval.cli.eval", ["power"]),
    ("rose-run", "rose_eval.cli.run", []),
    ("rose-human", "rose_eval.cli.human", []),
    ("rose-export", "rose_eval.cli.export", []),
    ("rose-export", "rose_eval.cli.export", ["predictions"]),  # a subcommand's parser
    ("rose-verify", "rose_gen.cli.verify", []),
    ("rose-audit", "rose_gen.cli.audit", []),
    ("rose-replay", "rose_gen.cli.replay", []),
    ("rose-gen preview", "rose_gen.cli.preview", []),
]


def _status(module: str, argv: list[str]) -> int:
    try:
        return importlib.import_module(module).main(argv)
    except SystemExit as exc:  # rose-replay's parser check ends the process the same way
        return exc.code


@pytest.mark.parametrize(("name", "module", "prefix"), COMMANDS,
                         ids=[f"{m}:{' '.join(p)}" for _, m, p in COMMANDS])
def test_bad_arguments_are_one_line_and_exit_2(name, module, prefix, capsys, tmp_path):
    status = _status(module, [*prefix, "--no_such_flag", "x"])
    out, err = capsys.readouterr()
    assert status == EXIT_USAGE
    assert out == "" and err.endswith("\n") and err.count("\n") == 1, err  # no usage block
    assert err.startswith(f"{name}: error: ")
    assert any(word in err for word in ("--no_such_flag", "are required", "invalid choice")), err
    assert err.rstrip().endswith("--help")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("name", "module", "prefix"), COMMANDS[:8],
                         ids=[f"{m}:{' '.join(p)}" for _, m, p in COMMANDS[:8]])
def test_help_is_printed_and_exits_0(name, module, prefix, capsys):
    assert _status(module, [*prefix, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and "--help" in out


def test_a_subcommand_error_points_at_the_subcommand_help(capsys):
    from rose_eval.cli.export import main

    assert main(["vlmevalkit"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rose-export: error: the following arguments are required: release, output")
    assert err.rstrip().endswith("see rose-export vlmevalkit --help")


def test_parse_or_status():
    parser = OneLineParser(prog="tool")
    parser.add_argument("--n", type=int_in(1, 3), default=1)
    assert parser.parse_or_status(["--n", "2"]).n == 2
    assert parser.parse_or_status(["--n", "4"]) == 2


@pytest.mark.parametrize(("text", "message"), [
    ("x", "expected an integer, got 'x'"), ("-1", "must be at least 0, got -1"),
    ("11", "must be from 0 to 10, got 11"),
])
def test_int_in_refuses(text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        int_in(0, 10 if text == "11" else None)(text)


def _parsers_built(path: Path) -> list[str]:
    """Lines where a module builds an argparse parser, or subclasses one, itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Call):
            names = [node.func]
        elif isinstance(node, ast.ClassDef):
            names = list(node.bases)
        for name in names:
            called = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", "")
            if called == "ArgumentParser":
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_command_builds_its_own_parser():
    own = Path(rose_eval.__file__).parent / "cli" / "args.py"
    modules = [p for package in (rose_eval, rose_gen)
               for p in sorted(Path(package.__file__).parent.rglob("*.py")) if p != own]
    assert len(modules) > 100
    assert [hit for path in modules for hit in _parsers_built(path)] == []


def test_the_scan_sees_a_parser(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import argparse\nfrom argparse import ArgumentParser\n"
                      "p = argparse.ArgumentParser()\nclass P(ArgumentParser):\n    pass\n")
    assert sorted(_parsers_built(sample)) == ["sample.py:3", "sample.py:4"]
