"""Benchmark ``rose-gen merge`` as a user runs it: peak RSS and wall of the whole command.

Usage::

    .venv/bin/python bench/bench_merge.py SHARDS [SHARDS ...] --out DIR [--repo PATH]
        [--bin .venv/bin] [--compare REF_DIR ...] [--keep]

Each ``SHARDS`` is a folder of shard folders (``<out>.shards``, made by
``rose-gen shard.index=<i> shard.count=<n> ...``). For each, the whole command
``/usr/bin/time -v <bin>/rose-gen merge SHARDS DIR/<name>`` is run (start-up, imports,
hashing, ranking, rows, Parquet, summary and rename included) and its maximum resident set
size, wall and CPU are printed as one table row. ``--repo`` puts a checkout first on
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
from pathlib import Path

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


def time_merge(rose_bin: Path, shards: Path, out: Path, repo: Path | None) -> dict[str, float]:
    """Run ``rose-gen merge shards out`` under ``/usr/bin/time -v``; its peak RSS (MB), wall and CPU (s)."""
    env = dict(os.environ)
    if repo is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    cmd = ["/usr/bin/time", "-v", str(rose_bin / "rose-gen"), "merge", str(shards), str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bench_merge: {' '.join(cmd[2:])} failed (exit {done.returncode}): "
                 f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
    figures: dict[str, float] = {}
    for name, (pattern, convert) in _FIELDS.items():
        match = re.search(pattern, done.stderr)
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
    parser.add_argument("--keep", action="store_true", help="keep the merged releases")
    args = parser.parse_args(argv)
    repo = args.repo or Path(__file__).resolve().parents[1]
    made = [parse_make(spec) for spec in args.make]
    if not args.shards and not made:
        parser.error("give shard sets or --make KIND:SCALE")
    if args.compare and len(args.compare) != len(args.shards) + len(made):
        parser.error("give one --compare per shard set")
    args.shards += [make_shard_set(args.bin, kind, scale, args.work, repo) for kind, scale in made]
    args.out.mkdir(parents=True, exist_ok=True)
    print("| shard set | scenes | peak RSS (MB) | wall (s) | CPU user+sys (s) | identical |")
    print("|---|---|---|---|---|---|")
    for i, shards in enumerate(args.shards):
        out = args.out / shards.name.removesuffix(".shards")
        if out.exists():
            shutil.rmtree(out)
        fig = time_merge(args.bin, shards, out, repo)
        same = "-"
        if args.compare:
            diff = subprocess.run(["diff", "-rq", str(args.compare[i]), str(out)], capture_output=True, text=True,
                                  check=False)
            same = "yes" if diff.returncode == 0 else f"NO ({len(diff.stdout.splitlines())} files differ)"
        print(f"| {shards.name} | {scenes_of(shards):,} | {fig['rss_mb']:.0f} | {fig['wall_s']:.1f} | "
              f"{fig['user_s'] + fig['sys_s']:.1f} | {same} |", flush=True)
        if not args.keep and not args.compare:
            shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
