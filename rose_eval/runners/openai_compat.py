"""Ask any OpenAI-compatible ``/chat/completions`` endpoint one ROSE item at a time.

Requests go through the run's pooled keep-alive client (``http_client.PooledClient``).
The message is one user turn in the paper's order:
text ``prompt_global``, the image as a data URL, text ``prompt_local``; the controls
(image first, one joined prompt, a blank image of the same size) are options. The
image is sent as PNG at full size unless asked otherwise, because fine detail is the
point of the benchmark.

Retries: 429, 5xx, timeouts and connection errors are retried with exponential backoff
and full jitter, waiting at least what a ``Retry-After`` header asks. Other HTTP errors
fail at once. The API key is sent as a bearer header and scrubbed from every message
this module produces.
"""

from __future__ import annotations

import base64
import io
import json
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import Image

from rose_eval.runners.generation import DEFAULTS as GENERATION
from rose_eval.runners.http_client import FatalError, PooledClient, RetryableError, Timeouts
from rose_eval.runners.predictions import Usage
from rose_eval.runners.rate_limit import RateLimiter, estimate_tokens
from rose_eval.runners.request_cache import RequestCache, request_key

PROMPT_ORDERS: tuple[str, ...] = ("global_image_local", "image_first", "joined")
IMAGE_FORMATS: tuple[str, ...] = ("png", "jpeg")
MAX_BACKOFF_S = 60.0


@dataclass(frozen=True)
class ImageOptions:
    """How the image is put into the request."""

    image_format: str = "png"
    jpeg_quality: int = 90
    max_long_side: int = 0  # 0 = no resize
    blank: bool = False  # text-only control: a white image of the same size


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask. ``api_key`` is held in memory only, never serialised."""

    model: str
    base_url: str
    api_key: str = field(default="", repr=False)
    temperature: float = GENERATION.temperature
    max_tokens: int = GENERATION.max_tokens
    timeout_s: float = 120.0  # reading the answer (and writing the body)
    connect_timeout_s: float = 10.0
    max_retries: int = 5  # retries after the first attempt
    retry_base_s: float = 1.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    prompt_order: str = "global_image_local"
    image: ImageOptions = ImageOptions()

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"


@dataclass(frozen=True)
class CallResult:
    """The outcome of one item after all attempts."""

    raw_text: str | None
    error: str | None
    attempts: int
    latency_s: float
    finish_reason: str | None = None
    usage: Usage = Usage()
    cached: bool = False  # answered from the request cache: nothing was sent
    response_model: str | None = None
    system_fingerprint: str | None = None
    reasoning: str | None = None
    refusal: str | None = None


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` replaced (no-op for an empty secret)."""
    return text.replace(secret, "[REDACTED]") if secret else text


# ---------------------------------------------------------------------------- images


@lru_cache(maxsize=64)
def image_data_url(path: Path, options: ImageOptions) -> str:
    """The image at ``path`` as a ``data:`` URL after the requested resize/format/blanking.

    A released PNG that no option changes is sent as the file's own bytes: the model gets
    exactly what the release ships (the bytes its sha256 names), and nothing is re-encoded.
    """
    with Image.open(path) as source:
        unchanged = (options.image_format == "png" and not options.blank and source.format == "PNG"
                     and not 0 < options.max_long_side < max(source.size))
        if unchanged:
            return f"data:image/png;base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
        image = source.convert("RGBA" if source.mode in ("RGBA", "LA", "P") else "RGB")
    if options.max_long_side > 0 and max(image.size) > options.max_long_side:
        scale = options.max_long_side / max(image.size)
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    if options.blank:
        image = Image.new("RGB", image.size, (255, 255, 255))
    buffer = io.BytesIO()
    if options.image_format == "jpeg":
        if image.mode == "RGBA":
            flat = Image.new("RGB", image.size, (255, 255, 255))
            flat.paste(image, mask=image.getchannel("A"))
            image = flat
        image.save(buffer, format="JPEG", quality=options.jpeg_quality)
        mime = "image/jpeg"
    elif options.image_format == "png":
        image.save(buffer, format="PNG")
        mime = "image/png"
    else:
        raise ValueError(f"unknown image format {options.image_format!r}; known: {', '.join(IMAGE_FORMATS)}")
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


# ---------------------------------------------------------------------------- messages


