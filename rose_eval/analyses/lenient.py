"""Lenient diagnostic parse: the last well-formed answer inside verbose output.

Strict PASS treats any prose around the answer as invalid. This diagnostic asks how
much of that loss is formatting: it finds the last substring that is a complete
answer in the task mode's grammar (`COUNT(n)`; `CLICK(..); ...; DONE`;
`CLICK(..); ...; SUBMIT(n)`), parses it with the strict parser and scores it with the
strict scorer. It is reported separately as `lenient_pass_rate` and never changes
PASS or VALID. An answer that is already strictly valid is scored as it stands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES, by_subset, macro, mean, template_of
from rose_eval.protocol import parse_answer
from rose_eval.score import score_item

_CLICK = r"CLICK\s*\(\s*R\s*\d+\s*,\s*C\s*\d+\s*\)"
CLICK_TOKEN = re.compile(rf"\s*{_CLICK}\s*", re.I)
CLICK_AT_END = re.compile(rf"\b{_CLICK}\s*\Z", re.I)
# Where an answer ends, per task mode; CLICK modes then extend backwards over CLICK tokens.
ANSWER_END: dict[str, re.Pattern[str]] = {
    "COUNT": re.compile(r"\bCOUNT\s*\(\s*\d+\s*\)", re.I),
    "CLICK": re.compile(r"\bDONE\b", re.I),
    "CLICK_COUNT": re.compile(r"\bSUBMIT\s*\(\s*\d+\s*\)", re.I),
}
CHAINED_MODES = frozenset({"CLICK", "CLICK_COUNT"})


def _chain_start(text: str, end: int) -> int:
    """Start of the `CLICK(..); ...;` run that ends just before `end` (linear, no regex backtracking)."""
    start = end
    while True:
        semicolon = text.rfind(";", 0, start)
        if semicolon < 0 or text[semicolon + 1:start].strip():
            return start
        previous = text.rfind(";", 0, semicolon)
        token = text[previous + 1:semicolon]
        if CLICK_TOKEN.fullmatch(token):
            start = previous + 1 + (len(token) - len(token.lstrip()))
            continue
        tail = CLICK_AT_END.search(token)
        return previous + 1 + tail.start() if tail else start


def last_answer(raw_text: object, task_mode: str) -> str | None:
    """The last well-formed answer substring of the text for the mode, or None."""
    pattern = ANSWER_END.get(task_mode)
    if pattern is None or not isinstance(raw_text, str):
        return None
    last = None
    for match in pattern.finditer(raw_text):
        last = match
    if last is None:
        return None
    start = _chain_start(raw_text, last.start()) if task_mode in CHAINED_MODES else last.start()
    return raw_text[start:last.end()]


def lenient_pass(item: Mapping[str, Any], row: Mapping[str, Any] | None) -> tuple[int, bool]:
    """(lenient pass, whether an answer was extracted from invalid text) for one item.

    Without its metadata row an invalid item cannot be re-scored and keeps its strict 0.
    """
    if item.get("format_valid") == 1 or row is None:
        return int(item.get("pass") or 0), False
    task_mode = str(row.get("task_mode"))
    candidate = last_answer(item.get("raw_text"), task_mode)
    if candidate is None or not parse_answer(candidate, task_mode).format_valid:
        return 0, False
    return int(score_item(row, {"raw_text": candidate}).get("pass") or 0), True


def lenient_summary(items: Sequence[Mapping[str, Any]],
                    metadata: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """lenient_pass_rate overall, by subset and by template, next to the strict rate."""
    scored = []
    for item in items:
        row = metadata.get(str(item.get("item_id")))
        passed, extracted = lenient_pass(item, row)
        scored.append({**item, "lenient_pass": passed, "lenient_extracted": int(extracted),
                       "lenient_unscorable": int(row is None and item.get("format_valid") != 1)})

    def rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {
            "n": len(rows),
            "pass_rate": mean(r.get("pass") for r in rows),
            "lenient_pass_rate": mean(r["lenient_pass"] for r in rows),
            "n_extracted": sum(r["lenient_extracted"] for r in rows),
            "n_rescued": sum(int(r["lenient_pass"] == 1 and r.get("pass") != 1) for r in rows),
            "n_without_metadata": sum(r["lenient_unscorable"] for r in rows),
        }

    grouped = by_subset(scored)
    templates = [t for t in ALL_TEMPLATES if any(template_of(r) == t for r in scored)]
    by_template = {}
    for template in templates:
        per_subset = [
            [r for r in rows if template_of(r) == template] for rows in grouped.values()
        ]
        by_template[template] = {
            **rates([r for r in scored if template_of(r) == template]),
            "lenient_pass_rate_macro": macro(
                mean(r["lenient_pass"] for r in rows) for rows in per_subset if rows
            ),
        }
    return {
        "overall": rates(scored),
        "by_subset": {subset: rates(rows) for subset, rows in grouped.items()},
        "by_template": by_template,
        "note": "diagnostic only: last well-formed answer in the text, strict parser and "
        "scorer; PASS and VALID are unchanged",
    }
