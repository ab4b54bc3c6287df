"""Shared fixtures: headless Chromium (see tests/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import PageLog, launch_chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium for the whole session (Playwright, sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page_log() -> PageLog:
    """What the test's ``page`` requested, logged to the console, and threw."""
    return PageLog()


@pytest.fixture
def page(browser: Any, page_log: PageLog) -> Iterator[Any]:
    """A fresh browser context and page per test, recorded into ``page_log``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page_log.attach(page)
    yield page
    context.close()
