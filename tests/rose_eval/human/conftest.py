"""Fixtures of the rose-human tests: sessions and real servers on 127.0.0.1 over the mini release."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rose_eval.human.server import HumanServer
from rose_eval.human.session import HumanSession
from rose_eval.runners.dataset import Selection, load_split

StartServer = Callable[..., HumanServer]


def release_test_rows(root: Path) -> dict[str, dict[str, Any]]:
    """The release's test rows by item id (ground truth included: the tests' own knowledge)."""
    lines = (root / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["item_id"]: row for row in map(json.loads, lines)}


def open_session(root: Path, output: Path, *, subsets: tuple[str, ...] = (), limit: int = 0,
                 name: str = "human:tester") -> HumanSession:
    items = load_split(root, "test", Selection(subsets=subsets)).items
    return HumanSession(items[:limit] if limit else items, output, name)


@pytest.fixture
def start_server() -> Iterator[StartServer]:
    """``start_server(session)`` serves it on a free port in the background; all are stopped afterwards."""
    started: list[HumanServer] = []

    def start(session: HumanSession) -> HumanServer:
        server = HumanServer(session, 0)
        server.start_background()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()
        server.session.close()
