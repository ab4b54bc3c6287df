"""The answer prior: the best blind guess from the prompt text and the dev split's answers.

A guesser that never looks at the image still knows three things a model sees: which task
the prompt's sentence asks for (the template: its wording names it one to one), which
subset the scene is from (glyphs, emoji or pixel art are evident at a glance) and the size
of the region the sentence states (``in rows 3 to 5`` is a 3-row span, ``excluding columns
2 to 4`` a 3-column exclusion, ``from row 2 column 1 to row 4 column 3`` a 3x3 box; the
highlighted region of T4 and the whole grid of T1 have no size in the text). It learns,
on the dev split only, how often each exact formal answer is the gold answer for such a
prompt, and answers every item with the most frequent one.

That is the PASS-maximising guess under the dev prior: PASS needs the exact answer, so
for COUNT it is the most frequent count; for CLICK and CLICK_COUNT it is the most frequent
exact click set, which is the empty answer (``DONE``, ``SUBMIT(0)``) unless one and the
same set of cells recurs more often (a fixed set of cells never recurs across scenes
unless the generator places exceptions the same way). Sparse keys back off: a (template,
subset, region size) key is used when it has at least :data:`MIN_SUPPORT` dev items, else
(template, subset), else the template alone. Ties go to the answer with fewer clicks, then
to the smaller count, then to the string order, so the guess is deterministic.

The scored row is read only through :func:`prompt_key` (its ``task_template``,
``rose_subset`` and ``prompt_local``), never its gold fields.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose_eval.split_rows import find_split, read_rows
from rose_eval.vocab import canonical_template

MIN_SUPPORT = 5  # dev items a key needs before its own counts are used (else back off)
# The only fields of a scored row the prior reads.
VISIBLE_FIELDS = ("task_template", "task_mode", "rose_subset", "prompt_local")

_BOX = re.compile(r"from row (\d+) column (\d+) to row (\d+) column (\d+)")
_SPAN = re.compile(r"\b(rows?|columns?) (\d+)(?: to (\d+))?")
_COUNT = re.compile(r"COUNT\((\d+)\)|SUBMIT\((\d+)\)")

Key = tuple[str, ...]


def region_size(prompt_local: str) -> str:
    """The region size the sentence states: ``3x2 box``, ``2 rows``, ``1 columns``, or ``""``."""
    box = _BOX.search(prompt_local)
    if box:
        r1, c1, r2, c2 = (int(v) for v in box.groups())
        return f"{abs(r2 - r1) + 1}x{abs(c2 - c1) + 1} box"
    span = _SPAN.search(prompt_local)
    if span:
        word, a, b = span.groups()
        lines = 1 if b is None else abs(int(b) - int(a)) + 1
        return f"{lines} {'rows' if word.startswith('row') else 'columns'}"
    return ""


def prompt_key(row: Mapping[str, Any]) -> Key:
    """(template, subset, region size): what the prior knows of an item."""
    return (canonical_template(str(row.get("task_template"))), str(row.get("rose_subset")),
            region_size(str(row.get("prompt_local") or "")))


def _backoffs(key: Key) -> tuple[Key, ...]:
    """The key, then coarser ones: (template, subset), (template,)."""
    return key, key[:2], key[:1]


def _tie_order(answer: str) -> tuple[int, int, str]:
    """Fewer clicks first, then the smaller count, then the text."""
    numbers = [int(a or b) for a, b in _COUNT.findall(answer)]
    return answer.count("CLICK("), numbers[0] if numbers else 0, answer


@dataclass(frozen=True)
class AnswerPrior:
    """Gold-answer counts per key and back-off level, fitted on one split's rows."""

    counts: Mapping[Key, Mapping[str, int]]
    n_rows: int
    item_ids: frozenset[str] = frozenset()  # the rows it was fitted on

    def distribution(self, row: Mapping[str, Any]) -> tuple[Key, Mapping[str, int]]:
        """The key used for ``row`` (after back-off) and its answer counts (empty if unseen)."""
        levels = _backoffs(prompt_key(row))
        for key in levels:
            seen = self.counts.get(key, {})
            if sum(seen.values()) >= MIN_SUPPORT:
                return key, seen
        for key in levels:  # no level has enough: the finest one with anything
            if self.counts.get(key):
                return key, self.counts[key]
        return levels[-1], {}

    def guess(self, row: Mapping[str, Any], empty: str) -> str:
        """The most frequent answer for ``row``'s key; ``empty`` when the key was never seen."""
        _, seen = self.distribution(row)
        if not seen:
            return empty
        top = max(seen.values())
        return min((a for a, n in seen.items() if n == top), key=_tie_order)


def fit_prior(rows: Iterable[Mapping[str, Any]]) -> AnswerPrior:
    """Count each gold ``answer`` under every back-off level of its row's key."""
    counts: dict[Key, Counter[str]] = {}
    n = 0
    ids: set[str] = set()
    for row in rows:
        n += 1
        ids.add(str(row.get("item_id")))
        answer = str(row.get("answer"))
        for key in _backoffs(prompt_key(row)):
            counts.setdefault(key, Counter())[answer] += 1
    return AnswerPrior({key: dict(c) for key, c in counts.items()}, n, frozenset(ids))


EMPTY_ANSWERS = {"COUNT": "COUNT(0)", "CLICK": "DONE", "CLICK_COUNT": "SUBMIT(0)"}


def guess_for(prior: AnswerPrior, row: Mapping[str, Any], task_mode: str) -> str:
    """The prior's answer for a row of ``task_mode`` (the empty answer for an unseen template)."""
    return prior.guess(row, EMPTY_ANSWERS.get(task_mode, "DONE"))


FIT_SPLIT = "dev"
FIT_FIELDS = ("item_id", "task_template", "rose_subset", "prompt_local", "answer")


def dev_prior(root: Path) -> AnswerPrior:
    """The prior fitted on release ``root``'s dev split (InputError when it has none)."""
    files = find_split(root, FIT_SPLIT, fix="the prior is fitted on the dev split: use a release "
                                          "with metadata_dev.jsonl (or data/dev.parquet)")
    return fit_prior(record.row for record in read_rows(files, FIT_FIELDS))
