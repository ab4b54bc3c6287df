"""What a run cost and who answered it, summed from its prediction rows.

Totals are taken over every row of the predictions file (rows kept from an earlier,
resumed invocation included), so they describe the file the report scores:

- ``sent``: rows whose answer came from the endpoint; ``requests`` counts every attempt
  (retries and failed items included), tokens are the endpoint's own ``usage``;
- ``cached``: rows answered from the request cache: nothing was sent, they cost nothing;
  their stored usage is shown apart, never added to the cost;
- ``cost_usd``: ``sent`` prompt tokens x ``price_in`` + completion tokens x ``price_out``
  (USD per million tokens). Reasoning tokens are part of the completion tokens in
  OpenAI-style usage, so they are shown but not charged twice.

The server identity (:func:`server_identity`) lists the response model names and
``system_fingerprint`` values in the order they first appeared; more than one of either
means the endpoint changed what answered midway, and the run is flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

TOKEN_FIELDS: tuple[str, ...] = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; None: no price given, no cost computed."""

    price_in: float | None = None
    price_out: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The cost of these tokens, or None without both prices."""
        if self.price_in is None or self.price_out is None:
            return None
        return round((prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6, 6)


@dataclass(frozen=True)
class TokenTotals:
    """Summed answers, requests and token usage of one kind of row."""

    answers: int = 0
    requests: int | None = 0  # None: the rows do not record attempts (a harness's log)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    answers_without_usage: int = 0  # the endpoint reported no usage: their tokens are unknown


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class _Sums:
    """Running sums of one kind of row (sent or cached); folded one row at a time."""

    def __init__(self) -> None:
        self.answers = 0
        self.tokens = dict.fromkeys(TOKEN_FIELDS, 0)
        self.missing = 0
        self.attempts = 0
        self.with_attempts = 0

    def add(self, row: Mapping[str, Any]) -> None:
        self.answers += 1
        usage = row.get("usage") if isinstance(row.get("usage"), dict) else {}
        if usage.get("prompt_tokens") is None and usage.get("completion_tokens") is None:
            self.missing += isinstance(row.get("raw_text"), str)  # a failed row has no usage to miss
        for name in TOKEN_FIELDS:
            self.tokens[name] += _count(usage.get(name))
        if "attempts" in row:
            self.with_attempts += 1
            self.attempts += _count(row.get("attempts"))

    def totals(self) -> TokenTotals:
        # rows that record no attempts at all (a harness's log): requests are unknown, not 0
        requests = self.attempts if self.with_attempts or not self.answers else None
        return TokenTotals(answers=self.answers, requests=requests, answers_without_usage=self.missing,
                           **self.tokens)


class RowTally:
    """Accounting and server identity folded over prediction rows one at a time.

    Memory does not grow with the number of rows (only with the number of distinct model
    names and fingerprints), so a run of any size is summed in one streaming pass.
    """

    def __init__(self) -> None:
        self._sent = _Sums()
        self._cached = _Sums()
        self._models: dict[str, None] = {}
        self._fingerprints: dict[str, None] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row (a predictions-file object)."""
        (self._cached if row.get("cached") else self._sent).add(row)
        for seen, value in ((self._models, row.get("response_model")),
                            (self._fingerprints, row.get("system_fingerprint"))):
            if isinstance(value, str) and value:
                seen.setdefault(value, None)

    def accounting(self, prices: Prices, wall_s: float | None) -> dict[str, Any]:
        """The manifest's ``accounting`` block; ``wall_s`` is this invocation's wall time
        (None: not known, e.g. rows converted from a harness log)."""
        sent, cached = self._sent.totals(), self._cached.totals()
        return {
            "sent": asdict(sent),
            "cached": asdict(cached),
            "wall_s": None if wall_s is None else round(wall_s, 3),
            "price_usd_per_million": {"in": prices.price_in, "out": prices.price_out},
            "cost_usd": prices.cost(sent.prompt_tokens, sent.completion_tokens),
            "rule": "sent rows only (cached rows cost nothing); reasoning tokens are inside completion tokens",
        }

    def identity(self) -> dict[str, Any]:
        """Response model names and fingerprints in first-seen order; ``changed`` when either has more than one."""
        models, fingerprints = list(self._models), list(self._fingerprints)
        return {"models": models, "fingerprints": fingerprints,
                "changed": len(models) > 1 or len(fingerprints) > 1}


def tally(rows: Iterable[Mapping[str, Any]]) -> RowTally:
    """A :class:`RowTally` of ``rows`` (consumed once, never held)."""
    result = RowTally()
    for row in rows:
        result.add(row)
    return result


def manifest_notes(rows: Iterable[Mapping[str, Any]], prices: Prices, wall_s: float | None) -> dict[str, Any]:
    """The ``accounting`` and ``server`` blocks every predictions manifest carries
    (``rose-run``'s and ``rose-export``'s alike), summed in one streaming pass over ``rows``."""
    summed = tally(rows)
    return {"accounting": summed.accounting(prices, wall_s), "server": summed.identity()}


def accounting(rows: Iterable[Mapping[str, Any]], prices: Prices, wall_s: float | None) -> dict[str, Any]:
    """The manifest's ``accounting`` block for a predictions file's ``rows``; ``wall_s`` is
    this invocation's wall time (None: not known, e.g. rows converted from a harness log)."""
    return tally(rows).accounting(prices, wall_s)


