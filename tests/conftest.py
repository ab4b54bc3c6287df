"""Fixtures shared across the test tree: a generated mini release and a headless browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import PageWatch, launch


@pytest.fixture(scope="session")
def mini_release(tmp_path_factory) -> Path:
    """A real release from the generator: every subset fed by the Latin test source, at the
    v0.1 cell sizes, 3 scenes per subset (1 dev + 2 test). Read-only: copy it to modify it."""
    from rose_gen.config import load_config
    from rose_gen.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    out = tmp_path_factory.mktemp("mini_release") / "release"
    overrides = [f"output_dir={out}", "progress=false", *latin_overrides(scenes=3, dev=1, small=False)]
    return generate_release(load_config(overrides)).path


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium for the session (Debian's, through Playwright)."""
    with launch() as chromium:
        yield chromium


@pytest.fixture
def watched_page(browser) -> Iterator[PageWatch]:
    """A fresh browser context and page with a :class:`PageWatch` attached (1280x900)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield PageWatch(context.new_page()).attach()
    finally:
        context.close()
