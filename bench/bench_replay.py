"""Time rose-replay on the 1,112 shipped v0.1 rows: rows only (re-derive, compare, resolve the
assets; nothing drawn) and the full replay (every scene drawn and PNG-encoded), each in a
fresh process so font checksums and glyph caches start cold; beside the times, what the
replay found (findings, v0.1's difficulty labels our rule agrees with, exceptions below our
visibility thresholds).

    .venv/bin/python bench/bench_replay.py --markdown

The figures are in ``bench/replay.md``. The CLI equivalents: ``rose-replay ROWS --report_only
FILE`` and ``rose-replay ROWS OUT`` (writes the release too).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

CHILD = """
import json, sys, time
from rose_gen.check.replay import ReplayOptions, input_files, read_rows, replay_rows, summarize
from tests.reference import v01_rows_path
cpu, wall = time.process_time(), time.perf_counter()
items = read_rows(input_files(v01_rows_path()))
report = summarize(replay_rows(items, ReplayOptions(render=sys.argv[1] == "full")))
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "scenes": report["scenes"], "rendered": report["scenes_rendered"],
                  "not_rendered": len(report["not_rendered"]), "inconsistencies": len(report["inconsistencies"]),
                  "difficulty": report["difficulty_agreement"], "invisible": len(report["invisible_exceptions"])}))
"""


def run(mode: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent, timeout=1800, stdin=subprocess.DEVNULL)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_markdown_flag(parser, "replay.md")
    args = parser.parse_args()
    context = run_context()
    for mode in ("rows", "full"):
        start = time.perf_counter()
        r = run(mode)
        print(f"{mode:>4}: {r['cpu']:.1f} s CPU, {r['wall']:.1f} s wall in the replay "
              f"({time.perf_counter() - start:.1f} s with start-up); {r['scenes']} scenes, {r['rendered']} drawn, "
              f"{r['not_rendered']} without a face, {r['inconsistencies']} findings; peak RSS {r['peak_rss_mb']:.0f} MB")
        if args.markdown:
            intro = ("`rose-replay` on the 1,112 shipped v0.1 rows in a fresh process each: *rows* re-derives, "
                     "compares and resolves the assets (nothing drawn); *full* draws and PNG-encodes every scene. "
                     "CPU and wall are the replay's own; *with start-up* is the whole child process. *findings*: "
                     "rows whose derived fields disagree with the release or v0.1 defects; *difficulty agrees*: "
                     "v0.1's medium/hard labels our rule gives too; *below visibility*: scenes with an exception "
                     "under our visibility thresholds (drawn scenes only). Reproduce: "
                     "`.venv/bin/python bench/bench_replay.py --markdown`.")
            d = r["difficulty"]
            agree = f"{d['agree']:,} / {d['rows']:,} ({100 * d['rate']:.1f} %)" if d["rows"] else "–"
            write_row(args.markdown, "Replaying v0.1", intro,
                      ["scenes", "drawn", "findings", "difficulty agrees", "below visibility", "CPU s", "wall s",
                       "with start-up s", "peak RSS MB"], mode,
                      [f"{r['scenes']:,}", f"{r['rendered']:,}", f"{r['inconsistencies']:,}", agree,
                       f"{r['invisible']:,}" if r["rendered"] else "–", f"{r['cpu']:.1f}", f"{r['wall']:.1f}",
                       f"{time.perf_counter() - start:.1f}", f"{r['peak_rss_mb']:.0f}"], context)


if __name__ == "__main__":
    main()
