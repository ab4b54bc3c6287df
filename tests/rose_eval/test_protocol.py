"""The answer grammar, rule by rule, plus property tests."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_eval.protocol import ParsedAnswer, parse_answer


def ok(mode: str, text: object) -> ParsedAnswer:
    parsed = parse_answer(text, mode)
    assert parsed.format_valid, parsed
    assert parsed.parse_error is None
    return parsed


def bad(mode: str, text: object, error: str) -> ParsedAnswer:
    parsed = parse_answer(text, mode)
    assert not parsed.format_valid
    assert parsed.parse_error == error
    return parsed


# ---- empty and odd inputs -------------------------------------------------------------

@pytest.mark.parametrize("mode", ["COUNT", "CLICK", "CLICK_COUNT", "WHATEVER"])
@pytest.mark.parametrize("text", [None, "", "   ", "\n\t "])
def test_empty_answer_is_invalid_for_every_mode(mode, text):
    assert bad(mode, text, "empty") == ParsedAnswer(False, "empty", None, None, (), (), None)


def test_non_string_answers_are_read_through_str():
    bad("COUNT", 3, "expected_COUNT_only")
    assert bad("COUNT", ["COUNT(3)"], "expected_COUNT_only").invalid_action_tokens == ("['COUNT(3)']",)
    bad("CLICK", True, "missing_DONE")


def test_parsed_answer_is_frozen():
    parsed = parse_answer("COUNT(1)", "COUNT")
    with pytest.raises(AttributeError):
        parsed.pred_count = 2  # type: ignore[misc]


def test_unknown_task_mode_keeps_the_text():
    parsed = bad("count", " COUNT(2) ", "unknown_task_mode:count")
    assert parsed.invalid_action_tokens == ("COUNT(2)",)


# ---- COUNT ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("COUNT(3)", 3), ("count(3)", 3), ("Count ( 3 )", 3), ("  COUNT(0)\n", 0),
    ("COUNT(007)", 7), ("COUNT(\u0663)", 3), ("COUNT(\uff11\uff12)", 12), ("COUNT(\u0967)", 1),
    ("COUNT(\u00a05\u00a0)", 5), ("COUNT(123456789012345678901234567890)",
                                  123456789012345678901234567890),
    ("\u212aOUNT(1)".replace("\u212a", "C"), 1),
    ("COUNT(\u00a01\u00a0)", 1),
])
def test_count_accepts_the_token_alone(text, value):
    parsed = ok("COUNT", text)
    assert parsed.pred_count == value and parsed.end_token == "COUNT"
    assert parsed.click_actions == () and parsed.submit_count is None


@pytest.mark.parametrize("text", [
    "COUNT(3);", "COUNT 3", "COUNT(3) COUNT(3)", "COUNT(-1)", "COUNT(3.0)", "COUNT()",
    "The answer is COUNT(3).", "```\nCOUNT(3)\n```", "\u200bCOUNT(1)", "COUNT(1)\u200b",
    "COUNT(one)", "SUBMIT(3)", "DONE",
])
def test_count_rejects_anything_else_and_keeps_the_whole_text(text):
    parsed = bad("COUNT", text, "expected_COUNT_only")
    assert parsed.invalid_action_tokens == (text.strip(),)
    assert parsed.pred_count is None and parsed.end_token is None


def test_count_beyond_the_int_string_limit_is_ill_formed_not_a_crash():
    digits = "9" * (sys.get_int_max_str_digits() + 1)
    parsed = bad("COUNT", f"COUNT({digits})", "number_out_of_range")
    assert parsed.pred_count is None


# ---- CLICK ----------------------------------------------------------------------------

def test_case_folding_follows_python_unicode_regex():
    # re.IGNORECASE on str patterns folds the Kelvin sign to K, exactly like v0.1's evaluator
    assert ok("CLICK", "CLIC\u212a(R1,C1); DONE").click_actions == ((1, 1),)


def test_click_done_alone_is_a_valid_empty_answer():
    parsed = ok("CLICK", " done ")
    assert parsed.click_actions == () and parsed.end_token == "DONE"


@pytest.mark.parametrize("text,clicks", [
    ("CLICK(R2,C5); CLICK(R4,C7); DONE", ((2, 5), (4, 7))),
    ("click( r2 , c5 );DONE", ((2, 5),)),
    (";;CLICK(R2,C5);; ;DONE;;", ((2, 5),)),
    ("CLICK(R2,C5);\nCLICK(R2,C5);\nDONE", ((2, 5), (2, 5))),  # duplicates kept for scoring
    ("CLICK(R0,C99); DONE", ((0, 99),)),  # out of grid is a scoring matter
    ("CLICK(R\u0663,C1); DONE", ((3, 1),)),
])
def test_click_tokens_then_done(text, clicks):
    parsed = ok("CLICK", text)
    assert parsed.click_actions == clicks and parsed.end_token == "DONE"


@pytest.mark.parametrize("text", [
    "CLICK(R1,C1)", "CLICK(R1,C1); DONE; CLICK(R2,C2)", "CLICK(R1,C1) DONE",
    "CLICK(R1,C1)\uff1b DONE", "DONE.", "I click nothing", "SUBMIT(0)",
])
def test_click_without_final_done_keeps_nothing(text):
    parsed = bad("CLICK", text, "missing_DONE")
    assert parsed.click_actions == () and parsed.end_token is None
    assert parsed.invalid_action_tokens == tuple(t.strip() for t in text.split(";") if t.strip())


def test_click_bad_token_before_done_keeps_the_good_clicks():
    parsed = bad("CLICK", "CLICK(R1 C1); CLICK(R2,C3); foo; DONE", "invalid_CLICK_token")
    assert parsed.click_actions == ((2, 3),)
    assert parsed.invalid_action_tokens == ("CLICK(R1 C1)", "foo")
    assert parsed.end_token == "DONE"


def test_done_twice_is_an_invalid_token():
    parsed = bad("CLICK", "DONE; DONE", "invalid_CLICK_token")
    assert parsed.invalid_action_tokens == ("DONE",)


def test_click_with_an_unconvertible_coordinate_is_an_invalid_token():
    digits = "1" * (sys.get_int_max_str_digits() + 1)
    parsed = bad("CLICK", f"CLICK(R{digits},C1); CLICK(R1,C1); DONE", "invalid_CLICK_token")
    assert parsed.click_actions == ((1, 1),)


# ---- CLICK_COUNT ----------------------------------------------------------------------

def test_submit_alone_is_valid():
    parsed = ok("CLICK_COUNT", "SUBMIT(0)")
    assert parsed.submit_count == 0 and parsed.click_actions == () and parsed.end_token == "SUBMIT"


def test_clicks_then_submit():
    parsed = ok("CLICK_COUNT", "CLICK(R1,C2); click(r3,c4); submit( 2 )")
    assert parsed.click_actions == ((1, 2), (3, 4)) and parsed.submit_count == 2
    assert parsed.pred_count is None


def test_only_semicolons_is_empty_for_click_count_but_missing_done_for_click():
    bad("CLICK_COUNT", ";;", "empty")
    bad("CLICK", ";;", "missing_DONE")


@pytest.mark.parametrize("text", ["CLICK(R1,C1); DONE", "CLICK(R1,C1)", "SUBMIT()", "SUBMIT(n)",
                                  "SUBMIT(1); CLICK(R1,C1)"])
def test_click_count_without_final_submit_keeps_nothing(text):
    parsed = bad("CLICK_COUNT", text, "missing_SUBMIT")
    assert parsed.click_actions == () and parsed.submit_count is None


def test_click_count_bad_token_keeps_clicks_and_submit():
    parsed = bad("CLICK_COUNT", "CLICK(R1,C1); DONE; SUBMIT(4)", "invalid_CLICK_token")
    assert parsed.click_actions == ((1, 1),) and parsed.submit_count == 4
    assert parsed.invalid_action_tokens == ("DONE",) and parsed.end_token == "SUBMIT"


def test_submit_beyond_the_int_string_limit_is_ill_formed():
    digits = "2" * (sys.get_int_max_str_digits() + 1)
    parsed = bad("CLICK_COUNT", f"CLICK(R1,C1); SUBMIT({digits})", "number_out_of_range")
    assert parsed.click_actions == () and parsed.submit_count is None


# ---- properties -----------------------------------------------------------------------

cells = st.tuples(st.integers(1, 40), st.integers(1, 40))


@settings(deadline=None)
@given(st.integers(0, 10**6))
def test_canonical_count_always_parses(n):
    assert parse_answer(f"COUNT({n})", "COUNT") == ParsedAnswer(True, None, n, None, (), (), "COUNT")


@settings(deadline=None)
@given(st.lists(cells, max_size=12, unique=True), st.booleans())
def test_canonical_click_answers_always_parse(clicks, submit):
    tokens = [f"CLICK(R{r},C{c})" for r, c in sorted(clicks)]
    mode = "CLICK_COUNT" if submit else "CLICK"
    tokens.append(f"SUBMIT({len(clicks)})" if submit else "DONE")
    parsed = ok(mode, "; ".join(tokens))
    assert parsed.click_actions == tuple(sorted(clicks))
    assert parsed.submit_count == (len(clicks) if submit else None)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="CLICKOUNTSBMDE();,R0123456789 \n\u0663")),
       st.sampled_from(["COUNT", "CLICK", "CLICK_COUNT", "OTHER"]))
def test_arbitrary_text_never_crashes(text, mode):
    parsed = parse_answer(text, mode)
    assert isinstance(parsed.format_valid, bool)
    assert parsed.format_valid == (parsed.parse_error is None)
    if not parsed.format_valid:
        assert parsed.pred_count is None
