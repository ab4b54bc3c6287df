"""What a run's numbers cover, said out loud: scored items, absent subsets, failed and cut answers.

Every rose-eval run prints :meth:`Coverage.line` on stderr and records
:meth:`Coverage.as_dict` in ``provenance.json``; ``--strict`` turns any gap
(:attr:`Coverage.gaps`) into exit status 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_eval.vocab import ordered_subsets

TRUNCATED_REASON = "length"  # an OpenAI-compatible finish_reason: cut at max_tokens


@dataclass(frozen=True)
class Coverage:
    """How much of a split one evaluation scored, and how many answers are not the model's best."""

    scored: int
    expected: int
    absent_subsets: tuple[str, ...]
    endpoint_errors: int
    truncated: int

    @property
    def gaps(self) -> tuple[str, ...]:
        """The non-zero gaps, named (empty when the run covers everything cleanly)."""
        found = []
        if self.scored < self.expected:
            found.append(f"{self.expected - self.scored} items unscored")
        if self.absent_subsets:
            found.append(f"subsets absent: {', '.join(self.absent_subsets)}")
        if self.endpoint_errors:
            found.append(f"{self.endpoint_errors} endpoint errors")
        if self.truncated:
            found.append(f"{self.truncated} answers cut at max_tokens")
        return tuple(found)

    def line(self) -> str:
        """The one stderr line every run prints."""
        absent = ", ".join(self.absent_subsets) or "none"
        return (f"scored {self.scored} of {self.expected} items; subsets absent: {absent}; "
                f"{self.endpoint_errors} answers carry an endpoint error; "
                f"{self.truncated} were cut at max_tokens (finish_reason \"length\")")

    def as_dict(self) -> dict[str, Any]:
        return {"scored": self.scored, "expected": self.expected,
                "absent_subsets": list(self.absent_subsets),
                "endpoint_errors": self.endpoint_errors, "truncated_at_max_tokens": self.truncated}


def measure(eval_rows: Iterable[Mapping[str, Any]], metadata_rows: Sequence[Mapping[str, Any]],
            predictions: Mapping[str, Mapping[str, Any]]) -> Coverage:
    """Coverage of the per-item records ``eval_rows`` over the split's ``metadata_rows``;
    ``predictions`` (item_id -> prediction row) gives each scored answer's finish_reason."""
    scored = list(eval_rows)
    all_subsets = {str(row.get("rose_subset")) for row in metadata_rows}
    seen = {str(row.get("rose_subset")) for row in scored}
    truncated = sum(predictions[str(row["item_id"])].get("finish_reason") == TRUNCATED_REASON
                    for row in scored)
    return Coverage(
        scored=len(scored),
        expected=len(metadata_rows),
        absent_subsets=tuple(ordered_subsets(all_subsets - seen)),
        endpoint_errors=sum(int(row.get("api_error") or 0) for row in scored),
        truncated=truncated,
    )
