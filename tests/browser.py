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
