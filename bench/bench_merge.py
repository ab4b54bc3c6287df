"""Benchmark ``rose-gen merge`` as a user runs it: peak RSS and wall of the whole command.

Usage::

    .venv/bin/python bench/bench_merge.py SHARDS [SHARDS ...] --out DIR [--workers N ...] [--repo PATH]
        [--bin .venv/bin] [--compare REF_DIR ...] [--keep]

Each ``SHARDS`` is a folder of shard folders (``<out>.shards``, made by
``rose-gen shard.index=<i> shard.count=<n> ...``). For each, and each ``--workers`` count
(default 1), the whole command ``/usr/bin/time -v <bin>/rose-gen merge SHARDS DIR/<name>
--workers N`` is run (start-up, imports, hashing, ranking, rows, Parquet, summary and rename
included) and printed as one table row: the largest resident set of any one of its processes
(``/usr/bin/time``: the merge's own, or a worker's), the peak of the resident sets of all its
processes summed (sampled every 50 ms: an upper bound, a shared library's pages count once per
process), wall, CPU user+sys of all its processes (``/usr/bin/time``) and of the merge process
and each worker process alone (their last sample; helpers under 0.05 s, such as multiprocessing's
resource tracker, left out), and the 1-minute load average before and after
(the machine may be shared: wall moves with it, memory and CPU much less). ``--repo`` puts a checkout first on
``PYTHONPATH`` (to time another commit's code with the same venv, and so that shard sets
made with the Latin test source, ``plugins=[tests.fixtures.latin_source]``, import it).
``--compare REF`` (one per shard set) checks the merged release is byte-identical to
``REF`` (``diff -rq``), e.g. to the merge of the same shards before a change.

The shard sets the figures in ``bench/scale_plan.md`` came from are v0_1 at 1x and 4x and
the Latin test source with 16-22 px cells at 1x, 4x and 100x of v0.1's scene counts
(issue 26), 4 shards each. ``--make KIND:SCALE`` (``tiny:100``, ``v0_1:4``) first makes such
a set in ``--work`` (skipped when it is there) and adds it to the shard sets, e.g.::

    .venv/bin/python bench/bench_merge.py --make tiny:1 tiny:4 tiny:100 v0_1:1 v0_1:4 --out /tmp/merged
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_FIELDS = {
    "rss_mb": (r"Maximum resident set size \(kbytes\): (\d+)", lambda v: int(v) / 1024),
    "user_s": (r"User time \(seconds\): ([\d.]+)", float),
    "sys_s": (r"System time \(seconds\): ([\d.]+)", float),
    "wall": (r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", str),
}


def wall_seconds(text: str) -> float:
    """Seconds of a ``/usr/bin/time`` wall field (``m:ss.cc`` or ``h:mm:ss``)."""
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def _descendants(root: int) -> list[tuple[int, int]]:
    """``root``'s child processes, theirs, and so on (from /proc), each with its depth (1: a child)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [(root, 0)]
    while todo:
        parent, depth = todo.pop()
        for child in children.get(parent, []):
            out.append((child, depth + 1))
            todo.append((child, depth + 1))
    return out


