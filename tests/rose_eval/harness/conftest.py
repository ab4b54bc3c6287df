"""Fixtures for the harness tests: a real generated release (all five subsets, both splits,
JSONL + Parquet + images) and, reused from the runner tests, the local OpenAI-compatible
HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.rose_eval.runners.conftest import chat_servers


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def release(mini_profile_release) -> Path:
    """``rose-gen profile=mini`` cut to one test and one dev scene per subset (25 + 25 rows)."""
    return mini_profile_release


@pytest.fixture(scope="session")
def test_rows(release) -> list[dict[str, Any]]:
    return read_rows(release / "metadata_test.jsonl")


@pytest.fixture(scope="module")
def module_chat_server():
    """The runner tests' local server, startable once per module: ``srv = module_chat_server(script)``."""
    with chat_servers() as start:
        yield start
