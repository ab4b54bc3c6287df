"""The formal-answer builder: byte-exact with the released gold answers, and the parser's inverse."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_eval.formal import FormalAnswerError, formal_answer
from rose_eval.protocol import parse_answer


def _rows(root):
    return [json.loads(line) for split in ("dev", "test")
            for line in (root / f"metadata_{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def _cell(label: str) -> tuple[int, int]:
    r, c = label.split(",")
    return int(r[1:]), int(c[1:])


def test_gold_answers_of_a_generated_release_are_rebuilt_byte_for_byte(mini_release) -> None:
    rows = _rows(mini_release)
    modes = set()
    for row in rows:
        cells = [_cell(label) for label in row["ground_truth_clicks"]]
        built = formal_answer(row["task_mode"], reversed(cells), row["ground_truth_count"])
        assert built == row["ground_truth_formal_answer"] == row["answer"], row["item_id"]
        modes.add((row["task_mode"], bool(cells)))
    # every mode, with and without targets, was exercised (DONE and SUBMIT(0) alone included)
    assert {("COUNT", True), ("CLICK", True), ("CLICK_COUNT", True), ("CLICK", False)} <= modes


def test_clicks_are_sorted_numerically_and_deduplicated() -> None:
    assert formal_answer("CLICK", [(10, 2), (2, 11), (2, 3), (10, 2)]) == \
        "CLICK(R2,C3); CLICK(R2,C11); CLICK(R10,C2); DONE"
    assert formal_answer("CLICK", []) == "DONE"
    assert formal_answer("CLICK_COUNT", [], 0) == "SUBMIT(0)"
    assert formal_answer("CLICK_COUNT", [(1, 2)], 5) == "CLICK(R1,C2); SUBMIT(5)"  # a person may submit any n
    assert formal_answer("COUNT", [(1, 1)], 3) == "COUNT(3)"  # marks are no part of a COUNT answer
    assert formal_answer("CLICK", [(1, 1)], 9) == "CLICK(R1,C1); DONE"


@pytest.mark.parametrize(("mode", "count"), [("COUNT", None), ("CLICK_COUNT", None), ("POINT", 1)])
def test_missing_parts_are_refused(mode, count) -> None:
    with pytest.raises(FormalAnswerError):
        formal_answer(mode, [(1, 1)], count)


@settings(deadline=None, max_examples=200)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30)), max_size=15),
       st.integers(0, 10_000), st.sampled_from(["COUNT", "CLICK", "CLICK_COUNT"]))
def test_the_parser_reads_back_what_was_built(cells, count, mode) -> None:
    parsed = parse_answer(formal_answer(mode, cells, count), mode)
    assert parsed.format_valid
    if mode == "COUNT":
        assert parsed.pred_count == count
    else:
        assert parsed.click_actions == tuple(sorted(set(cells)))
        assert parsed.submit_count == (count if mode == "CLICK_COUNT" else None)