def _rss_and_cpu(pid: int) -> tuple[float, float]:
    """(resident set in MB, CPU user+sys in s so far) of a process; (0, 0) once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20, (int(fields[11]) + int(fields[12])) / tick


def time_merge(rose_bin: Path, shards: Path, out: Path, repo: Path | None, workers: int = 1) -> dict[str, Any]:
    """Run ``rose-gen merge shards out --workers N`` under ``/usr/bin/time -v``: peak RSS of one process and
    of all summed (MB), wall and CPU (s; of all, of the merge process, of each worker), load before and after."""
    env = dict(os.environ)
    if repo is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    cmd = ["/usr/bin/time", "-v", str(rose_bin / "rose-gen"), "merge", str(shards), str(out), "--workers", str(workers)]
    load_before = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak, cpu, stop = [0.0], {}, threading.Event()  # cpu: pid -> (depth, last CPU seen)

    def sample() -> None:
        while not stop.wait(0.05):
            total = 0.0
            for pid, depth in _descendants(proc.pid):
                rss, seconds = _rss_and_cpu(pid)
                total += rss
                if seconds:
                    cpu[pid] = (depth, seconds)
            peak[0] = max(peak[0], total)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"bench_merge: {' '.join(cmd[2:])} failed (exit {proc.returncode}): "
                 f"{stderr.strip().splitlines()[-1] if stderr.strip() else ''}")
    figures: dict[str, Any] = {"sum_rss_mb": peak[0], "load_before": load_before, "load_after": os.getloadavg()[0],
                               "main_cpu_s": sum(s for d, s in cpu.values() if d == 1),
                               "worker_cpu_s": sorted((s for d, s in cpu.values() if d > 1 and s >= 0.05), reverse=True)}
    for name, (pattern, convert) in _FIELDS.items():
        match = re.search(pattern, stderr)
        assert match, f"/usr/bin/time gave no {name}"
        figures[name] = convert(match.group(1))
    figures["wall_s"] = wall_seconds(str(figures.pop("wall")))
    return figures


def parse_make(spec: str) -> tuple[str, int]:
    """``KIND:SCALE`` of ``--make`` as (kind, scale); exits with one line when it is not one."""
    kind, _, scale = spec.partition(":")
    if kind not in ("tiny", "v0_1") or not scale.isdigit() or int(scale) < 1:
        sys.exit(f"bench_merge: --make {spec!r}: give KIND:SCALE with KIND tiny or v0_1 and SCALE >= 1, e.g. tiny:4")
    return kind, int(scale)


def make_shard_set(rose_bin: Path, kind: str, scale: int, work: Path, repo: Path, shards: int = 4) -> Path:
    """Make the shard set of ``kind`` (v0_1 or tiny) at ``scale`` times v0.1's scene counts unless it exists."""
    sys.path.insert(0, str(repo))
    from rose_gen.scene.v0_1_plans import V0_1_PLANS
    from tests.fixtures.latin_source import SUBSET_KEYS, latin_overrides

    output = work / f"{kind}{scale}x"
    folder = Path(f"{output}.shards")
    if folder.is_dir() and sum(1 for p in folder.glob("shard-*-of-*") if (p / "shard_summary.json").is_file()) == shards:
        return folder
    overrides = ["profile=v0_1", "progress=false", "workers=2", f"output_dir={output}"]
    if kind == "tiny":
        # the fixture's overrides first; the per-subset counts below replace its scene counts
        overrides += latin_overrides()
    for plan in V0_1_PLANS.values():
        assert plan.source in SUBSET_KEYS, plan.source
        overrides += [f"subset.{plan.source}.scenes={plan.n_scenes * scale}",
                      f"subset.{plan.source}.dev_scenes={plan.n_dev * scale}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(repo), os.environ.get("PYTHONPATH", "")) if p)}
    for index in range(shards):
        subprocess.run([str(rose_bin / "rose-gen"), *overrides, f"shard.index={index}", f"shard.count={shards}"],
                       check=True, cwd=repo, env=env, stdin=subprocess.DEVNULL)
    return folder


def scenes_of(shards: Path) -> int:
    """Scenes in a shard set (from the first shard's summary)."""
    import json

    first = next(p for p in sorted(shards.iterdir()) if (p / "shard_summary.json").is_file())
    return int(json.loads((first / "shard_summary.json").read_text())["shard"]["release_scenes"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("shards", nargs="*", type=Path, help="folders of shard folders")
    parser.add_argument("--make", nargs="+", default=[], metavar="KIND:SCALE",
                        help="make these shard sets in --work first (tiny:100, v0_1:4) and merge them too")
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-merge"), help="where --make puts shard sets")
    parser.add_argument("--out", type=Path, required=True, help="where the merged releases go")
    parser.add_argument("--bin", type=Path, default=Path(sys.executable).parent, help="folder holding rose-gen")
    parser.add_argument("--repo", type=Path, default=None, help="checkout put first on PYTHONPATH")
    parser.add_argument("--compare", type=Path, action="append", default=[],
                        help="reference release per shard set: the merge must be byte-identical to it")
    parser.add_argument("--workers", nargs="+", type=int, default=[1], metavar="N",
                        help="merge each shard set with each of these rose-gen merge --workers counts (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the merged releases")
    args = parser.parse_args(argv)
    repo = args.repo or Path(__file__).resolve().parents[1]
    made = [parse_make(spec) for spec in args.make]
    if not args.shards and not made:
        parser.error("give shard sets or --make KIND:SCALE")
    if args.compare and len(args.compare) != len(args.shards) + len(made):
        parser.error("give one --compare per shard set")
    if min(args.workers) < 1:
        parser.error("--workers counts must be at least 1")
    args.shards += [make_shard_set(args.bin, kind, scale, args.work, repo) for kind, scale in made]
    args.out.mkdir(parents=True, exist_ok=True)
    print("| shard set | scenes | --workers | peak RSS, one process (MB) | peak RSS, all processes summed (MB) "
          "| wall (s) | CPU user+sys (s) | of it: merge process / each worker (s) | load before → after | identical |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, shards in enumerate(args.shards):
        for workers in args.workers:
            out = args.out / f"{shards.name.removesuffix('.shards')}-w{workers}"
            if out.exists():
                shutil.rmtree(out)
            fig = time_merge(args.bin, shards, out, repo, workers)
            same = "-"
            if args.compare:
                diff = subprocess.run(["diff", "-rq", str(args.compare[i]), str(out)], capture_output=True,
                                      text=True, check=False)
                same = "yes" if diff.returncode == 0 else f"NO ({len(diff.stdout.splitlines())} files differ)"
            split = " / ".join(f"{s:.1f}" for s in [fig["main_cpu_s"], *fig["worker_cpu_s"]])
            print(f"| {shards.name} | {scenes_of(shards):,} | {workers} | {fig['rss_mb']:.0f} | {fig['sum_rss_mb']:.0f} | "
                  f"{fig['wall_s']:.1f} | {fig['user_s'] + fig['sys_s']:.1f} | {split} | "
                  f"{fig['load_before']:.1f} → {fig['load_after']:.1f} | {same} |", flush=True)
            if not args.keep and not args.compare:
                shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
