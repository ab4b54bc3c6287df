"""The README and docs/ are tested like code.

* Every command line in a fenced shell block, and every inline code span that starts with
  one of our commands, is checked against the real thing: argparse flags (and choices) of
  each console script and subcommand, Hydra overrides of ``rose-gen`` composed with
  ``conf/`` (keys, groups, options), ``-T`` options of the inspect task against its
  signature, and ``--flags`` of bench/ and scripts/ programs against their ``--help``.
* Every relative link and image resolves, anchors included.
* Measured figures live in *figure blocks*: ``<!-- figures: bench/FILE.md#section -->`` ...
  ``<!-- /figures -->``; the block must equal that section of a file a bench script writes,
  and no page quotes a measured figure outside one (``FIGURE_ALLOW`` lists
  the settings that look like figures, each with its reason).
* The README stays short and every docs page opens with what it is for.

The README's loop itself runs end to end in ``tests/test_readme_loop.py``.
"""

from __future__ import annotations

import argparse
import inspect as pyinspect
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from scripts.sync_doc_figures import FIGURES, figure_source, github_slug

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 200

# console script -> module with build_parser(); subcommands handled in _parser_for
PARSERS: dict[str, str] = {
    "rose-eval": "rose_eval.cli.eval",
    "rose-run": "rose_eval.cli.run",
    "rose-human": "rose_eval.cli.human",
    "rose-export": "rose_eval.cli.export",
    "rose-verify": "rose_gen.cli.verify",
    "rose-audit": "rose_gen.cli.audit",
    "rose-replay": "rose_gen.cli.replay",
}
SUBPARSERS: dict[tuple[str, str], str] = {
    ("rose-eval", "compare"): "rose_eval.cli.compare",
    ("rose-eval", "power"): "rose_eval.cli.power",
    ("rose-eval", "report"): "rose_eval.cli.report",
    ("rose-gen", "preview"): "rose_gen.cli.preview",
}
OURS = {*PARSERS, "rose-gen", "inspect", "./run.sh"}
SHELL_LANGS = {"", "bash", "sh", "shell", "console"}
PLACEHOLDER = re.compile(r"[<>$]|^[A-Z][A-Z0-9_]*$|^\.\.\.$|…")


@dataclass(frozen=True)
class Command:
    """One command line quoted in a doc."""

    doc: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{_rel(self.doc)}:{self.line}: {self.text}"


# ---------------------------------------------------------------- extraction

