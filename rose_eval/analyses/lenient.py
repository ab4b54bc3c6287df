"""Lenient diagnostic parse: the last complete answer inside verbose output.

Strict PASS treats any prose around the answer as invalid. This diagnostic asks how much
of that loss is formatting: it takes the **last complete answer** in the text for the
task mode and scores it with the strict parser and scorer. It is reported separately
(``lenient_pass_rate``) and never changes PASS or VALID; an answer that is already
strictly valid is scored as it stands.

A complete answer is ``COUNT(n)`` (COUNT mode); a chain ``CLICK(..); ...; DONE`` (CLICK)
or ``CLICK(..); ...; SUBMIT(n)`` (CLICK_COUNT), its clicks joined by ``;``. A chain
without clicks (a bare DONE) counts only as the protocol token, never as an English word:
written in capitals (``The answer is DONE.``), or in any case but alone in its clause
(nothing but spaces and punctuation between it and the nearest line break, ``;``, ``:``,
``.``, ``!``, ``?`` or the text's ends: ``Nothing to click:\ndone``). So "so I am done."
is prose, not an answer, and a chain followed by "... that is done" keeps its clicks.
Candidates are tried from the end of the text backwards;
the first complete one wins. The walk is linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES, by_subset
from rose_eval.protocol import CELL, parse_answer
from rose_eval.score import passes
from rose_eval.summaries import Population, Stat, Table, count, macro, mean, summarize
from rose_eval.truth import item_truth
from rose_eval.vocab import template_of

_CLICK = rf"CLICK\s*\(\s*{CELL}\s*\)"
WHOLE_CLICK = re.compile(rf"\s*{_CLICK}\s*", re.IGNORECASE)
CLICK_AT_END = re.compile(rf"\b{_CLICK}\s*\Z", re.IGNORECASE)
# Where an answer ends, per task mode; chained modes then extend back over their clicks.
ANSWER_END: dict[str, re.Pattern[str]] = {
    "COUNT": re.compile(r"\bCOUNT\s*\(\s*\d+\s*\)", re.IGNORECASE),
    "CLICK": re.compile(r"\bDONE\b", re.IGNORECASE),
    "CLICK_COUNT": re.compile(r"\bSUBMIT\s*\(\s*\d+\s*\)", re.IGNORECASE),
}
CHAINED_MODES = frozenset({"CLICK", "CLICK_COUNT"})
CLAUSE_ENDS = frozenset("\n\r;:.!?")


def _before_spaces(text: str, position: int) -> int:
    """The position after the last non-space character before ``position``."""
    while position > 0 and text[position - 1].isspace():
        position -= 1
    return position


def _chain_start(text: str, end: int) -> int:
    """Start of the run of ``CLICK(..) ;`` tokens that ends just before ``end`` (``end`` if none).

    Walks back one ``;``-separated token at a time; a token that is not a whole CLICK ends
    the run, though a CLICK at its very end still belongs to it ("see CLICK(R1,C1); DONE").
    """
    start = end
    while True:
        semicolon = _before_spaces(text, start) - 1
        if semicolon < 0 or text[semicolon] != ";":
            return start
        token_start = text.rfind(";", 0, semicolon) + 1
        token = text[token_start:semicolon]
        if WHOLE_CLICK.fullmatch(token):
            start = token_start + len(token) - len(token.lstrip())
            continue
        tail = CLICK_AT_END.search(token)
        return token_start + tail.start() if tail else start


def _alone_in_clause(text: str, start: int, end: int) -> bool:
    """Only spaces and punctuation between text[start:end] and the clause's ends."""
    left = start - 1
    while left >= 0 and text[left] not in CLAUSE_ENDS:
        if text[left].isalnum():
            return False
        left -= 1
    right = end
    while right < len(text) and text[right] not in CLAUSE_ENDS:
        if text[right].isalnum():
            return False
        right += 1
    return True


def _bare_done(text: str, match: re.Match[str]) -> bool:
    """A DONE without clicks is an answer when capitalised or alone in its clause."""
    return match.group() == "DONE" or _alone_in_clause(text, match.start(), match.end())


def last_answer(raw_text: object, task_mode: str) -> str | None:
    """The last complete answer in the text for the task mode, or None."""
    pattern = ANSWER_END.get(task_mode)
    if pattern is None or not isinstance(raw_text, str):
        return None
    ends = list(pattern.finditer(raw_text))
    for match in reversed(ends):
        if task_mode not in CHAINED_MODES:
            return match.group()
        start = _chain_start(raw_text, match.start())
        if start < match.start() or task_mode != "CLICK" or _bare_done(raw_text, match):
            return raw_text[start:match.end()]
    return None


def lenient_pass(item: Mapping[str, Any], row: Mapping[str, Any] | None) -> tuple[int, bool]:
    """(lenient pass, whether an answer was taken from invalid text) for one item.

    Without its metadata row an invalid item cannot be re-scored and keeps its strict 0.
    """
    if item.get("format_valid") == 1 or row is None:
        return int(item.get("pass") or 0), False
    task_mode = str(row.get("task_mode"))
    candidate = last_answer(item.get("raw_text"), task_mode)
    if candidate is None:
        return 0, False
    parsed = parse_answer(candidate, task_mode)
    if not parsed.format_valid:
        return 0, False
    return int(passes(item_truth(row), parsed)), True


LENIENT_TABLE: Table = (
    Stat("n", reduce=count),
    Stat("pass_rate", "pass"),
    Stat("lenient_pass_rate", "lenient_pass"),
    Stat("n_extracted", population="extracted", reduce=count),
    Stat("n_rescued", population="rescued", reduce=count),
    Stat("n_without_metadata", population="unscorable", reduce=count),
)
LENIENT_POPULATIONS: dict[str, Population] = {
    "extracted": Population(lambda r: r["extracted"]),
    "rescued": Population(lambda r: r["lenient_pass"] == 1 and r["pass"] != 1),
    "unscorable": Population(lambda r: r["unscorable"]),
}


def lenient_summary(items: Sequence[Mapping[str, Any]],
                    metadata: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """lenient_pass_rate overall, by subset and by template, next to the strict rate."""
    outcomes = []
    for item in items:
        row = metadata.get(str(item.get("item_id")))
        passed, extracted = lenient_pass(item, row)
        outcomes.append({
            "rose_subset": item.get("rose_subset"), "task_template": template_of(item),
            "pass": item.get("pass"), "lenient_pass": passed, "extracted": extracted,
            "unscorable": row is None and item.get("format_valid") != 1,
        })

    def rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return summarize(rows, LENIENT_TABLE, LENIENT_POPULATIONS)

    subsets = by_subset(outcomes)
    by_template = {}
    for template in ALL_TEMPLATES:
        rows = [r for r in outcomes if r["task_template"] == template]
        if rows:
            per_subset = ([r["lenient_pass"] for r in members if r["task_template"] == template]
                          for members in subsets.values())
            by_template[template] = {**rates(rows), "lenient_pass_rate_macro": macro(
                mean(values) for values in per_subset if values)}
    return {
        "overall": rates(outcomes),
        "by_subset": {subset: rates(rows) for subset, rows in subsets.items()},
        "by_template": by_template,
        "note": "diagnostic only: last complete answer in the text, strict parser and "
        "scorer; PASS and VALID are unchanged",
    }
