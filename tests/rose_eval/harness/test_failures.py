"""The harnesses' failure texts are errors; a model's answer that only mentions failure is not."""

from __future__ import annotations

import pytest

from rose_eval.harness.failures import ERROR_CHARS, harness_error


@pytest.mark.parametrize(("harness", "text"), [
    ("lmms-eval", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 401 - invalid key"),
    ("lmms-eval", "[LMMS_EVAL_REQUEST_FAILED] Connection refused"),  # the LiteLLM wrapper's form
    ("lmms-eval", "  [LMMS_EVAL_REQUEST_FAILED after 3 retries] Error code: 429\nslow down"),
    ("vlmevalkit", "Failed to obtain answer via API. "),  # OpenAIWrapper.fail_msg
    ("vlmevalkit", "Failed to obtain answer via API."),  # BaseAPI's default
    ("vlmevalkit", "Failed to obtain answer via API.: Failed with all possible conversation turns."),
    ("vlmevalkit", "Failed to obtain answer: RuntimeError: CUDA out of memory"),  # local model, forks
])
def test_failure_texts_become_one_line_errors(harness, text):
    error = harness_error(harness, text)
    assert error is not None and "\n" not in error and len(error) <= ERROR_CHARS
    assert error.startswith({"lmms-eval": "lmms-eval: [LMMS", "vlmevalkit": "VLMEvalKit: Failed"}[harness])


@pytest.mark.parametrize(("harness", "text"), [
    ("lmms-eval", "COUNT(3)"), ("lmms-eval", ""), ("lmms-eval", None),
    ("lmms-eval", "LMMS_EVAL_REQUEST_FAILED"),  # no bracket: not lmms-eval's marker
    ("lmms-eval", "Failed to obtain answer via API."),  # the other harness's marker
    ("vlmevalkit", "CLICK(R1,C2); DONE"), ("vlmevalkit", "I failed to obtain an answer"),
    ("vlmevalkit", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] x"),
])
def test_answers_stay_answers(harness, text):
    assert harness_error(harness, text) is None


def test_a_long_provider_message_is_cut():
    error = harness_error("lmms-eval", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] " + "x" * 1000)
    assert len(error) == ERROR_CHARS