def _fenced_blocks(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """(first line number, language, lines) of every fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if m:
            start, lang, body = i + 2, m.group(1), []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, lang, body
        i += 1


def _blank_fences(text: str) -> str:
    """``text`` with every fenced block blanked, line numbers kept."""
    return re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def _segments(line: str) -> Iterator[str]:
    """The simple commands of a shell line (split at ; && and spaced pipes), env prefixes dropped."""
    for part in re.split(r";|&&|\s\|\s", line):
        words = part.strip().split()
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words.pop(0)
        if words and words[0] in ("do", "then"):
            words.pop(0)
        if words:
            yield " ".join(words)


def _rel(doc: Path) -> str:
    return str(doc.relative_to(ROOT)) if doc.is_relative_to(ROOT) else doc.name


def _is_ours(segment: str) -> bool:
    first = segment.split()[0]
    script = re.match(r"^(bench|scripts)/\S+\.py$", first)
    return first in OURS or bool(script) or bool(re.match(r"^(\.venv/bin/)?python3?$", first) and
                                                 re.search(r"\s(bench|scripts)/\S+\.py", segment))


def quoted_commands(doc: Path) -> list[Command]:
    """Our command lines in ``doc``: fenced shell blocks and inline code spans."""
    text = doc.read_text(encoding="utf-8")
    found: list[Command] = []
    for start, lang, body in _fenced_blocks(text):
        if lang not in SHELL_LANGS:
            continue
        joined, first = "", None
        for offset, raw in enumerate(body):
            line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
            first = start + offset if first is None else first
            if line.endswith("\\"):
                joined += line[:-1] + " "
                continue
            joined += line
            for segment in _segments(joined):
                if _is_ours(segment):
                    found.append(Command(doc, first, segment))
            joined, first = "", None
    fence_free = _blank_fences(text)
    for number, line in enumerate(fence_free.splitlines(), 1):
        for span in re.findall(r"`([^`]+)`", line):
            if _is_ours(span) and re.search(r"\s\[?-|=", span):
                found.append(Command(doc, number, span))
    return found


ALL_COMMANDS = [c for doc in DOC_FILES for c in quoted_commands(doc)]


# ---------------------------------------------------------------- checkers

def _tokens(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    out = []
    for word in words:  # drop the brackets of optional arguments: [--flag X], keep key=[a,b]
        word = word.lstrip("[") if word.startswith("[") and "=[" not in word else word
        while word.endswith("]") and word.count("]") > word.count("["):
            word = word[:-1]
        if word:
            out.append(word)
    return out


@cache
def _build(module: str) -> argparse.ArgumentParser:
    import importlib

    return importlib.import_module(module).build_parser()


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return None


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def _alternatives(value: str) -> list[str]:
    return [] if PLACEHOLDER.search(value) else [v for v in value.split("|") if v]


def check_argparse(command: Command) -> list[str]:
    """Problems of an argparse command's flags, subcommands and choices."""
    words = _tokens(command.text)
    parser = _build(PARSERS[words[0]])
    rest = words[1:]
    if words[0] == "rose-eval" and rest and (words[0], rest[0]) in SUBPARSERS:
        parser, rest = _build(SUBPARSERS[(words[0], rest[0])]), rest[1:]
    while rest and not rest[0].startswith("-") and (sub := _subparser(parser, rest[0])) is not None:
        parser, rest = sub, rest[1:]
    return _parser_problems(parser, rest)


def _parser_problems(parser: argparse.ArgumentParser, rest: list[str]) -> list[str]:
    """Flags of ``rest`` that ``parser`` lacks, and values outside an option's choices."""
    options, problems = _options(parser), []
    for i, word in enumerate(rest):
        if not word.startswith("-") or word in ("-", "--") or re.match(r"^-\d", word):
            continue
        flag, _, inline = word.partition("=")
        action = options.get(flag)
        if action is None:
            problems.append(f"{flag} is not an option of {parser.prog}")
            continue
        value = inline or (rest[i + 1] if i + 1 < len(rest) and action.nargs != 0 else "")
        if action.choices and value and not value.startswith("-"):
            bad = [v for v in _alternatives(value) if v not in action.choices]
            if bad:
                problems.append(f"{flag} {'|'.join(bad)}: not among {sorted(action.choices)}")
    positional = [a for a in parser._actions if not a.option_strings and a.choices]
    for action in positional:  # e.g. rose-export predictions <harness>
        values = [w for w in rest if not w.startswith("-")]
        if values and not PLACEHOLDER.search(values[0]):
            bad = [v for v in values[0].split("|") if v not in action.choices]
            if bad:
                problems.append(f"{'|'.join(bad)}: not among {sorted(action.choices)} ({parser.prog})")
    return problems


@cache
def _launchers() -> frozenset[str]:
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rose_gen.release.config import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        options = GlobalHydra.instance().config_loader().get_group_options("hydra/launcher")
    return frozenset(options)


def check_rose_gen(command: Command) -> list[str]:
    """Problems of a rose-gen line: subcommands, flags, and overrides composed with conf/."""
    from rose_gen.release.config import ConfigError, build_config, compose_config

    words = _tokens(command.text)[1:]
    if words and words[0] == "preview":
        return _parser_problems(_build(SUBPARSERS[("rose-gen", "preview")]), words[1:])
    if words and words[0] == "merge":
        return [f"{w} is not an option of rose-gen merge" for w in words[1:] if w.startswith("-")
                and w not in ("--overwrite", "--workers") and not w.startswith("--workers=")]
    problems, variants = [], [[]]
    for word in words:
        if word.startswith("-"):
            if word not in ("-m", "--multirun", "--cfg", "--help", "-h"):
                problems.append(f"{word} is not an option of rose-gen")
            continue
        key, sep, value = word.partition("=")
        if not sep:
            continue
        if key == "hydra/launcher":
            if not PLACEHOLDER.search(value) and value not in _launchers():
                problems.append(f"hydra/launcher={value}: not among {sorted(_launchers())}")
            continue
        if key.startswith("hydra."):
            continue
        value = re.sub(r"^range\((\d+),.*\)$", r"\1", value)
        if PLACEHOLDER.search(value):
            value = {"output_dir": "out/x", "seed": "0", "workers": "1"}.get(key.lstrip("+"), "")
            if not value:
                variants = [v + [f"{key}=???"] for v in variants] if "." in key or key.startswith("+") else variants
                continue
        options = value.split("|") if "|" in value else [value]
        variants = [v + [f"{key}={o}"] for v in variants for o in options]
    for overrides in variants:
        checked = [o for o in overrides if not o.endswith("=???")]
        keys_only = [o.split("=")[0] for o in overrides if o.endswith("=???")]
        try:
            cfg = compose_config(checked)
            for key in keys_only:
                _require_key(cfg, key.lstrip("+"))
            if not keys_only and any(o.startswith("output_dir=") for o in checked):
                build_config(cfg)
        except ConfigError as exc:
            problems.append(f"{' '.join(checked)}: {exc}")
        except KeyError as exc:
            problems.append(str(exc))
    return problems


def _require_key(cfg, dotted: str) -> None:
    from omegaconf import OmegaConf

    parent = dotted.rsplit(".", 1)[0] if "." in dotted else dotted
    if OmegaConf.select(cfg, parent, default="<missing>") == "<missing>":
        raise KeyError(f"{dotted}: {parent} is not a key of the composed config")


def check_inspect(command: Command) -> list[str]:
    """``inspect eval rose_eval/rose -T key=value``: each key is a parameter of the task."""
    from rose_eval.harness.inspect_task import rose

    words = _tokens(command.text)
    params = set(pyinspect.signature(rose).parameters)
    problems = []
    if len(words) > 2 and words[1] == "eval" and not re.search(r"rose_eval/(rose|harness/inspect_task\.py@rose)$", words[2]):
        problems.append(f"{words[2]}: not the ROSE task (rose_eval/rose)")
    for i, word in enumerate(words):
        if word == "-T" and i + 1 < len(words):
            key = words[i + 1].split("=")[0]
            if key not in params:
                problems.append(f"-T {key}: not an option of the inspect task ({sorted(params)})")
    return problems


@cache
def _help_text(script: str) -> str:
    proc = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    return proc.stdout if proc.returncode == 0 else ""


def check_script(command: Command) -> list[str]:
    """``python bench/x.py --flag``: the script exists and its --help names each flag."""
    script = re.search(r"((?:bench|scripts)/\S+\.py)", command.text).group(1)
    if not (ROOT / script).is_file():
        return [f"{script}: no such file"]
    words = [w.split("=")[0] for w in _tokens(command.text) if w.startswith("--")]
    if not words:
        return []
    help_text = _help_text(script)
    if not help_text:
        return [f"{script} --help failed"]
    return [f"{w} is not an option of {script}" for w in words if not re.search(rf"(^|[\s\[,]){re.escape(w)}\b", help_text)]


def check_run_sh(command: Command) -> list[str]:
    words = _tokens(command.text)
    cases = re.findall(r"^\s+([\w-]+)\)", (ROOT / "run.sh").read_text(), flags=re.M)
    return [] if len(words) < 2 or words[1] in cases else [f"./run.sh {words[1]}: not among {cases}"]


def check_command(command: Command) -> list[str]:
    """The problems of one quoted command line (empty: it is right)."""
    first = command.text.split()[0]
    if first in PARSERS:
        return check_argparse(command)
    if first == "rose-gen":
        return check_rose_gen(command)
    if first == "inspect":
        return check_inspect(command)
    if first == "./run.sh":
        return check_run_sh(command)
    return check_script(command)


# ---------------------------------------------------------------- links and figures

def anchors(doc: Path) -> set[str]:
    text = _blank_fences(doc.read_text(encoding="utf-8"))
    return {github_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def broken_links(doc: Path) -> list[str]:
    """Relative links and images of ``doc`` that do not resolve (file or anchor)."""
    text = _blank_fences(doc.read_text(encoding="utf-8"))
    problems = []
    for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (doc.parent / path).resolve() if path else doc
        if not resolved.exists():
            problems.append(f"{_rel(doc)}: link {target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{_rel(doc)}: link {target}: no heading #{anchor} in {path or doc.name}")
    return problems


def bench_writers(path: str) -> list[str]:
    """bench scripts whose source names ``path`` (the file they write)."""
    name = Path(path).name
    return [p.name for p in (ROOT / "bench").glob("*.py") if name in p.read_text(encoding="utf-8")]


def figure_problems(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    problems = []
    for m in FIGURES.finditer(text):
        path, section, body = m.group(1), m.group(2), m.group(3)
        where = f"{_rel(doc)}: figures from {path}"
        if not (ROOT / path).is_file():
            problems.append(f"{where}: no such file")
            continue
        if not bench_writers(path):
            problems.append(f"{where}: no bench/*.py writes it")
        try:
            expected = figure_source(path, section)
        except KeyError as exc:
            problems.append(f"{where}: {exc.args[0]}")
            continue
        if body.strip("\n") != expected.strip("\n"):
            problems.append(f"{where}{'#' + section if section else ''}: the block differs from the file "
                            "(re-run the bench script, then python scripts/sync_doc_figures.py)")
    return problems


MEASURED = re.compile(r"\d(?:[\d,.]*\d)?\s?(?:%|×|x\b|\s?s wall|\s?ms\b|\s?MB\b|\s?items/s)")


@dataclass(frozen=True)
class FigureAllowance:
    """A line outside figure blocks that may quote a figure-like number, and why.

    ``text`` is a substring of the line. A setting (a threshold, a confidence level, a preset's
    knob) is not a measurement; a bound a test asserts is kept honest by that test, so
    ``evidence`` names the test file and a string it must contain.
    """

    page: str
    text: str
    reason: str
    evidence: tuple[str, str] | None = None


SETTING = "a setting, not a measurement"
FIGURE_ALLOW: tuple[FigureAllowance, ...] = (
    FigureAllowance("controls.md", "DejaVu Sans Bold at 40 % of the cell", SETTING,
                    ("rose_gen/render/controls.py", "LABEL_SHARE, MAX_LABEL_PX, MIN_LABEL_PX = 0.40, 28")),
    FigureAllowance("controls.md", "legs 45 % of the cell", SETTING, ("rose_gen/render/controls.py", "MARK_SHARE = 0.45")),
    FigureAllowance("controls.md", "each with a 95 % scene bootstrap interval", SETTING),
    FigureAllowance("generating.md", "margin (5 % of the cell, 2–5 px)", SETTING),
    FigureAllowance("generating.md", "the plug-in's own 75 MB default", "the Ray launcher plug-in's setting"),
    FigureAllowance("generating.md", "| scenes with a second exception identity | 0 | 0 | 50 % | 100 % |", SETTING,
                    ("conf/difficulty/hard.yaml", "second_identity_share: 0.5")),
    FigureAllowance("generating.md", "(4× for glyph and emoji cells; 2× for", SETTING),
    FigureAllowance("generating.md", "within 5 % as measured by `rose-audit`", "the audit's limit (STANDARD_LIMITS)",
                    ("rose_gen/assets/shortcuts.py", "STANDARD_LIMITS")),
    FigureAllowance("generating.md", "exactly (Glyph 17 %, EmojiStyle 23 %, EmojiContent 52 %", "v0.1's shares, asserted exactly",
                    ("tests/rose_gen/scene/test_plan.py", '"ROSE-ChineseGlyph": 0.17')),
    FigureAllowance("scoring.md", "95 % intervals for every headline number", SETTING),
    FigureAllowance("scoring.md", "At 0 or 100 % nothing can be estimated", "a boundary case of the formula"),
    FigureAllowance("scoring.md", "(0.025^(1/4) = 39.8 %)", "the formula's arithmetic, shown"),
    FigureAllowance("scoring.md", "effective-n interval's at least 95 %", "bounds a test asserts",
                    ("tests/rose_eval/analyses/test_precision.py", "covered_boot / runs < 0.92")),
    FigureAllowance("scoring.md", "nominal 95 % interval covering it less than 92 %", "bounds a test asserts",
                    ("tests/rose_eval/analyses/test_precision.py", "covered_boot / runs < 0.92")),
    FigureAllowance("scoring.md", "(80 % power at α/m", SETTING),
    FigureAllowance("scoring.md", "80 % upper confidence bound is printed too", SETTING),
    FigureAllowance("scoring.md", "within ±3 points of the stated 80 %", "bounds a test asserts",
                    ("tests/rose_eval/analyses/test_power.py", "abs(power - 0.8) <= TOLERANCE")),
    FigureAllowance("scoring.md", "with the 95 % intervals of `analyses.bootstrap`", SETTING),
    FigureAllowance("validity.md", "ink in ≥ 2 separated parts of ≥ 10 % each", SETTING),
    FigureAllowance("validity.md", "χ² over 3 × 3 zones", SETTING),
    FigureAllowance("validity.md", "areas within 5 % for ≥ 98 % of", "the audit's limits (STANDARD_LIMITS)",
                    ("rose_gen/assets/shortcuts.py", "STANDARD_LIMITS")),
    FigureAllowance("validity.md", "≤ 5 % of PixelEdit exceptions mostly off-palette", "the audit's limits"),
    FigureAllowance("validity.md", "differs from the majority's by more than 5 %", "a column's definition"),
)


def _outside_blocks(doc: Path) -> list[tuple[int, str]]:
    text = FIGURES.sub(lambda m: "\n" * m.group(0).count("\n"), doc.read_text(encoding="utf-8"))
    return [(n, line) for n, line in enumerate(_blank_fences(text).splitlines(), 1)
            if MEASURED.search(re.sub(r"`[^`]*`", "", line))]


def _allowed(doc: Path, line: str) -> bool:
    return any(a.page == doc.name and a.text in line for a in FIGURE_ALLOW)


def loose_figures(doc: Path) -> list[str]:
    """Lines of ``doc`` outside figure blocks and code that quote a figure no allowance covers."""
    return [f"{_rel(doc)}:{n}: {line.strip()}" for n, line in _outside_blocks(doc) if not _allowed(doc, line)]


# ---------------------------------------------------------------- tests

def test_docs_quote_commands():
    """The docs quote a good share of command lines (the extraction works)."""
    by_first = {c.text.split()[0] for c in ALL_COMMANDS}
    assert len(ALL_COMMANDS) >= 40
    assert {"rose-gen", "rose-run", "rose-eval", "rose-export", "inspect", "./run.sh"} <= by_first


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=lambda c: f"{c.doc.name}:{c.line}")
def test_quoted_command_exists(command: Command):
    assert check_command(command) == [], command.where()


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda d: d.name)
def test_links_resolve(doc: Path):
    assert broken_links(doc) == []


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda d: d.name)
def test_figure_blocks_are_bench_output(doc: Path):
    assert figure_problems(doc) == []


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda d: d.name)
def test_no_page_quotes_a_measured_figure_outside_a_block(doc: Path):
    """Every measured figure on every page comes from a bench record, through a figure block."""
    assert loose_figures(doc) == []


