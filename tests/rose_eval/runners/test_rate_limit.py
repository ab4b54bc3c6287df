"""The run-wide rate limiter: its schedule on an injected clock, then whole runs against a
real server on 127.0.0.1 that logs when every request arrived and how many were in flight."""

from __future__ import annotations

import base64
import email.utils
import io
import json
import threading
import time
from bisect import bisect_right
from pathlib import Path

import pytest
from PIL import Image

from rose_eval.cli.run import Task, main, model_answerer, run_items
from rose_eval.runners.dataset import Selection, load_split
from rose_eval.runners.openai_compat import (
    EndpointConfig,
    ImageOptions,
    build_messages,
    image_data_url,
    open_client,
)
from rose_eval.runners.predictions import PredictionsFile
from rose_eval.runners.rate_limit import (
    Limits,
    Permit,
    RateLimiter,
    estimate_tokens,
    image_size,
    image_tokens,
)

from .conftest import ok_reply, write_release


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _granted(result: Permit | float) -> Permit:
    assert isinstance(result, Permit), f"expected a permit, got a wait of {result}"
    return result


# ---------------------------------------------------------------------------- schedule


def test_rpm_spaces_requests_and_retries_count():
    clock = FakeClock()
    limiter = RateLimiter(Limits(rpm=120, max_concurrency=8), now=clock)  # one every 0.5 s
    first = _granted(limiter.try_acquire())
    wait = limiter.try_acquire()
    assert wait == pytest.approx(0.5)
    limiter.failed(first, 500)  # a retry is another request under the same limit
    clock.t += 0.5
    _granted(limiter.try_acquire())
    assert limiter.try_acquire() == pytest.approx(0.5)
    # Over a simulated minute with requests as fast as allowed: exactly rpm sends.
    clock.t, limiter = 0.0, RateLimiter(Limits(rpm=120, max_concurrency=1000), now=clock)
    sends = []
    while clock.t < 60.0:
        got = limiter.try_acquire()
        if isinstance(got, Permit):
            sends.append(clock.t)
        else:
            clock.t += got
    assert len(sends) == 120


def test_tpm_charges_the_estimate_and_usage_corrects_it():
    clock = FakeClock()
    limiter = RateLimiter(Limits(tpm=6000, max_concurrency=8), now=clock)  # 100 tokens a second
    permit = _granted(limiter.try_acquire(500))
    assert limiter.try_acquire(500) == pytest.approx(5.0)  # the estimate holds the next back
    limiter.succeeded(permit, total_tokens=100)  # it cost 100: 4 s given back
    assert limiter.try_acquire(500) == pytest.approx(1.0)
    clock.t += 1.0
    permit = _granted(limiter.try_acquire(100))
    limiter.succeeded(permit, total_tokens=300)  # it cost more: the next waits longer
    assert limiter.try_acquire(1) == pytest.approx(3.0)


def test_a_throttle_pauses_everyone_and_concurrency_halves_once_per_event():
    clock = FakeClock()
    limiter = RateLimiter(Limits(max_concurrency=8, increase_after=3), now=clock)
    permits = [_granted(limiter.try_acquire()) for _ in range(8)]
    assert limiter.try_acquire() > 0  # all 8 in flight
    limiter.failed(permits[0], 429, pause_s=2.0)
    assert limiter.allowed == 4
    for permit in permits[1:]:  # sent before the cut: the same congestion event
        limiter.failed(permit, 429, pause_s=2.0)
    assert limiter.allowed == 4
    assert limiter.try_acquire() == pytest.approx(2.0)  # nobody goes inside Retry-After
    clock.t += 2.0
    late = [_granted(limiter.try_acquire()) for _ in range(4)]
    assert limiter.try_acquire() > 0  # capped at 4 in flight
    limiter.failed(late[0], 503, pause_s=0.5)  # sent after the cut: a new event
    assert limiter.allowed == 2
    for permit in late[1:]:
        limiter.succeeded(permit)
    clock.t += 0.5
    for _ in range(3 * 6):  # +1 per 3 successes in a row, back to the start value
        limiter.succeeded(_granted(limiter.try_acquire()))
    assert limiter.allowed == 8
    stats = limiter.stats()
    assert stats.cuts == 2 and stats.min_concurrency == 2 and stats.final_concurrency == 8
    assert stats.throttled == 9 and stats.paused_s == pytest.approx(2.5)


def test_acquire_returns_none_when_stopped():
    limiter = RateLimiter(Limits(max_concurrency=1))
    limiter.acquire()
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    started = time.monotonic()
    assert limiter.acquire(stop=stop) is None
    assert 0.05 < time.monotonic() - started < 2.0


def _data_url(size: tuple[int, int], fmt: str) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buffer, format=fmt)
    return f"data:image/{fmt.lower()};base64," + base64.b64encode(buffer.getvalue()).decode()


