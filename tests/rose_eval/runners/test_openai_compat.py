"""End-to-end: rose-run against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_eval.cli.run import main
from rose_eval.runners.http_client import parse_retry_after

from .conftest import ok_reply

KEY = "sk-test-SECRET-4242-do-not-leak"


def run(release, server, output: Path, *extra: str) -> int:
    return main(["--dataset_root", str(release.root), "--split", "test", "--model", "test-model",
                 "--base_url", server.url, "--api_key_env", "ROSE_TEST_KEY", "--output", str(output),
                 "--retry_base_delay", "0.01", "--no_progress", *extra])


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_no_key(*texts: str, paths: tuple[Path, ...] = ()) -> None:
    for text in texts:
        assert KEY not in text
    for path in paths:
        if path.exists():
            assert KEY not in path.read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("ROSE_TEST_KEY", KEY)


def _decode_data_url(url: str) -> Image.Image:
    header, data = url.split(",", 1)
    assert header in ("data:image/png;base64", "data:image/jpeg;base64")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_messages_order_content_key_and_rows(release, chat_server, tmp_path, capsys):
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(1)"))
    out = tmp_path / "preds.jsonl"
    code = run(release, server, out, "--templates", "T1", "T4", "--extra_body", '{"top_p": 0.5}')
    assert code == 0
    by_id = {r["item_id"]: r for r in release.rows}
    assert server.count == 8  # 4 scenes x (T1, T4)
    for body, headers in zip(server.requests, server.headers, strict=True):
        assert headers["authorization"] == f"Bearer {KEY}"
        assert body["model"] == "test-model" and body["temperature"] == 0 and body["max_tokens"] == 256
        assert body["top_p"] == 0.5
        (message,) = body["messages"]
        assert message["role"] == "user"
        kinds = [part["type"] for part in message["content"]]
        assert kinds == ["text", "image_url", "text"]
        first, image, last = message["content"]
        # Which row is this? The local sentence tells T1 from T4; the image must be that row's.
        candidates = [r for r in release.rows if r["prompt_local"] == last["text"]]
        assert candidates and first["text"] == candidates[0]["prompt_global"].strip()
        sent = np.asarray(_decode_data_url(image["image_url"]["url"]).convert("RGB"))
        matches = [r for r in candidates
                   if np.array_equal(sent, np.asarray(Image.open(release.root / r["image"]).convert("RGB")))]
        assert matches, "the data URL does not decode to the row's image"
    rows = read_rows(out)
    assert len(rows) == 8 and len({r["item_id"] for r in rows}) == 8
    for row in rows:
        assert row["item_id"] in by_id
        assert row["model"] == "test-model" and row["raw_text"] == "COUNT(1)" and row["error"] is None
        assert row["attempts"] == 1 and row["finish_reason"] == "stop"
        assert row["usage"] == {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        assert row["latency_s"] >= 0
    manifest = json.loads((tmp_path / "preds.manifest.json").read_text())
    config = manifest["config"]
    assert config["answered_by"]["model"] == "test-model"
    assert config["answered_by"]["endpoint"] == server.url + "/chat/completions"
    assert config["answered_by"]["prompt_order"] == "global_image_local"
    assert config["answered_by"]["image"]["format"] == "png" and config["answered_by"]["image"]["max_long_side"] is None
    assert config["answered_by"]["sampling"] == {"temperature": 0.0, "max_tokens": 256, "extra_body": {"top_p": 0.5}}
    metadata = release.root / "metadata_test.jsonl"
    assert config["dataset"]["metadata_sha256"] == hashlib.sha256(metadata.read_bytes()).hexdigest()
    assert manifest["tool"]["version"] and manifest["status"] == "complete"
    captured = capsys.readouterr()
    assert_no_key(captured.out, captured.err, paths=(out, tmp_path / "preds.manifest.json"))


def test_retry_on_429_with_retry_after_then_500(release, chat_server, tmp_path):
    def script(i, body, headers):
        if i == 0:
            return 429, {"Retry-After": "0.4"}, {"error": "slow down"}, 0.0
        if i == 1:
            return 500, {}, {"error": "boom"}, 0.0
        return ok_reply("COUNT(2)")

    server = chat_server(script)
    out = tmp_path / "p.jsonl"
    started = time.monotonic()
    assert run(release, server, out, "--templates", "T1", "--samples_per_subset", "1", "--subsets", "ChineseGlyph") == 0
    assert time.monotonic() - started >= 0.4  # Retry-After honoured
    (row,) = read_rows(out)
    assert row["raw_text"] == "COUNT(2)" and row["attempts"] == 3 and row["error"] is None
    assert server.count == 3


def test_timeout_is_retried(release, chat_server, tmp_path):
    server = chat_server(lambda i, body, headers: (200, {}, ok_reply("COUNT(0)")[2], 1.5 if i == 0 else 0.0))
    out = tmp_path / "p.jsonl"
    code = run(release, server, out, "--templates", "T1", "--samples_per_subset", "1", "--subsets", "CH",
               "--timeout", "0.5")
    assert code == 0
    (row,) = read_rows(out)
    assert row["attempts"] == 2 and row["raw_text"] == "COUNT(0)"


def test_failures_are_recorded_never_answers_and_key_is_scrubbed(release, chat_server, tmp_path, capsys):
    # The server echoes the Authorization header in its error body: the key must not leak.
    server = chat_server(lambda i, body, headers: (500, {}, {"error": f"bad {headers['authorization']}"}, 0.0))
    out = tmp_path / "p.jsonl"
    code = run(release, server, out, "--templates", "T2", "--max_retries", "2")
    assert code == 1
    rows = read_rows(out)
    assert len(rows) == 4 and server.count == 12  # 3 attempts each
    for row in rows:
        assert row["raw_text"] is None and "HTTP 500" in row["error"] and row["attempts"] == 3
        assert "[REDACTED]" in row["error"]
    captured = capsys.readouterr()
    assert_no_key(captured.out, captured.err, paths=(out, tmp_path / "p.manifest.json"))


def test_non_retryable_error_fails_at_once(release, chat_server, tmp_path):
    server = chat_server(lambda i, body, headers: (400, {}, {"error": "bad request"}, 0.0))
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--templates", "T1", "--subsets", "CH") == 1
    assert server.count == 2 and all(r["attempts"] == 1 and "HTTP 400" in r["error"] for r in read_rows(out))


def test_resume_skips_done_items_and_retries_failed_ones(release, chat_server, tmp_path):
    failing = {"CHITEM_000001"}

    def flaky(i, body, headers):
        local = body["messages"][0]["content"][-1]["text"]
        is_failing = any(r["item_id"] in failing and r["prompt_local"] == local for r in release.rows)
        return (503, {}, {"error": "down"}, 0.0) if is_failing else ok_reply("DONE")

    server = chat_server(flaky)
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--max_retries", "1", "--subsets", "CH") == 1
    first = read_rows(out)
    assert len(first) == 10 and sum(r["raw_text"] is None for r in first) >= 1
    n_failed = sum(r["raw_text"] is None for r in first)
    # A cut line from an interrupted write must not break the resume.
    with out.open("a") as handle:
        handle.write('{"item_id": "CHITEM_0000')
    failing.clear()
    before = server.count
    assert run(release, server, out, "--subsets", "CH") == 0
    assert server.count - before == n_failed  # only the failed items were asked again
    rows = read_rows(out)
    assert len(rows) == 10 and len({r["item_id"] for r in rows}) == 10
    assert all(r["raw_text"] is not None and r["error"] is None for r in rows)
    snapshot = out.read_bytes()
    before = server.count
    assert run(release, server, out, "--subsets", "CH") == 0
    assert server.count == before and out.read_bytes() == snapshot  # nothing left: 0 new requests


def test_resume_refuses_another_configuration(release, chat_server, tmp_path, capsys):
    server = chat_server(lambda i, body, headers: ok_reply("DONE"))
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--templates", "T3") == 0
    capsys.readouterr()
    assert run(release, server, out, "--templates", "T3", "--temperature", "0.7") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "different" in err and "--overwrite" in err
    assert run(release, server, out, "--templates", "T3", "--temperature", "0.7", "--overwrite") == 0


@pytest.mark.parametrize(("flags", "kinds", "mime", "size", "blank"), [
    (["--prompt_order", "image_first"], ["image_url", "text", "text"], "png", None, False),
    (["--prompt_order", "joined"], ["text", "image_url"], "png", None, False),
    (["--blank_image"], ["text", "image_url", "text"], "png", None, True),
    (["--image_format", "jpeg", "--max_long_side", "100"], ["text", "image_url", "text"], "jpeg", 100, False),
])
def test_image_and_order_controls(release, chat_server, tmp_path, flags, kinds, mime, size, blank):
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(0)"))
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--templates", "T1", "--subsets", "CH", "--samples_per_subset", "1", *flags) == 0
    content = server.requests[0]["messages"][0]["content"]
    assert [p["type"] for p in content] == kinds
    url = next(p for p in content if p["type"] == "image_url")["image_url"]["url"]
    assert url.startswith(f"data:image/{mime};base64,")
    image = _decode_data_url(url)
    row = next(r for r in release.rows if r["task_template"] == "T1_COUNT_GLOBAL")
    original = Image.open(release.root / row["image"])
    if size:
        assert max(image.size) == size
    else:
        assert image.size == original.size
    pixels = np.asarray(image.convert("L"))
    assert (pixels.min() == 255) == blank
    if "joined" in flags:
        assert content[0]["text"] == row["prompt_global"].strip() + "\n" + row["prompt_local"]
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())["config"]["answered_by"]
    assert manifest["image"]["blank"] == blank and manifest["image"]["format"] == mime


@pytest.mark.parametrize(("flags", "unchanged"), [
    ([], True),
    (["--max_long_side", "100000"], True),  # a bound the image is within changes nothing
    (["--max_long_side", "100"], False),
    (["--blank_image"], False),
])
def test_the_released_png_is_sent_as_its_own_bytes(release, chat_server, tmp_path, flags, unchanged):
    """What the model gets is the file the release ships (its sha256), unless an option changes it."""
    for png in release.root.rglob("*.png"):  # as a release writes them: zlib level 1, not Pillow's default
        with Image.open(png) as image:
            image.load()
        image.save(png, format="PNG", compress_level=1)
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(0)"))
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--templates", "T1", "T4", "--subsets", "CH", *flags) == 0
    rows = {r["item_id"]: r for r in release.rows}
    sent = [next(p for p in b["messages"][0]["content"] if p["type"] == "image_url")["image_url"]["url"]
            for b in server.requests]
    shipped = [(release.root / rows[r["item_id"]]["image"]).read_bytes() for r in read_rows(out)]
    assert len(sent) == len(shipped) >= 2 and len(set(shipped)) >= 2  # base and cue images
    # server.requests and the output rows need not share an order: compare as sets
    got = {base64.b64decode(u.split(",", 1)[1]) for u in sent}
    assert (got == set(shipped)) == unchanged


def test_retry_after_parsing():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("junk") is None and parse_retry_after(None) is None


def test_ctrl_c_stops_cleanly_and_resume_finishes(release, chat_server, tmp_path, interruptible_children):
    server = chat_server(lambda i, body, headers: (200, {}, ok_reply("DONE")[2], 0.15))
    out = tmp_path / "p.jsonl"
    cmd = [sys.executable, "-m", "rose_eval.cli.run", "--dataset_root", str(release.root), "--split", "test",
           "--model", "m", "--base_url", server.url, "--api_key_env", "ROSE_TEST_KEY", "--output", str(out),
           "--concurrency", "1"]
    env = {**os.environ, "ROSE_TEST_KEY": KEY}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "resume" in err and KEY not in err
    done = read_rows(out)  # every line is whole JSON
    assert 2 <= len(done) < 20
    before = server.count
    code = subprocess.run([*cmd, "--concurrency", "4"], env=env, capture_output=True, text=True, timeout=60).returncode
    assert code == 0
    rows = read_rows(out)
    assert len(rows) == 20 and len({r["item_id"] for r in rows}) == 20
    assert server.count - before <= 20 - len(done) + 1  # at most the one in flight is asked twice


def test_dry_run_sends_and_writes_nothing(release, chat_server, tmp_path, capsys):
    server = chat_server(lambda i, body, headers: ok_reply("DONE"))
    out = tmp_path / "p.jsonl"
    assert run(release, server, out, "--dry_run") == 0
    assert server.count == 0 and not out.exists() and not (tmp_path / "p.manifest.json").exists()
    assert "20 items" in capsys.readouterr().err


def test_usage_errors_are_one_line(release, tmp_path, capsys):
    base = ["--dataset_root", str(release.root), "--output", str(tmp_path / "p.jsonl")]
    for extra in (["--solver", "cv", "--base_url", "http://127.0.0.1:9/v1"], ["--base_url", "http://x/v1"],
                  ["--model", "m", "--base_url", "http://x/v1", "--extra_body", "[1]"],
                  ["--model", "m", "--base_url", "http://x/v1", "--extra_body", "{oops"]):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("rose-run: error:")
    assert not (tmp_path / "p.jsonl").exists()
