"""Headless Chromium for tests: Debian's ``chromium`` driven by Playwright.

Playwright's own browser download is not reachable here, so :func:`launch` starts
``/usr/bin/chromium`` through ``executable_path`` (never ``playwright install``). Each
launch gets a fresh temporary profile (Playwright creates and removes it; it refuses a
``--user-data-dir`` flag of ours). :class:`PageWatch` records what a page did: console
errors, uncaught exceptions, every response (bodies read with :meth:`PageWatch.drain`)
and every request that left 127.0.0.1/localhost (such requests are aborted).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
INTERNAL_SCHEMES = frozenset({"data", "blob", "about"})


def is_local(url: str) -> bool:
    """True for URLs that stay on this machine (loopback HTTP, files, data/blob/about)."""
    parts = urlsplit(url)
    if parts.scheme in INTERNAL_SCHEMES or parts.scheme == "file":
        return True
    return parts.scheme in ("http", "https") and parts.hostname in LOCAL_HOSTS


@contextmanager
def launch() -> Iterator[object]:
    """A headless Chromium ``Browser`` (Playwright sync API); closed on exit."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.is_file():
        raise RuntimeError(f"{CHROMIUM} is missing: install the Debian package chromium (system-packages.txt)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Seen:
    """One response the page received."""

    url: str
    status: int
    body: bytes


@dataclass
class PageWatch:
    """What one page did; see the module docstring."""

    page: object
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    _pending: list[object] = field(default_factory=list)

    def attach(self) -> PageWatch:
        page = self.page
        page.on("console", lambda msg: self.console_errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", lambda req: None if is_local(req.url) else self.external_requests.append(req.url))
        page.on("response", lambda response: self._pending.append(response))
        page.route(lambda url: not is_local(url), lambda route: route.abort())
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
        """Console errors, uncaught exceptions and external requests, as one list (empty when clean)."""
        return ([f"console: {m}" for m in self.console_errors] + [f"exception: {m}" for m in self.page_errors]
                + [f"external request: {u}" for u in self.external_requests])
