"""rose-human's server over real HTTP: it serves the session's items and nothing else on disk,
to this origin only."""

from __future__ import annotations

import http.client
import json

import pytest

from tests.rose_eval.human.conftest import open_session, release_test_rows


def request(server, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
            host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server.port}")
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture
def served(mini_release, tmp_path, start_server):
    """A server over the first 5 glyph test items (one scene: its base and cue images)."""
    session = open_session(mini_release, tmp_path / "h.jsonl", subsets=("CH",), limit=5)
    return start_server(session)


def _api(server) -> dict[str, str]:
    return {"X-Rose-Token": server.token}


def _origin(server) -> dict[str, str]:
    return {"Origin": f"http://127.0.0.1:{server.port}", "Content-Type": "application/json", **_api(server)}


def test_page_state_and_images_are_served_to_this_origin(served, mini_release) -> None:
    status, headers, body = request(served, "GET", f"/?token={served.token}")
    assert status == 200 and b'<script src="/static/human.js">' in body
    assert served.token.encode() in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    status, _, body = request(served, "GET", "/api/state", headers=_api(served))
    state = json.loads(body)
    assert status == 200 and state["total"] == 5 and state["item"]["item_id"] == "CHITEM_000001"
    image = state["item"]["image_url"]
    status, headers, body = request(served, "GET", f"{image}?token={served.token}")
    assert status == 200 and headers["content-type"] == "image/png"
    assert body == (mini_release / image.lstrip("/")).read_bytes()
    for name in ("human.js", "human.css"):
        assert request(served, "GET", f"/static/{name}")[0] == 200
    status, _, _ = request(served, "GET", "/api/state", headers=_api(served), host=f"localhost:{served.port}")
    assert status == 200


@pytest.mark.parametrize("path", [
    "/metadata_test.jsonl",
    "/images/../metadata_test.jsonl",
    "/images/ROSE-ChineseGlyph/../../metadata_test.jsonl",
    "/%2e%2e/%2e%2e/etc/passwd",
    "//etc/passwd",
    "/export_summary.json",
    "/static/../session.py",
    "/static/index.html",
])
def test_paths_outside_the_served_items_are_refused(served, mini_release, path) -> None:
    status, _, body = request(served, "GET", f"{path}?token={served.token}")
    assert status == 404
    assert b"item_id" not in body and not body.startswith(b"\x89PNG")


def test_release_images_of_items_not_served_are_refused(served, mini_release) -> None:
    served_images = set(served.session.images)
    others = sorted("/" + p.relative_to(mini_release).as_posix() for p in (mini_release / "images").rglob("*.png"))
    others = [p for p in others if p not in served_images]
    assert len(served_images) == 2 and len(others) >= 20
    for path in others:
        assert request(served, "GET", f"{path}?token={served.token}")[0] == 404


def test_requests_from_other_origins_or_without_the_token_are_refused(served) -> None:
    port = served.port
    refused = [
        request(served, "GET", "/api/state"),  # no token
        request(served, "GET", "/api/state", headers={"X-Rose-Token": "wrong"}),
        request(served, "GET", "/"),
        request(served, "GET", "/api/state", headers=_api(served), host=f"evil.example:{port}"),  # DNS rebinding
        request(served, "GET", "/api/state", headers=_api(served), host="127.0.0.1:1"),
        request(served, "GET", "/api/state", headers={**_api(served), "Origin": "http://evil.example"}),
        request(served, "GET", "/api/state", headers={**_api(served), "Sec-Fetch-Site": "cross-site"}),
        request(served, "GET", f"/?token={served.token}", headers={"Sec-Fetch-Site": "cross-site"}),
        request(served, "GET", "/static/human.js", host="evil.example"),
    ]
    assert [status for status, _, _ in refused] == [403] * len(refused)
    body = json.dumps({"item_id": "CHITEM_000001", "cells": [], "count": 1, "seconds": 1}).encode()
    posts = [
        request(served, "POST", "/api/submit", headers={**_origin(served), "Origin": "http://evil.example"}, body=body),
        request(served, "POST", "/api/submit", headers={k: v for k, v in _origin(served).items() if k != "Origin"},
                body=body),
        request(served, "POST", "/api/submit", headers={**_origin(served), "X-Rose-Token": "wrong"}, body=body),
        request(served, "POST", "/api/submit", headers={**_origin(served), "Origin": f"http://127.0.0.1:{port + 1}"},
                body=body),
    ]
    assert [status for status, _, _ in posts] == [403] * len(posts)
    form = request(served, "POST", "/api/submit", headers={**_origin(served), "Content-Type": "text/plain"},
                   body=body)
    assert form[0] == 415
    assert served.session.state()["done"] == 0  # nothing was written by any of them


def test_a_same_origin_submit_writes_the_answer_without_echoing_it(served, tmp_path, mini_release) -> None:
    gold = release_test_rows(mini_release)["CHITEM_000001"]
    body = json.dumps({"item_id": "CHITEM_000001", "cells": [], "count": gold["ground_truth_count"],
                       "seconds": 2.5}).encode()
    status, _, reply = request(served, "POST", "/api/submit", headers=_origin(served), body=body)
    assert status == 200
    state = json.loads(reply)
    assert state["done"] == 1 and state["item"]["item_id"] == "CHITEM_000002"
    assert gold["answer"].encode() not in reply
    row = json.loads((tmp_path / "h.jsonl").read_text(encoding="utf-8"))
    assert row["raw_text"] == gold["answer"] and row["seconds"] == 2.5
    status, _, reply = request(served, "POST", "/api/submit", headers=_origin(served), body=body)
    assert status == 409 and json.loads(reply)["state"]["done"] == 1
    status, _, _ = request(served, "POST", "/api/submit", headers=_origin(served), body=b"{not json")
    assert status == 400
