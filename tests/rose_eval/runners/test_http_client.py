"""The pooled client against a real keep-alive server on 127.0.0.1 that counts TCP connections."""

from __future__ import annotations

import json

import pytest

from rose_eval.cli.run import main
from rose_eval.runners.http_client import FatalError, PooledClient, RetryableError, Timeouts

from .conftest import ok_reply, write_release


def _run(root, server, output, *extra: str) -> int:
    return main(["--dataset_root", str(root), "--split", "test", "--model", "m", "--base_url", server.url,
                 "--api_key_env", "ROSE_TEST_NO_KEY", "--output", str(output), "--retry_base_delay", "0.01",
                 "--no_progress", *extra])


@pytest.mark.parametrize("workers", [1, 3])
def test_a_run_uses_at_most_one_connection_per_worker(tmp_path, chat_server, workers):
    release = write_release(tmp_path / "rel", scenes_per_subset=3)  # 30 items
    server = chat_server(lambda i, body, headers: (200, {}, ok_reply("COUNT(1)")[2], 0.01))
    assert _run(release.root, server, tmp_path / "p.jsonl", "--concurrency", str(workers)) == 0
    assert server.count == 30
    assert 1 <= server.connections <= workers  # urllib opened 30 (one per request)


def test_the_server_counts_every_new_connection(chat_server):
    # The counter itself: three clients, three connections, one request each way.
    server = chat_server(lambda i, body, headers: ok_reply("DONE"))
    for _ in range(3):
        with PooledClient(server.url + "/chat/completions", max_connections=1) as client:
            assert client.post_json(b'{"model": "m"}').body["choices"][0]["message"]["content"] == "DONE"
            assert client.post_json(b'{"model": "m"}').body["model"] == "rose-test"
    assert server.connections == 3 and server.count == 6


def test_statuses_and_timeouts_per_phase(chat_server):
    def script(i, body, headers):
        return [(429, {"Retry-After": "7"}, {"error": "slow"}, 0.0), (400, {}, {"error": "bad"}, 0.0),
                (200, {}, b"not json", 0.0), (200, {}, [1, 2], 0.0), (200, {}, ok_reply("x")[2], 1.0)][i]

    server = chat_server(script)
    with PooledClient(server.url + "/chat/completions", max_connections=1,
                      timeouts=Timeouts(connect=5, read=0.3, write=5, pool=5)) as client:
        with pytest.raises(RetryableError) as slow:
            client.post_json(b"{}")
        assert slow.value.status == 429 and slow.value.retry_after_s == 7.0
        with pytest.raises(FatalError, match="HTTP 400"):
            client.post_json(b"{}")
        with pytest.raises(RetryableError, match="non-JSON"):
            client.post_json(b"{}")
        with pytest.raises(FatalError, match="unexpected response"):
            client.post_json(b"{}")
        with pytest.raises(RetryableError, match=r"timeout \(read, 0.3 s\)"):
            client.post_json(b"{}")


def test_connection_refused_is_retryable():
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with (PooledClient(f"http://127.0.0.1:{port}/v1/chat/completions") as client,
          pytest.raises(RetryableError, match="connection error")):
        client.post_json(json.dumps({}).encode())