def prompt_parts(row: Mapping[str, Any]) -> tuple[str, str]:
    """(global, local) prompt texts. The public runner strips both; so do we."""
    prompt_global = str(row.get("prompt_global") or "").strip()
    prompt_local = str(row.get("prompt_local") or "").strip()
    if not prompt_global and not prompt_local:
        prompt_global = str(row.get("prompt") or "").strip()
    return prompt_global, prompt_local


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def _images(url: str | None) -> list[dict[str, Any]]:
    return [] if url is None else [_image(url)]  # None: a text-only control item, no image part


def _global_image_local(g: str, url: str | None, loc: str) -> list[dict[str, Any]]:
    return [*([_text(g)] if g else []), *_images(url), *([_text(loc)] if loc else [])]


def _image_first(g: str, url: str | None, loc: str) -> list[dict[str, Any]]:
    return [*_images(url), *([_text(g)] if g else []), *([_text(loc)] if loc else [])]


def _joined(g: str, url: str | None, loc: str) -> list[dict[str, Any]]:
    # The dataset's own joined prompt is prompt_global + "\n" + prompt_local.
    return [_text("\n".join(x for x in (g, loc) if x)), *_images(url)]


CONTENT_BUILDERS: dict[str, Callable[[str, str | None, str], list[dict[str, Any]]]] = {
    "global_image_local": _global_image_local,
    "image_first": _image_first,
    "joined": _joined,
}


def build_messages(row: Mapping[str, Any], image_url: str | None, prompt_order: str) -> list[dict[str, Any]]:
    """The chat messages for one item: a single user turn, parts in ``prompt_order`` (no image
    part when ``image_url`` is None: a text-only control item)."""
    prompt_global, prompt_local = prompt_parts(row)
    content = CONTENT_BUILDERS[prompt_order](prompt_global, image_url, prompt_local)
    return [{"role": "user", "content": content}]


def request_body(config: EndpointConfig, messages: list[dict[str, Any]],
                 seed: int | None = None) -> dict[str, Any]:
    """The JSON body: model, messages, sampling (with ``seed`` when given: one per epoch of a
    repeated run, so its requests differ), then ``extra_body`` merged on top."""
    body: dict[str, Any] = {"model": config.model, "messages": messages, "temperature": config.temperature}
    if config.max_tokens > 0:
        body["max_tokens"] = config.max_tokens
    if seed is not None:
        body["seed"] = seed
    body.update(dict(config.extra_body))
    return body


# ---------------------------------------------------------------------------- HTTP


def _message_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# Where providers put the reasoning text: DeepSeek and vLLM ``reasoning_content``,
# OpenRouter and newer vLLM ``reasoning`` (the first non-empty string wins).
REASONING_KEYS: tuple[str, ...] = ("reasoning_content", "reasoning")


def _reasoning_text(message: Mapping[str, Any]) -> str | None:
    for key in REASONING_KEYS:
        if (text := _str_or_none(message.get(key))) is not None:
            return text
    return None


def parse_usage(usage: Mapping[str, Any]) -> Usage:
    """The endpoint's ``usage`` object as :class:`Usage` (reasoning tokens from
    ``completion_tokens_details.reasoning_tokens``, OpenAI's place for them)."""
    details = usage.get("completion_tokens_details")
    reasoning = _int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    return Usage(_int_or_none(usage.get("prompt_tokens")), _int_or_none(usage.get("completion_tokens")),
                 _int_or_none(usage.get("total_tokens")), reasoning)


