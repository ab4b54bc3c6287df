"""rose-run's client against inspect_ai's, side by side in one run: the same local server
(``bench/chat_server.py``, a separate process answering at once), the same items (the v0_1
test split, 5,560 items), the same concurrency.

    .venv/bin/python bench/bench_client.py --work /tmp/rose-client --markdown

Each client runs as a user runs it, timed whole by ``/usr/bin/time`` (start-up, reading
the release, encoding images, HTTP, writing its output; inspect's includes its scorer and
log): wall, requests per second, client CPU (user + sys) per request, peak RSS, and the TCP
connections the server accepted (a pooled client opens about as many as its concurrency).
``--scale 1 4`` repeats every item 4 times (``--epochs 4``, temperature 0.7) to see whether
memory stays flat as the run grows. lmms-eval needs torch and its own environment
(docs/running.md): ``--lmms_python VENV/bin/python`` adds it (``openai_compatible_chat``
with ``num_concurrent`` = the concurrency, on the task folder ``rose-export lmms-eval``
writes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
KEY_ENV = "ROSE_BENCH_KEY"
LMMS_PYTHON: list[str] = []  # --lmms_python


def start_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(ROOT / "bench" / "chat_server.py")], stdout=subprocess.PIPE,
                              text=True, stdin=subprocess.DEVNULL)
    line = server.stdout.readline().strip()
    if not line.startswith("listening on "):
        server.kill()
        sys.exit(f"bench_client: the chat server did not start: {line!r}")
    return server, line.removeprefix("listening on ")


def server_stats(url: str, reset: bool = False) -> dict:
    root = url.removesuffix("/v1")
    request = urllib.request.Request(root + ("/stats/reset" if reset else "/stats"), data=b"{}" if reset else None)
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def client_command(client: str, release: Path, url: str, work: Path, key: str, concurrency: int,
                   epochs: int) -> list[str]:
    sampling = ["0.7"] if epochs > 1 else ["0"]
    if client == "rose-run":
        out = work / f"{key}.jsonl"
        for stale in (out, out.with_name(f"{key}.manifest.json")):
            stale.unlink(missing_ok=True)
        return [str(BIN / "rose-run"), "--dataset_root", str(release), "--split", "test", "--base_url", url,
                "--model", "bench-model", "--api_key_env", KEY_ENV, "--concurrency", str(concurrency),
                "--temperature", *sampling, "--epochs", str(epochs), "--no_cache", "--no_progress",
                "--output", str(out)]
    if client == "lmms-eval":
        tasks, out = work / "lmms-tasks", work / f"lmms-{key}"
        shutil.rmtree(out, ignore_errors=True)
        if not tasks.is_dir():
            subprocess.run([str(BIN / "rose-export"), "lmms-eval", str(release), str(tasks)], check=True,
                           capture_output=True, stdin=subprocess.DEVNULL)
        return [LMMS_PYTHON[0], "-m", "lmms_eval", "--model", "openai_compatible_chat", "--model_args",
                f"model_version=bench-model,num_concurrent={concurrency}", "--tasks", "rose_test",
                "--include_path", str(tasks), "--reasoning_tags", "none", "--log_samples", "--output_path", str(out)]
    logs = work / f"logs-{key}"
    shutil.rmtree(logs, ignore_errors=True)
    return [str(BIN / "inspect"), "eval", str(ROOT / "rose_eval" / "harness" / "inspect_task.py") + "@rose",
            "-T", f"dataset_root={release}", "-T", f"temperature={sampling[0]}", "--model",
            "openai-api/bench/bench-model", "--model-base-url", url, "--max-connections", str(concurrency),
            "--epochs", str(epochs), "--log-dir", str(logs), "--display", "none", "--no-log-images"]


def timed(cmd: list[str], env: dict[str, str], times: Path) -> tuple[float, float, float, int]:
    """(wall s, user s, sys s, peak RSS kB) of one command, from /usr/bin/time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(times), *cmd], env=env, cwd=ROOT,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"bench_client: {' '.join(cmd[:2])} failed (exit {done.returncode}): {done.stderr.strip()[-600:]}")
    wall, user, system, rss = times.read_text().split()[-4:]
    return float(wall), float(user), float(system), int(rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-client"), help="scratch folder (reused)")
    parser.add_argument("--release", type=Path, default=None, help="a release (default: v0_1 made in --work)")
    parser.add_argument("--clients", nargs="+", default=["rose-run", "inspect"], choices=["rose-run", "inspect", "lmms-eval"])
    parser.add_argument("--scale", nargs="+", type=int, default=[1], help="epochs per item (1 = each item once)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--lmms_python", default=None, help="python of a venv with lmms-eval (adds that client)")
    add_markdown_flag(parser, "client.md")
    args = parser.parse_args()
    context = run_context()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    release = args.release or work / "v0_1"
    if not (release / "export_summary.json").is_file():
        subprocess.run([str(BIN / "rose-gen"), "profile=v0_1", f"output_dir={release}", "workers=2",
                        "progress=false"], check=True, cwd=ROOT, stdin=subprocess.DEVNULL)
    clients = list(args.clients)
    if args.lmms_python:
        LMMS_PYTHON.append(args.lmms_python)
        clients += [] if "lmms-eval" in clients else ["lmms-eval"]
    elif "lmms-eval" in clients:
        parser.error("lmms-eval needs --lmms_python (its own venv: docs/running.md)")
    items = sum(1 for _ in (release / "metadata_test.jsonl").open(encoding="utf-8"))
    env = {**os.environ, KEY_ENV: "bench-key", "BENCH_API_KEY": "bench-key", "INSPECT_LOG_LEVEL": "warning",
           "OPENAI_API_KEY": "bench-key"}
    server, url = start_server()
    env["OPENAI_API_BASE"] = url
    try:
        for epochs in args.scale:
            for client in clients:
                key = f"{client} x{epochs}" + ("" if args.release is None else f", {items:,} items")
                server_stats(url, reset=True)
                cmd = client_command(client, release, url, work, re.sub(r"\W+", "_", key), args.concurrency, epochs)
                wall, user, system, rss = timed(cmd, env, work / "time.txt")
                stats = server_stats(url)
                n = stats["requests"]
                if n < items * epochs:  # lmms-eval exits 0 after an error of its own
                    sys.exit(f"bench_client: {key} sent {n} of {items * epochs} requests; run its command by hand "
                             f"to see why: {' '.join(cmd)}")
                line = (f"{key}: {n:,} requests over {stats['connections']} connections in {wall:.1f} s wall "
                        f"({n / wall:.0f}/s); client CPU {user + system:.1f} s "
                        f"({1000 * (user + system) / max(n, 1):.2f} ms/request); peak RSS {rss / 1024:.0f} MB")
                print(line, flush=True)
                if args.markdown:
                    intro = ("Each client against `bench/chat_server.py` (a separate process on 127.0.0.1 that "
                             "answers every request at once), the v0_1 test split (5,560 items; *x4*: "
                             f"`--epochs 4`; rows naming fewer items: `--release` of that size), concurrency {args.concurrency}, "
                             "timed whole by `/usr/bin/time` as a "
                             "user runs it (start-up, images, HTTP and the output; inspect's includes its scorer "
                             "and log). *connections*: TCP connections the server accepted. Reproduce: "
                             "`.venv/bin/python bench/bench_client.py --markdown`, then `... --clients rose-run "
                             "--scale 4 --markdown` (inspect at 4x takes about 25 minutes here); lmms-eval: "
                             "`--clients lmms-eval --lmms_python VENV/bin/python --markdown`.")
                    write_row(args.markdown, "rose-run's client against inspect_ai's", intro,
                              ["requests", "connections", "wall s", "requests/s", "client CPU ms/request",
                               "peak RSS MB"], key,
                              [f"{n:,}", f"{stats['connections']:,}", f"{wall:.1f}", f"{n / wall:.0f}",
                               f"{1000 * (user + system) / max(n, 1):.2f}", f"{rss / 1024:.0f}"], context)
                time.sleep(1)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
