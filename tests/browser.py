"""Headless Chromium for the tests: Debian's browser driven by Playwright.

Playwright's own browser download is not reachable here, so it drives the system
``chromium`` (Debian package, listed in system-packages.txt) through ``executable_path``.
The fixtures ``browser`` (one per session) and ``page`` / ``page_log`` (a fresh context per
test that records every request, console message and page error) live in
tests/conftest.py. Each launch gets a fresh temporary profile from Playwright (it manages
``--user-data-dir`` itself and refuses it as an argument).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = Path(os.environ.get("ROSE_CHROMIUM", "/usr/bin/chromium"))
LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",  # we run as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
)


def launch_chromium(playwright: Any) -> Any:
    """A headless Chromium Browser from Debian's binary (a clear error when it is missing)."""
    if not CHROMIUM.is_file():
        raise RuntimeError(f"{CHROMIUM} not found: install Debian's chromium (./run.sh setup "
                           "installs system-packages.txt as root) or set ROSE_CHROMIUM")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                      args=list(LAUNCH_ARGS))


@dataclass
class PageLog:
    """Everything a page did: request URLs, console messages (type, text), page errors."""

    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind in ("error", "warning")]

    def attach(self, page: Any) -> None:
        """Start recording ``page``'s requests, console output and uncaught errors."""
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: self.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))


# ---------------------------------------------------------------------------- watching a page closely

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
INTERNAL_SCHEMES = frozenset({"data", "blob", "about", "file"})


def is_local(url: str) -> bool:
    """True for URLs that stay on this machine (loopback HTTP, files, data/blob/about)."""
    parts = urlsplit(url)
    if parts.scheme in INTERNAL_SCHEMES:
        return True
    return parts.scheme in ("http", "https") and parts.hostname in LOCAL_HOSTS


@dataclass
class Seen:
    """One response the page received."""

    url: str
    status: int
    body: bytes


@dataclass
class PageWatch:
    """A :class:`PageLog` plus what servers sent: every response body (read with :meth:`drain`,
    e.g. to scan them for ground truth) and every request that left this machine (aborted)."""

    page: Any
    log: PageLog = field(default_factory=PageLog)
    external_requests: list[str] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    _pending: list[Any] = field(default_factory=list)

    def attach(self) -> PageWatch:
        self.log.attach(self.page)
        self.page.on("request", lambda req: None if is_local(req.url) else self.external_requests.append(req.url))
        self.page.on("response", lambda response: self._pending.append(response))
        self.page.route(lambda url: not is_local(url), lambda route: route.abort())
        return self

    def drain(self) -> list[Seen]:
        """Read the bodies of the responses received since the last drain (call before a reload)."""
        fresh = []
        while self._pending:
            response = self._pending.pop(0)
            try:
                body = response.body()
            except Exception:  # noqa: BLE001 - redirects and aborted loads have no body
                body = b""
            fresh.append(Seen(response.url, response.status, body))
        self.seen += fresh
        return fresh

    @property
    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and external requests (empty when clean)."""
        return ([f"console: {m}" for m in self.log.console_errors]
                + [f"exception: {m}" for m in self.log.page_errors]
                + [f"external request: {u}" for u in self.external_requests])