def test_figure_allowances_are_live_and_backed():
    """Each allowance still matches a line it excuses, and its evidence says what it claims."""
    pages = {d.name: d for d in DOC_FILES}
    for a in FIGURE_ALLOW:
        assert a.page in pages, a
        assert any(a.text in line for _, line in _outside_blocks(pages[a.page])), f"stale allowance: {a}"
        if a.evidence:
            path, token = a.evidence
            assert token in (ROOT / path).read_text(encoding="utf-8"), f"{a}: {path} lacks {token!r}"


def test_readme_and_performance_page_quote_records():
    readme = ROOT / "README.md"
    assert FIGURES.search(readme.read_text(encoding="utf-8")), "the README shows what the numbers mean"
    performance = ROOT / "docs" / "performance.md"
    assert len(FIGURES.findall(performance.read_text(encoding="utf-8"))) >= 10


def test_readme_is_short_and_links_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for page in DOC_FILES[1:]:
        assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"


@pytest.mark.parametrize("page", DOC_FILES[1:], ids=lambda d: d.name)
def test_page_opens_with_its_purpose(page: Path):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and not lines[1].strip() and lines[2].strip() and not lines[2].startswith("#")


# The checkers must catch what they are for: each case below is a broken doc line.
BROKEN = [
    "rose-run --dataset_root D --split test --solver oracle|psychic --output p.jsonl",
    "rose-run --dataset_root D --sampels 3 --output p.jsonl",
    "rose-eval compare a b --alpah 0.05",
    "rose-export predictions lmms_eval out --output p.jsonl",
    "rose-gen profile=v0_2 output_dir=out/x",
    "rose-gen profile=mini output_dir=out/x subset.glyph.scenez=3",
    "rose-gen -m hydra/launcher=rose_k8s 'shard.index=range(0,2)' shard.count=2 profile=mini output_dir=o",
    "rose-gen profile=mini difficulty=easy|brutal output_dir=out/x",
    "rose-gen preview out/mini --per_subsett 3",
    "inspect eval rose_eval/rose -T dataset_rot=out/mini",
    "python bench/bench_robust.py --scenez 3",
    "./run.sh deploy",
]