def _parse_completion(response: Mapping[str, Any], attempts: int, started: float) -> CallResult | str:
    """The item's result from a decoded answer, or the error text when it holds no choice."""
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return f"response without choices: {json.dumps(response)[:200]}"
    message = choices[0].get("message") or {}
    if not isinstance(message, dict):
        message = {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    return CallResult(
        raw_text=_message_text(message.get("content")),
        error=None,
        attempts=attempts,
        latency_s=round(time.monotonic() - started, 3),
        finish_reason=choices[0].get("finish_reason"),
        usage=parse_usage(usage),
        response_model=_str_or_none(response.get("model")),
        system_fingerprint=_str_or_none(response.get("system_fingerprint")),
        reasoning=_reasoning_text(message),
        refusal=_str_or_none(message.get("refusal")),
    )


def _total_tokens(usage: Mapping[str, Any]) -> int | None:
    total = _int_or_none(usage.get("total_tokens"))
    if total is None:
        parts = [_int_or_none(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")]
        total = None if None in parts else sum(p for p in parts if p is not None)
    return total


def open_client(config: EndpointConfig, max_connections: int) -> PooledClient:
    """The run's pooled client for ``config``'s endpoint (close it, or use ``with``)."""
    return PooledClient(config.url, api_key=config.api_key, max_connections=max_connections,
                        timeouts=Timeouts(connect=config.connect_timeout_s, read=config.timeout_s,
                                          write=config.timeout_s, pool=max(config.timeout_s, 60.0)))


def backoff_delay(attempt: int, base_s: float, rng: random.Random) -> float:
    """Full-jitter exponential backoff for the wait after failed attempt ``attempt`` (1-based)."""
    return rng.uniform(0.0, min(MAX_BACKOFF_S, base_s * (2 ** (attempt - 1))))


def complete(client: PooledClient, config: EndpointConfig, messages: list[dict[str, Any]], *,
             stop: threading.Event | None = None,
             on_retry: Callable[[str], None] | None = None,
             rng: random.Random | None = None, seed: int | None = None,
             limiter: RateLimiter | None = None, cache: RequestCache | None = None) -> CallResult:
    """Send one item with retries; never raises for endpoint trouble (it lands in ``error``).
    ``seed``: the request's sampling seed (see :func:`request_body`). ``limiter``: the run's
    shared :class:`RateLimiter`, asked before every attempt and told its outcome. ``cache``:
    an answer stored for this exact request is returned without sending (``attempts`` 0,
    ``cached``); a new answer that parses is stored, an error never is."""
    rng = rng or random.Random()
    body = json.dumps(request_body(config, messages, seed), allow_nan=False).encode("utf-8")
    started = time.monotonic()
    key = request_key(config.url, body) if cache is not None else ""
    if cache is not None and (stored := cache.get(key)) is not None:
        hit = _parse_completion(stored, 0, started)
        if not isinstance(hit, str):
            return replace(hit, cached=True)
    estimate = estimate_tokens(messages, config.max_tokens) if limiter is not None else 0
    attempts = 0
    last_error = "not attempted"
    while attempts <= config.max_retries:
        permit = None
        if limiter is not None:
            permit = limiter.acquire(estimate, stop)
            if permit is None:
                last_error = "interrupted"
                break
        attempts += 1
        try:
            response = client.post_json(body).body
        except FatalError as exc:
            last_error = str(exc)
            if permit is not None:
                limiter.failed(permit, None)
            break
        except RetryableError as exc:
            last_error = str(exc)
            wait = max(backoff_delay(attempts, config.retry_base_s, rng), exc.retry_after_s or 0.0)
            if permit is not None:
                limiter.failed(permit, exc.status, pause_s=wait)
            if attempts > config.max_retries:
                break
            if on_retry is not None:
                on_retry(redact(last_error, config.api_key))
            if stop is not None and stop.wait(wait):
                last_error = "interrupted"
                break
            if stop is None:
                time.sleep(wait)
            continue
        if permit is not None:
            usage = response.get("usage")
            limiter.succeeded(permit, _total_tokens(usage) if isinstance(usage, dict) else None)
        result = _parse_completion(response, attempts, started)
        if isinstance(result, str):
            last_error = result
            break
        if cache is not None:
            cache.put(key, config.url, response)
        return result
    return CallResult(raw_text=None, error=redact(f"failed after {attempts} attempt(s): {last_error}", config.api_key),
                      attempts=attempts, latency_s=round(time.monotonic() - started, 3))


def describe(config: EndpointConfig) -> dict[str, Any]:
    """What the run manifest records about the endpoint and request (never the key)."""
    return {
        "model": config.model,
        "endpoint": config.url,
        "sampling": {"temperature": config.temperature, "max_tokens": config.max_tokens,
                     "extra_body": dict(config.extra_body)},
        "request": {"timeout_s": config.timeout_s, "connect_timeout_s": config.connect_timeout_s,
                    "max_retries": config.max_retries, "client": "httpx, pooled keep-alive connections",
                    "retry_base_s": config.retry_base_s},
        "prompt_order": config.prompt_order,
        "prompt_text": "prompt_global and prompt_local stripped of surrounding whitespace",
        "image": {"format": config.image.image_format,
                  "jpeg_quality": config.image.jpeg_quality if config.image.image_format == "jpeg" else None,
                  "max_long_side": config.image.max_long_side or None,
                  "blank": config.image.blank, "transport": "data URL in an image_url content part",
                  "bytes": "the released PNG file's own bytes where no option changes the image, else re-encoded"},
    }
