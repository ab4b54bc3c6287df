"""rose-run checks its flags before anything is sent or written (issue 22).

Measured before: ``--temperature nan`` sent ``{"temperature": NaN}`` (not JSON),
``--max_tokens -5`` sent no limit, ``--base_url notaurl`` started and failed every item
(exit 1, not 2). Each case runs against a real endpoint on 127.0.0.1 and asserts that no
request arrives and no file is written.
"""

from __future__ import annotations

import pytest

from rose_eval.cli.run import main
from tests.rose_eval.runners.conftest import ok_reply


@pytest.mark.parametrize(("flags", "needle"), [
    (["--temperature", "nan"], "--temperature: must be a finite number, got 'nan'"),
    (["--temperature", "inf"], "--temperature: must be a finite number"),
    (["--max_tokens", "-5"], "--max_tokens: must be at least 0, got -5"),
    (["--base_url", "notaurl"], "--base_url: expected an http(s) URL with a host"),
    (["--base_url", "ftp://127.0.0.1/v1"], "--base_url: expected an http(s) URL"),
    (["--base_url", "http:///v1"], "--base_url: expected an http(s) URL"),
    (["--extra_body", '{"top_p": NaN}'], "--extra_body holds NaN or Infinity"),
])
def test_bad_flags_send_and_write_nothing(release, chat_server, tmp_path, capsys, monkeypatch,
                                          flags, needle):
    monkeypatch.setenv("ROSE_TEST_KEY", "k")
    server = chat_server(lambda i, body, headers: ok_reply("COUNT(0)"))
    out = tmp_path / "p.jsonl"
    args = ["--dataset_root", str(release.root), "--model", "m", "--base_url", server.url,
            "--api_key_env", "ROSE_TEST_KEY", "--output", str(out), "--no_progress"]
    assert main([*args, *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err
    assert server.count == 0  # nothing was sent
    assert not out.exists() and not (tmp_path / "p.manifest.json").exists()