def server_identity(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Response model names and fingerprints in first-seen order; ``changed`` when either has more than one."""
    return tally(rows).identity()


def identity_warning(identity: Mapping[str, Any], prog: str = "rose-run") -> str | None:
    """One stderr line (from ``prog``) when the server changed what answered midway, else None."""
    if not identity.get("changed"):
        return None
    parts = [f"{label} {' -> '.join(values)}" for label, values in
             (("model name", identity["models"]), ("system_fingerprint", identity["fingerprints"]))
             if len(values) > 1]
    return (f"{prog}: warning: the server changed midway ({'; '.join(parts)}); the rows' response_model / "
            f"system_fingerprint say which item got which")


def _tokens(block: Mapping[str, Any]) -> str:
    text = (f"{block.get('prompt_tokens', 0):,} prompt + {block.get('completion_tokens', 0):,} completion tokens"
            + (f" ({block['reasoning_tokens']:,} reasoning)" if block.get("reasoning_tokens") else ""))
    missing = block.get("answers_without_usage") or 0
    return text + (f", {missing} answer(s) without usage" if missing else "")


def accounting_line(manifest: Mapping[str, Any]) -> str | None:
    """The report's one line on a run's accounting (from its run manifest), None without one."""
    acc = manifest.get("accounting")
    if not isinstance(acc, Mapping) or not isinstance(acc.get("sent"), Mapping):
        return None
    sent, cached = acc["sent"], acc.get("cached") or {}
    cost = acc.get("cost_usd")
    prices = acc.get("price_usd_per_million") or {}
    requests = sent.get("requests")
    asked = "requests not recorded" if requests is None else f"{requests} requests"
    line = (f"Sent: {sent.get('answers', 0)} answers in {asked}, {_tokens(sent)}; "
            + (f"cost ${cost:,.4f} at ${prices.get('in'):g} / ${prices.get('out'):g} per million in / out"
               if isinstance(cost, (int, float)) else "no price given (--price_in / --price_out)"))
    if cached.get("answers"):
        line += f". From the request cache (nothing sent, no cost): {cached['answers']} answers, {_tokens(cached)}"
    wall = acc.get("wall_s")
    return line + (f". Last invocation's wall time {wall:g} s." if isinstance(wall, (int, float)) else ".")


def identity_line(manifest: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The report's line on who answered (server model names, fingerprints) and whether it
    changed midway; None when the manifest records no server identity."""
    identity = manifest.get("server")
    if not isinstance(identity, Mapping) or not (identity.get("models") or identity.get("fingerprints")):
        return None
    models = ", ".join(identity.get("models") or []) or "not reported"
    prints = ", ".join(identity.get("fingerprints") or []) or "not reported"
    if identity.get("changed"):
        return (f"The server changed midway: model name(s) {models}; system_fingerprint(s) {prints} "
                f"(each row's response_model / system_fingerprint say which item got which).", True)
    return f"Answered by server model {models}, system_fingerprint {prints}.", False


# ---------------------------------------------------------------------------- dry-run estimate

# OpenAI's image-token rule for its vision models (GPT-4o, GPT-4.1, o-series), as its
# vision guide states it ("Calculating costs", https://platform.openai.com/docs/guides/images-vision):
# detail "low" costs a flat 85 tokens; detail "high" first fits the image in 2048 x 2048,
# scales the short side to 768 px, then costs 85 + 170 per 512-px tile
# (rose_eval.runners.rate_limit.image_tokens). rose-run sends no "detail", so OpenAI
# applies "auto", which for images this large is the high-detail cost.
LOW_DETAIL_IMAGE_TOKENS = 85


@dataclass(frozen=True)
class RunEstimate:
    """What a run would send, counted before anything is sent."""

    requests: int
    image_bytes: int  # the encoded images as sent (base64 data URLs), every request
    prompt_tokens_high: int  # text at 4 characters a token + images at OpenAI's high-detail rule
    prompt_tokens_low: int  # the same with every image at the low-detail 85 tokens
    max_completion_tokens: int  # requests x max_tokens (0: not capped)

    def cost(self, prices: Prices) -> tuple[float | None, float | None]:
        """(high-detail prompt cost, that plus every answer at max_tokens): USD, None without prices."""
        return (prices.cost(self.prompt_tokens_high, 0),
                prices.cost(self.prompt_tokens_high, self.max_completion_tokens))

    def summary(self, prices: Prices) -> str:
        """The one stdout line of ``rose-run --dry_run``."""
        line = (f"rose-run: estimate: {self.requests} requests, {self.image_bytes / 1e6:.1f} MB of images; "
                f"prompt ~{self.prompt_tokens_high:,} tokens at OpenAI's high-detail image rule "
                f"(~{self.prompt_tokens_low:,} at low detail)")
        prompt_cost, cap_cost = self.cost(prices)
        if prompt_cost is not None and cap_cost is not None:
            line += (f"; cost ~${prompt_cost:,.2f} for the prompts"
                     + (f", at most ${cap_cost:,.2f} with every answer at max_tokens"
                        if self.max_completion_tokens else ""))
        return line + "; nothing sent"
