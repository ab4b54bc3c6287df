"""The texts harnesses write in place of an answer when a request failed for good.

A harness that cannot get an answer does not leave the answer empty: it writes a marker
where the model's text would be, and a converter that took it as the answer would score an
endpoint failure as a wrong answer (and count no errors). Each harness's marker, as its
own source writes and tests it:

- lmms-eval (0.7.x API wrappers, ``openai_compatible_chat`` and the others): after its
  retries it answers ``[LMMS_EVAL_REQUEST_FAILED after N retries] <error, 200 chars>``
  (``[LMMS_EVAL_REQUEST_FAILED] <error>`` in some wrappers); lmms-eval's own check, in
  its response cache, is ``"[LMMS_EVAL_REQUEST_FAILED" in text``. Older releases answered
  ``""`` then, which cannot be told from an empty answer.
- VLMEvalKit (``vlmeval/api/base.py``): ``BaseAPI.fail_msg`` is
  ``'Failed to obtain answer via API.'`` (the OpenAI wrapper's has a trailing space, the
  multi-turn path appends ``': Failed with all possible conversation turns.'``); VLMEvalKit's
  own check is ``FAIL_MSG in prediction``. Some forks record a local model's exception as
  ``'Failed to obtain answer: <Type>: <message>'``.

:func:`harness_error` turns such a text into the error the predictions row carries
(``raw_text`` null, as rose-run writes a failed request); any other text is an answer.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR_CHARS = 300  # as rose-run and the inspect converter cut an error line


@dataclass(frozen=True)
class FailureMarker:
    """How one harness marks a failed request in place of the answer."""

    harness: str
    contains: tuple[str, ...] = ()  # anywhere in the text (the harness's own test)
    starts: tuple[str, ...] = ()  # at the start of the stripped text

    def matches(self, text: str) -> bool:
        """True when ``text`` is this harness's failure marker, not a model's answer."""
        stripped = text.strip()
        return (any(m in stripped for m in self.contains)
                or any(stripped.startswith(m) for m in self.starts))


FAILURE_MARKERS: dict[str, FailureMarker] = {
    "lmms-eval": FailureMarker("lmms-eval", contains=("[LMMS_EVAL_REQUEST_FAILED",)),
    "vlmevalkit": FailureMarker("VLMEvalKit", contains=("Failed to obtain answer via API",),
                                starts=("Failed to obtain answer",)),
}


def harness_error(harness: str, text: str | None) -> str | None:
    """The error line for ``text`` when it is ``harness``'s failure marker, else None.

    The line names the harness and keeps its message (status and provider text), on one
    line and at most :data:`ERROR_CHARS` characters.
    """
    marker = FAILURE_MARKERS[harness]
    if text is None or not marker.matches(text):
        return None
    return f"{marker.harness}: {' '.join(text.split())}"[:ERROR_CHARS]