def test_token_estimate_reads_the_image_size_from_its_header():
    assert image_size(_data_url((640, 480), "PNG")) == (640, 480)
    assert image_size(_data_url((333, 1200), "JPEG")) == (333, 1200)
    assert image_tokens(512, 512) == 255 and image_tokens(2048, 4096) == 85 + 170 * 6
    messages = [{"role": "user", "content": [{"type": "text", "text": "x" * 40},
                                             {"type": "image_url", "image_url": {"url": _data_url((512, 512), "PNG")}}]}]
    assert estimate_tokens(messages, max_tokens=256) == 10 + 255 + 256


# ---------------------------------------------------------------------------- whole runs


def _run(root: Path, server, output: Path, *extra: str) -> int:
    return main(["--dataset_root", str(root), "--split", "test", "--model", "m", "--base_url", server.url,
                 "--api_key_env", "ROSE_TEST_NO_KEY", "--output", str(output), "--retry_base_delay", "0.01",
                 "--no_progress", *extra])


def test_429_storm_pauses_all_eight_workers_for_retry_after(tmp_path, chat_server):
    release = write_release(tmp_path / "rel", scenes_per_subset=4)  # 40 items
    retry_after = 1.0
    date_pause = {}

    def script(i, body, headers):
        if i in (20, 21, 22, 35):
            return 429, {"Retry-After": str(retry_after)}, {"error": "slow down"}, 0.0
        if i == 28:  # an HTTP-date Retry-After (1-s resolution: 1 to 2 s from now)
            date_pause["until"] = time.time() + 2
            return 503, {"Retry-After": email.utils.formatdate(date_pause["until"], usegmt=True)}, {}, 0.0
        return 200, {}, ok_reply("COUNT(1)")[2], 0.1

    server = chat_server(script)
    out = tmp_path / "p.jsonl"
    assert _run(release.root, server, out, "--concurrency", "8") == 0
    assert server.count == 45 and max(server.in_flight_at[:20]) >= 4  # workers in flight together
    arrived = sorted(server.arrived)
    # A request sent before the client read the 429 can land just after it was sent; on a loaded
    # 2-core machine the server thread records such an arrival up to ~0.2 s late (seen: 0.183 s).
    tol = 0.3
    throttles = [(t, status) for t, status in server.replied if status in (429, 503)]
    assert len(throttles) == 5
    for replied_at, status in throttles:
        quiet_until = replied_at + (retry_after if status == 429 else 0.95)
        inside = [t for t in arrived if replied_at + tol < t < quiet_until]
        assert not inside, f"{[round(t - replied_at, 3) for t in inside]} s after a {status}: inside Retry-After"
        assert sum(replied_at <= t <= replied_at + tol for t in arrived) <= 7  # at most the others in flight
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    stats = manifest["rate_limit"]
    assert stats["throttled"] == 5 and stats["sends"] == 45 and stats["min_concurrency"] < 8
    assert manifest["request"]["limits"]["max_concurrency"] == 8
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 40 and all(r["error"] is None for r in rows)


def test_rpm_holds_over_the_whole_run(tmp_path, chat_server, capsys):
    release = write_release(tmp_path / "rel", scenes_per_subset=2)  # 20 items
    server = chat_server(lambda i, body, headers: (200, {}, ok_reply("COUNT(1)")[2], 0.01))
    started = time.monotonic()
    assert _run(release.root, server, tmp_path / "p.jsonl", "--concurrency", "8", "--rpm", "600") == 0
    wall = time.monotonic() - started
    assert server.count == 20 and wall >= 19 * 0.1  # 600 a minute = one every 0.1 s
    arrived = sorted(server.arrived)
    # Sends are 0.1 s apart; arrivals jitter (a new connection can hold one back ~0.1 s), so
    # any 1 s of arrivals holds the 10 sends of that second and at most one late one.
    for i, t in enumerate(arrived):
        assert bisect_right(arrived, t + 1.0) - i <= 11
    assert arrived[-1] - arrived[1] >= 18 * 0.1 - 0.1
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    assert manifest["request"]["limits"]["rpm"] == 600 and manifest["rate_limit"]["sends"] == 20


def test_a_storm_under_rpm_keeps_both_the_pause_and_the_limit(tmp_path, chat_server):
    release = write_release(tmp_path / "rel", scenes_per_subset=3)  # 30 items
    server = chat_server(lambda i, body, headers: (429, {"Retry-After": "0.4"}, {}, 0.0) if i in (8, 9, 10, 18)
                         else (200, {}, ok_reply("COUNT(1)")[2], 0.05))
    assert _run(release.root, server, tmp_path / "p.jsonl", "--concurrency", "8", "--rpm", "1200") == 0
    assert server.count == 34  # 30 answers + 4 retries, every one under the limit
    arrived = sorted(server.arrived)
    for i, t in enumerate(arrived):  # one every 0.05 s: any 1 s holds 20, and one late arrival
        assert bisect_right(arrived, t + 1.0) - i <= 21
    for replied_at, status in server.replied:
        if status == 429:
            assert not [t for t in arrived if replied_at + 0.15 < t < replied_at + 0.4]


