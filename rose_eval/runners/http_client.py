"""One pooled HTTP client per run: keep-alive connections shared by all worker threads.

httpx keeps up to ``max_connections`` connections open and hands them to whichever
thread asks next, so a run of N items with W workers opens at most W connections (the
standard library's urllib opened one per request and sent ``Connection: close``).
Timeouts are per phase: connecting, writing the body, reading the answer and waiting for
a free connection from the pool. HTTP/1.1 only: with one connection per worker there is
nothing for HTTP/2's multiplexing to win, and it would add three packages (h2, hpack,
hyperframe) to the base install.

A POST either returns the decoded JSON object with its headers, or raises
:class:`RetryableError` (429, 408, 409, 425, 5xx, timeouts, connection trouble, a body
that is not JSON) or :class:`FatalError` (other statuses, a JSON body that is not an
object). Messages name the URL; the caller scrubs the key.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
MAX_RETRY_AFTER_S = 300.0


class RetryableError(Exception):
    """A failure worth another attempt, with an optional server-requested wait."""

    def __init__(self, message: str, retry_after_s: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.status = status


class FatalError(Exception):
    """A failure another attempt would not fix (4xx other than 408/409/425/429, bad body)."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds per phase of one request (``read`` is the wait for the model's answer)."""

    connect: float = 10.0
    read: float = 120.0
    write: float = 30.0
    pool: float = 60.0

    def as_httpx(self) -> httpx.Timeout:
        """The same limits in httpx's form."""
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)


@dataclass(frozen=True)
class Reply:
    """A decoded 2xx answer and the response headers (lower-case names)."""

    body: dict[str, Any]
    headers: Mapping[str, str]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def release(response: httpx.Response) -> None:
    """Let reference counting free a read ``response`` as soon as the caller drops it.

    httpx 0.28 wraps every response's stream in a ``BoundSyncStream`` that points back at
    the response (to set ``elapsed`` on close; encode/httpx#3733): a reference cycle, so a
    response, with its request and the request's body (the item's image, ~100 KB), is freed
    only by the cyclic collector, and those it misses in its young passes wait for a full
    one. A run holds its split's rows (~105k tracked objects with v0_1's test split), so full
    passes are rare: rose-run x4 on v0_1 had one at request 1,970 and the next at 17,773,
    which freed ~240 requests (11,060 objects, ~25 MB): peak RSS grew with the run. Once
    the body is read and the stream closed (``post`` does both) the wrapper has done its
    work; the response keeps a plain stream over the same bytes.
    """
    response.stream = httpx.ByteStream(response.content)


class PooledClient:
    """A thread-safe keep-alive client for one endpoint URL (use as a context manager)."""

    def __init__(self, url: str, *, api_key: str = "", max_connections: int = 4,
                 timeouts: Timeouts = Timeouts()) -> None:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.url = url
        self.timeouts = timeouts
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections,
                              keepalive_expiry=30.0)
        # trust_env=False: a proxy variable in the shell must not silently reroute a paid run.
        self._client = httpx.Client(headers=headers, timeout=timeouts.as_httpx(), limits=limits,
                                    http1=True, http2=False, trust_env=False)

    def __enter__(self) -> PooledClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection."""
        self._client.close()

    def post_json(self, body: bytes) -> Reply:
        """One POST of ``body``; the decoded JSON object, or RetryableError / FatalError."""
        try:
            response = self._client.post(self.url, content=body)
        except httpx.TimeoutException as exc:
            phase = {httpx.ConnectTimeout: "connect", httpx.ReadTimeout: "read", httpx.WriteTimeout: "write",
                     httpx.PoolTimeout: "pool"}.get(type(exc), "request")
            limit = getattr(self.timeouts, phase, self.timeouts.read)
            raise RetryableError(f"timeout ({phase}, {limit:g} s) from {self.url}") from None
        except httpx.TransportError as exc:
            raise RetryableError(f"connection error to {self.url}: {type(exc).__name__}: {exc}") from None
        release(response)
        headers = {k.lower(): v for k, v in response.headers.items()}
        payload = response.content
        if response.status_code >= 300:
            detail = payload[:300].decode("utf-8", "replace").replace("\n", " ")
            message = f"HTTP {response.status_code} from {self.url}: {detail}".strip()
            if response.status_code in RETRY_STATUSES:
                raise RetryableError(message, parse_retry_after(headers.get("retry-after")),
                                     status=response.status_code)
            raise FatalError(message)
        try:
            decoded = json.loads(payload)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RetryableError(f"non-JSON response from {self.url}: {payload[:200]!r}") from None
        if not isinstance(decoded, dict):
            raise FatalError(f"unexpected response from {self.url}: {str(decoded)[:200]}")
        return Reply(decoded, headers)
