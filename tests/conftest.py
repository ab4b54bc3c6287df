"""Shared fixtures (headless Chromium, see tests/browser.py) and the suite's plugins.

tests/skip_policy.py makes every skip fail the run unless a test declares an optional
third-party package with ``@pytest.mark.optional_dependency(...)``; read it before adding
a skip.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import PageLog, PageWatch, launch_chromium

pytest_plugins = ["pytester", "tests.skip_policy"]
MINI_SUBSETS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium per test module (Playwright, sync API).

    Not per session: Playwright's driver threads and event loop would outlive the module, and
    a later module that forks a helper process or runs its own event loop (the bootstrap
    helper, inspect_ai) would then fail, depending on test order.
    """
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


@pytest.fixture
def watched_page(browser: Any) -> Iterator[PageWatch]:
    """A fresh context and page with a :class:`tests.browser.PageWatch` (response bodies kept,
    requests leaving this machine recorded and aborted)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield PageWatch(context.new_page()).attach()
    finally:
        context.close()


def made_once_per_run(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """``make(path)``'s folder, made once per test run whatever the number of xdist workers:
    the first worker to ask makes it, under a file lock in the run's temp root that all
    workers share; the others wait, then read the same folder."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's basetemp is a folder of the run's
    path, made = root / name, root / f"{name}.made"
    with FileLock(str(root / f"{name}.lock")):
        if not made.exists():
            make(path)
            made.touch()
    return path


@pytest.fixture(scope="session")
def mini_release(tmp_path_factory) -> Path:
    """A real release from the generator: every subset fed by the Latin test source, at the
    v0.1 cell sizes, 3 scenes per subset (1 dev + 2 test), made once per test run. Read-only:
    copy it to modify it."""
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    def make(out: Path) -> None:
        overrides = [f"output_dir={out}", "progress=false", *latin_overrides(scenes=3, dev=1, small=False)]
        generate_release(load_config(overrides))

    return made_once_per_run(tmp_path_factory, "mini_release", make)


@pytest.fixture(scope="session")
def mini_profile_release(tmp_path_factory) -> Path:
    """``rose-gen profile=mini`` cut to one test and one dev scene per subset (25 + 25 rows), made
    once per test run. Read-only: copy it to modify it."""
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release

    def make(out: Path) -> None:
        sizes = [f"subset.{name}.{key}={value}" for name in MINI_SUBSETS
                 for key, value in (("scenes", 2), ("dev_scenes", 1))]
        generate_release(load_config(["profile=mini", f"output_dir={out}", "progress=false", *sizes]))

    return made_once_per_run(tmp_path_factory, "mini_profile_release", make)


@pytest.fixture
def interruptible_children() -> Iterator[None]:
    """Child processes started in the test take Ctrl-C as a terminal user's would.

    A shell starts background jobs with SIGINT ignored, and an ignored signal stays ignored
    across fork and exec, so a suite run in the background (``./run.sh test &``) would give
    its children no KeyboardInterrupt at all. While the test runs, this process handles
    SIGINT, and a handled signal is reset to the default in an exec'd child.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True)
def _private_request_cache(tmp_path_factory, monkeypatch) -> None:
    """Every test gets its own rose-run request cache (``$ROSE_CACHE_DIR``, inherited by
    child processes): local test servers reuse ports, so a shared cache would answer one
    test's requests with another's replies and hide what the test sends."""
    monkeypatch.setenv("ROSE_CACHE_DIR", str(tmp_path_factory.mktemp("rose-cache")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules with slow end-to-end tests first, their slow tests leading (stable otherwise):
    with one xdist worker per core the long tests start at once and the quick ones fill in
    behind them, instead of a long test starting last and running alone while the other core
    idles. A module stays together, so its module-scoped fixtures are made once per worker."""
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item.nodeid.split("::", 1)[0], i)
    slow_modules = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}

    def key(item: pytest.Item) -> tuple[bool, int, bool]:
        module = item.nodeid.split("::", 1)[0]
        return module not in slow_modules, first[module], item.get_closest_marker("slow") is None

    items.sort(key=key)