@pytest.mark.parametrize("flags", [["--rpm", "-1"], ["--tpm", "-5"]])
def test_negative_limits_are_refused(tmp_path, chat_server, capsys, flags):
    release = write_release(tmp_path / "rel", scenes_per_subset=1)
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(0)"))
    assert _run(release.root, server, tmp_path / "p.jsonl", *flags) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--rpm and --tpm must be >= 0" in err
    assert server.count == 0 and not (tmp_path / "p.jsonl").exists()


def _library_run(tmp_path: Path, server, limiter: RateLimiter, scenes: int, concurrency: int):
    """run_items with the limiter in hand (rose-run's own loop and answerer)."""
    release = write_release(tmp_path / "rel", scenes_per_subset=scenes)
    split = load_split(release.root, "test", Selection())
    endpoint = EndpointConfig(model="m", base_url=server.url, retry_base_s=0.01, max_retries=8)
    with open_client(endpoint, concurrency) as client, PredictionsFile(tmp_path / "p.jsonl", overwrite=True) as out:
        answer = model_answerer(endpoint, "m", client, limiter=limiter)
        stats = run_items([Task(item) for item in split.items], answer, out, concurrency=concurrency,
                          progress=False, label="m")
    return split, stats


def test_concurrency_drops_under_5xx_and_recovers(tmp_path, chat_server):
    # Long enough that 8 client threads overlap at the server even when a busy machine schedules
    # them late (at 0.05 s a loaded 2-core run saw at most 5 in flight after the recovery).
    delay = 0.15
    server = chat_server(lambda i, body, headers: (500, {}, {"error": "overloaded"}, 0.0) if 12 <= i < 20
                         else (200, {}, ok_reply("COUNT(1)")[2], delay))
    limiter = RateLimiter(Limits(max_concurrency=8, increase_after=8))
    split, stats = _library_run(tmp_path, server, limiter, scenes=10, concurrency=8)  # 100 items
    assert stats.done == 100 and stats.failed == 0
    history = limiter.history
    lows = [allowed for _, allowed in history]
    assert min(lows) <= 4 and lows[-1] == 8  # it fell and came back
    times = [t for t, _ in history]

    def allowed_between(start: float, end: float) -> int:
        first = max(0, bisect_right(times, start) - 1)
        return max(lows[first:bisect_right(times, end)])

    # Whatever the server had in flight as a request arrived was within the highest limit in
    # force since the oldest of them was sent (it arrived at most SEND_SLACK after it was sent;
    # generous, since a loaded machine may schedule the server's thread late).
    send_slack = 0.5
    limits_since_oldest = [allowed_between(oldest - send_slack, t)
                           for oldest, t in zip(server.oldest_in_flight_at, server.arrived, strict=True)]
    for in_flight, allowed in zip(server.in_flight_at, limits_since_oldest, strict=True):
        assert in_flight <= allowed
    limit_at_arrival = [allowed_between(t, t) for t in server.arrived]
    assert sum(allowed <= 4 for allowed in limit_at_arrival) >= 4  # the drop held real traffic
    assert max(server.in_flight_at[-20:]) >= 6  # and the recovery was used


def test_tpm_paces_tokens_and_usage_gives_the_overestimate_back(tmp_path, chat_server):
    used = 200

    def script(i, body, headers):
        reply = ok_reply("COUNT(1)")[2]
        reply["usage"] = {"prompt_tokens": used - 3, "completion_tokens": 3, "total_tokens": used}
        return 200, {}, reply, 0.005

    server = chat_server(script)
    tpm, window = 4000.0, 1.0  # 4000 tokens a second: 20 answers of 200 a second
    limiter = RateLimiter(Limits(tpm=tpm, max_concurrency=4, window_s=window))
    split, stats = _library_run(tmp_path, server, limiter, scenes=2, concurrency=4)  # 20 items
    assert stats.done == 20
    arrived = sorted(server.arrived)
    for k, t in enumerate(arrived):  # tokens sent before t never run ahead of the schedule
        assert k * used <= (t - arrived[0] + 0.05) * tpm / window
    assert arrived[-1] - arrived[0] >= 19 * used * window / tpm - 0.05
    least = min(estimate_tokens(build_messages(item.row, image_data_url(item.image_path, ImageOptions()),
                                               "global_image_local"), 256) for item in split.items)
    assert least > 2 * used  # charged at the estimates alone the run would take 2x longer
    assert arrived[-1] - arrived[0] < 19 * least * window / tpm
