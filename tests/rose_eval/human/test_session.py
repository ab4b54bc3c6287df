"""rose-human's session: the page's view of an item, answers on disk, resume, and refusals."""

from __future__ import annotations

import json

import pytest

from rose_eval.human.session import PAGE_FIELDS, AnswerRejected, SessionError
from tests.rose_eval.human.conftest import open_session, release_test_rows

GROUND_TRUTH_KEYS = {"answer", "ground_truth_formal_answer", "ground_truth_clicks", "ground_truth_count",
                     "all_target_cells", "region_target_cells", "target_cells", "region_params", "region_case",
                     "difficulty", "global_target_count", "region_target_count"}


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_page_view_is_the_allowlist_and_nothing_else(mini_release, tmp_path) -> None:
    session = open_session(mini_release, tmp_path / "h.jsonl")
    rows = release_test_rows(mini_release)
    for item_id in session.order:
        view = session.page_item(session.items[item_id])
        assert set(view) == {*PAGE_FIELDS, "image_url", "needs_count"}
        assert not GROUND_TRUTH_KEYS & set(view)
        row = rows[item_id]
        assert view["image_url"] == "/" + row["image"]
        assert view["needs_count"] == (row["task_mode"] != "CLICK")
        assert {k: view[k] for k in PAGE_FIELDS} == {k: row[k] for k in PAGE_FIELDS}
    session.close()


def test_answers_are_appended_with_seconds_and_resume_skips_done_items(mini_release, tmp_path) -> None:
    out = tmp_path / "h.jsonl"
    session = open_session(mini_release, out, limit=6)
    first, second = session.order[:2]
    assert session.state()["item"]["item_id"] == first
    session.skip({"item_id": first})
    assert session.state()["item"]["item_id"] == second and session.state()["skipped"] == 1
    assert session.submit({"item_id": second, "cells": [], "count": 7, "seconds": 1.23456}) == "COUNT(7)"
    assert _lines(out) == [{"item_id": second, "model": "human:tester", "raw_text": "COUNT(7)", "error": None,
                            "seconds": 1.235}]
    session.close()

    again = open_session(mini_release, out, limit=6)
    state = again.state()
    assert state["done"] == 1 and state["total"] == 6
    assert state["item"]["item_id"] == first  # the skip lasted one session; the answered item stays done
    with pytest.raises(AnswerRejected) as info:
        again.submit({"item_id": second, "cells": [], "count": 1, "seconds": 1})
    assert info.value.status == 409
    again.close()
    assert len(_lines(out)) == 1


@pytest.mark.parametrize("payload", [
    {"cells": [[0, 1]], "count": 1},  # row 0 does not exist
    {"cells": [[1, 99]], "count": 1},
    {"cells": [[1, True]], "count": 1},
    {"cells": [[1.0, 2]], "count": 1},
    {"cells": "R1,C1", "count": 1},
    {"cells": [], "count": None},  # T5 needs the submitted count
    {"cells": [], "count": -1},
    {"cells": [], "count": 10_000},
    {"cells": [], "count": 2, "seconds": -1},
    {"cells": [], "count": 2, "seconds": float("nan")},
])
def test_bad_answers_are_refused_and_nothing_is_written(mini_release, tmp_path, payload) -> None:
    out = tmp_path / "h.jsonl"
    session = open_session(mini_release, out)
    t5 = next(i for i in session.order if session.items[i].row["task_mode"] == "CLICK_COUNT")
    with pytest.raises(AnswerRejected):
        session.submit({"seconds": 1.0, **payload, "item_id": t5})
    with pytest.raises(AnswerRejected) as info:
        session.submit({"item_id": "NOPE", "cells": [], "count": 1, "seconds": 1})
    assert info.value.status == 404
    session.close()
    assert not out.exists()  # the file is created by the first answer, not before


def test_another_persons_file_is_not_resumed(mini_release, tmp_path) -> None:
    out = tmp_path / "h.jsonl"
    out.write_text(json.dumps({"item_id": "CHITEM_000001", "model": "human:alice", "raw_text": "COUNT(1)",
                               "error": None}) + "\n", encoding="utf-8")
    with pytest.raises(SessionError, match="human:alice"):
        open_session(mini_release, out, name="human:bob")