@pytest.mark.parametrize("text", BROKEN)
def test_checker_catches_broken_line(text: str):
    assert check_command(Command(ROOT / "README.md", 1, text)) != []


def test_checker_accepts_good_lines():
    good = ["rose-run --dataset_root D --split test --solver oracle|random|cv --output p.jsonl",
            "rose-gen profile=mini difficulty=easy|hard output_dir=out/x subset.glyph.scenes=3",
            "rose-gen -m hydra/launcher=joblib 'shard.index=range(0,2)' shard.count=2 profile=mini output_dir=o",
            "rose-export predictions inspect logs/x.eval --output p.jsonl",
            "inspect eval rose_eval/rose -T dataset_root=out/mini -T split=dev"]
    for text in good:
        assert check_command(Command(ROOT / "README.md", 1, text)) == [], text


def test_link_and_figure_checks_catch_breakage(tmp_path: Path):
    (tmp_path / "scoring.md").write_text("# Scoring\n", encoding="utf-8")
    doc = tmp_path / "probe.md"
    doc.write_text("# Probe\n\nfor the test.\n\n[a](nowhere.md) [b](scoring.md#no-such-heading) [c](scoring.md#scoring)\n\n"
                   "<!-- figures: bench/presets.md -->\nmade-up figures\n<!-- /figures -->\n"
                   "The cv baseline scores 84 % at hard.\n"
                   "DejaVu Sans Bold at 40 % of the cell\n", encoding="utf-8")  # allowed on controls.md only
    assert len(broken_links(doc)) == 2
    assert any("differs" in p for p in figure_problems(doc))
    assert len(loose_figures(doc)) == 2
