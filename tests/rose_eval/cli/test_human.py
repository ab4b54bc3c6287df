"""The rose-human command: it serves until Ctrl+C, and bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

from rose_eval.cli.human import main


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


def test_the_command_serves_prints_its_address_and_stops_on_ctrl_c(mini_release, tmp_path,
                                                                   interruptible_children) -> None:
    out = tmp_path / "h.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rose_eval.cli.human", "--dataset_root", str(mini_release), "--output", str(out),
         "--name", "ada", "--subsets", "PixelContent", "--limit", "3", "--port", "0"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        lines = [proc.stderr.readline() for _ in range(3)]
        assert lines[0].startswith("rose-human: 0 of 3 items done")
        url = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)", lines[1]).group(1)
        base, token = url.split("/?token=")
        request = urllib.request.Request(base + "/api/state", headers={"X-Rose-Token": token})
        with urllib.request.urlopen(request, timeout=10) as response:
            state = json.load(response)
        assert state["model"] == "human:ada" and state["item"]["item_id"] == "PCONTITEM_000001"
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "0 of 3 items done" in err and "Traceback" not in err


def test_bad_input_is_one_line_and_exit_2(mini_release, tmp_path, capsys) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"item_id": "CHITEM_000001", "model": "human:zoe", "raw_text": "COUNT(1)",
                                "error": None}) + "\n", encoding="utf-8")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    base = ["--dataset_root", str(mini_release), "--output", str(tmp_path / "h.jsonl")]
    cases = [
        (["--dataset_root", str(tmp_path / "nope"), "--output", str(tmp_path / "h.jsonl")], "is not a directory"),
        ([*base, "--split", "train"], "invalid choice"),
        ([*base, "--subsets", "Latin"], "unknown subset"),
        ([*base, "--name", "a b"], "--name"),
        ([*base, "--limit", "-1"], "--limit"),
        ([*base, "--port", "70000"], "--port"),
        ([*base, "--port", str(busy.getsockname()[1])], "cannot listen"),
        (["--dataset_root", str(mini_release), "--output", str(other), "--name", "max"], "human:zoe"),
        (["--dataset_root", str(mini_release), "--output", str(tmp_path)], "--output"),
        (["--output", str(other)], "--dataset_root"),
    ]
    try:
        for argv, what in cases:
            assert _run(argv) == 2, argv
            err = capsys.readouterr().err
            assert what in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
    finally:
        busy.close()
    assert not (tmp_path / "h.jsonl").exists()
    assert other.read_text(encoding="utf-8").count("\n") == 1


@pytest.mark.parametrize("flag", ["--help"])
def test_help_lists_the_flags(flag, capsys) -> None:
    assert _run([flag]) == 0
    text = capsys.readouterr().out
    for name in ("--dataset_root", "--split", "--output", "--subsets", "--limit", "--port", "--shuffle", "--seed"):
        assert name in text
