"""Error taxonomy: every failed item gets exactly one category, from its per-item record.

The categories are tried in the order registered in :data:`CATEGORIES` and the first
that matches names the failure, so a template's categories partition its failures
(earlier categories are the more specific or more basic faults: an answer that does
not parse is not also counted as under-clicking). Only the public per-item fields are
read (per_item_eval.jsonl), so any evaluation folder can be classified. A passed item
has no category.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_eval.analyses._rows import ALL_TEMPLATES
from rose_eval.analyses.abstention import abstained, is_zero_target
from rose_eval.registry import Registry
from rose_eval.vocab import template_of

Item = Mapping[str, Any]


@dataclass(frozen=True)
class Category:
    """One failure kind: a short label, its precise definition and its test."""

    label: str
    definition: str
    matches: Callable[[Item], bool]
    color: str


CATEGORIES: Registry[Category] = Registry("error category")


def _int(item: Item, key: str) -> int:
    value = item.get(key)
    return int(value) if isinstance(value, int | float) else 0


def _clicks(item: Item) -> bool:
    return item.get("click_applicable") == 1


def _claimed(item: Item) -> int | None:
    """How many targets the answer claims: distinct clicks, else the count."""
    if _clicks(item):
        return _int(item, "pred_click_count_unique")
    count = item.get("pred_count")
    return int(count) if isinstance(count, int) else None


def _no_answer(item: Item) -> bool:
    text = item.get("raw_text")
    return item.get("api_error") == 1 or not isinstance(text, str) or not text.strip()


def _category(name: str, label: str, color: str, definition: str
              ) -> Callable[[Callable[[Item], bool]], Callable[[Item], bool]]:
    def register(test: Callable[[Item], bool]) -> Callable[[Item], bool]:
        CATEGORIES.add(name, Category(label, " ".join(definition.split()), test, color))
        return test
    return register


@_category("no_answer", "No answer", "#7f7f7f", """The request failed (the prediction
    carries an error) or the answer text is missing or blank.""")
def _is_no_answer(item: Item) -> bool:
    return _no_answer(item)


@_category("invalid_format", "Invalid format", "#b07aa1", """The text is not exactly one
    answer in the task's strict grammar (COUNT(n); CLICK(Rr,Cc); ...; DONE;
    CLICK(Rr,Cc); ...; SUBMIT(n)): prose around it, the wrong mode, a malformed token.""")
def _is_invalid_format(item: Item) -> bool:
    return item.get("format_valid") != 1


@_category("off_grid_or_repeat", "Off-grid or repeated click", "#9c755f", """A click task
    whose grammar is valid but a click lies outside the rows x cols grid or the same cell
    is clicked twice; strict scoring fails such answers whatever the cells.""")
def _is_off_grid(item: Item) -> bool:
    return _clicks(item) and (_int(item, "invalid_coordinate_count") > 0
                              or _int(item, "duplicate_click_count") > 0)


@_category("outside_target", "Clicked excluded/outside target", "#e15759", """A clicked
    cell is a true odd cell that the task rules out: outside the named rows/columns or the
    highlighted box, or inside the excluded band (outside_distractor_hit_count > 0). The
    model found the exceptions but ignored the region.""")
def _is_outside_target(item: Item) -> bool:
    return _clicks(item) and _int(item, "outside_distractor_hit_count") > 0


@_category("region_violation", "Region violation", "#f28e2b", """A clicked cell lies
    outside the permitted region (region_violation_count > 0) and is not an odd cell.""")
def _is_region_violation(item: Item) -> bool:
    return _clicks(item) and _int(item, "region_violation_count") > 0


@_category("false_abstention", "False abstention", "#76b7b2", """The answer is valid and
    claims nothing (COUNT(0), DONE without a click, no click and SUBMIT(0)) although the
    gold answer has targets.""")
def _is_false_abstention(item: Item) -> bool:
    return abstained(item) and not is_zero_target(item)


@_category("no_abstention", "No abstention on a zero-target item", "#59a14f", """The gold
    answer is empty (COUNT(0), DONE, SUBMIT(0): no target in the region) but the answer
    claims some: a count above 0, or clicks on cells inside the region.""")
def _is_no_abstention(item: Item) -> bool:
    return is_zero_target(item)


@_category("whole_grid", "Whole-grid answer", "#edc948", """A local task (T2-T5) answered
    for the whole grid: the count equals the grid's exception count, or the clicks are
    every exception of the grid, where the local answer differs (global_default_error;
    the click form is usually caught earlier, as a click on an outside target).""")
def _is_whole_grid(item: Item) -> bool:
    return item.get("global_default_error") == 1


@_category("count_click_mismatch", "Count/click mismatch", "#ff9da7", """A click-and-submit
    task whose SUBMIT(n) differs from the number of distinct cells it clicked.""")
def _is_mismatch(item: Item) -> bool:
    return item.get("submit_applicable") == 1 and item.get("click_submit_consistency") == 0


@_category("near_miss", "Near miss", "#4e79a7", """A click task where a missed target has
    a click next to it (L1 distance within the evaluator's near-miss radius, 1 by
    default): an off-by-one coordinate.""")
def _is_near_miss(item: Item) -> bool:
    return _clicks(item) and _int(item, "near_miss_count") > 0


@_category("over", "Over-clicking / over-counting", "#d37295", """More targets claimed
    than there are: more distinct clicks than gold cells (click tasks) or a count above the
    gold count (count tasks).""")
def _is_over(item: Item) -> bool:
    claimed = _claimed(item)
    return claimed is not None and claimed > _int(item, "gt_count")


@_category("under", "Under-clicking / under-counting", "#a0cbe8", """Fewer targets claimed
    than there are (and at least one claimed).""")
def _is_under(item: Item) -> bool:
    claimed = _claimed(item)
    return claimed is not None and claimed < _int(item, "gt_count")


@_category("wrong_cells", "Right number, wrong cells", "#bab0ac", """A click task with as
    many distinct clicks as gold cells, none of the above: some clicks are on majority
    cells away from every missed target.""")
def _is_wrong_cells(item: Item) -> bool:
    return _clicks(item)


@_category("other", "Other", "#000000", """Any failure not covered above (e.g. an unknown
    task mode).""")
def _is_other(item: Item) -> bool:
    return True


def classify(item: Item) -> str | None:
    """The failure category of one per-item record; None when the item passed."""
    if item.get("pass") == 1:
        return None
    for name in CATEGORIES.names():
        if CATEGORIES.get(name).matches(item):
            return name
    raise AssertionError("the catch-all category matches every item")  # pragma: no cover


@dataclass(frozen=True)
class TemplateErrors:
    """Failures of one template: item count, failure count, count per category."""

    template: str
    n: int
    failed: int
    counts: Mapping[str, int]


def taxonomy_by_template(items: Sequence[Item]) -> list[TemplateErrors]:
    """Category counts per template present (main templates, then bridges, in paper order)."""
    grouped: dict[str, list[Item]] = {}
    for item in items:
        grouped.setdefault(template_of(item), []).append(item)
    order = [t for t in ALL_TEMPLATES if t in grouped] + sorted(set(grouped) - set(ALL_TEMPLATES))
    out = []
    for template in order:
        rows = grouped[template]
        counts = Counter(c for c in map(classify, rows) if c is not None)
        out.append(TemplateErrors(template, len(rows), sum(counts.values()),
                                  {name: counts[name] for name in CATEGORIES.names()
                                   if counts[name]}))
    return out
