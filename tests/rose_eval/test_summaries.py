"""The summary engine (one mean for the whole evaluator), percentages and region shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_eval.percent import COUNT, FRACTION, percent_text, percent_view
from rose_eval.regions import REGION_KINDS, region_for
from rose_eval.summaries import (
    Derived,
    Population,
    Stat,
    complement,
    count,
    difference,
    equals,
    macro,
    mean,
    share_positive,
    summarize,
)


def test_mean_keeps_numbers_and_leaves_out_what_float_refuses():
    assert mean([1, 0, True, 0.5]) == pytest.approx(2.5 / 4)
    assert mean([None, "", 1, 3]) == 2.0
    assert mean([10**400, 1, 3]) == 2.0  # too large for a float: left out, not an error
    assert mean(["abc", [1], {"a": 1}, 2]) == 2.0
    assert mean([]) is None and mean([None, ""]) is None
    assert mean(["2", "4"]) == 3.0  # text that is a number counts, as in v0.1


def test_mean_sums_left_to_right_like_the_public_evaluator():
    values = [0.1] * 10 + [1e16, 1.0, -1e16]
    assert mean(values) == sum(values) / len(values)


def test_small_reducers():
    assert share_positive([0, 2, None, 1]) == 0.5
    assert difference(0.75, 0.25) == 0.5 and difference(None, 1) is None
    assert complement(0.25) == 0.75 and complement(None) is None
    assert macro([None, 0.5, 1.0]) == 0.75 and macro([None]) is None


def test_tables_with_populations_and_derived_entries():
    rows = [{"kind": "a", "x": 1, "ok": 1}, {"kind": "a", "x": 3, "ok": 0},
            {"kind": "b", "x": 5, "ok": 1}, {"kind": "a", "ok": 1}]  # the last lacks x
    populations = {"a": Population(equals("a"), "kind"),
                   "a_ok": Population(lambda row: row["ok"] == 1, within="a")}
    table = (Stat("n", reduce=count), Stat("x", "x"), Stat("n_a", population="a", reduce=count),
             Stat("x_a", "x", "a"), Stat("x_a_ok", "x", "a_ok"),
             Derived("gap", ("x", "x_a"), difference))
    assert summarize(rows, table, populations) == {
        "n": 4, "x": 3.0, "n_a": 3, "x_a": 2.0, "x_a_ok": 1.0, "gap": 1.0}
    assert list(summarize([], table, populations)) == ["n", "x", "n_a", "x_a", "x_a_ok", "gap"]


def test_percent_view_follows_the_schema():
    kinds = {"PASS": FRACTION, "n": COUNT}
    assert percent_view({"t": {"PASS": 0.123456789, "n": 7}, "l": [{"PASS": None}]}, kinds) == {
        "t": {"PASS": 12.3457, "n": 7}, "l": [{"PASS": None}]}
    with pytest.raises(KeyError, match="no declared kind"):
        percent_view({"new_field": 0.5}, kinds)
    assert percent_text(0.5, 2) == "50.00" and percent_text(None) == "--"


params = st.fixed_dictionaries({k: st.integers(-3, 12) for k in ("r1", "r2", "c1", "c2")})


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(0, 9), cols=st.integers(0, 9), kind=st.sampled_from(sorted(REGION_KINDS)),
       inner=st.sampled_from(["ROW_RANGE", "COL_RANGE", "RECTANGLE", "GLOBAL"]), p=params)
def test_region_shapes_agree_with_their_cells(rows, cols, kind, inner, p):
    params = {"exclude_type": inner, "exclude_params": p} if kind == "EXCLUSION" else p
    shape = region_for(rows, cols, kind, params)
    cells = shape.cells()
    assert shape.size == len(cells)
    for r in range(-4, 14):
        for c in range(-4, 14):
            assert shape.contains((r, c)) == ((r, c) in cells)
