"""Where ``rose-gen merge`` spends its time, phase by phase, in process.

Usage::

    .venv/bin/python bench/merge_phases.py SHARDS OUT [--workers N]

Merges the folder of shard folders ``SHARDS`` into ``OUT`` (removed first and after) the way
``rose_gen.release.merge.merge_shards`` does, and prints each phase's wall and the CPU of this
process (its threads included: the Parquet writers), then the CPU of its child processes (the
``--workers`` processes of the rows phase; their interpreter start-up included). Put the
checkout to measure first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("shards", type=Path, help="folder of shard folders")
    parser.add_argument("out", type=Path, help="where the merged release goes (removed first and after)")
    parser.add_argument("--workers", type=int, default=1, help="rose-gen merge --workers (default 1)")
    args = parser.parse_args(argv)
    marks: list[tuple[str, float, float]] = []

    def mark(name: str) -> None:
        marks.append((name, time.perf_counter(), time.process_time()))

    from rose_gen.release import merge
    from rose_gen.release.config import config_from_recorded
    from rose_gen.release.export import ReleaseInfo, ReleaseWriter

    mark("imports")
    shutil.rmtree(args.out, ignore_errors=True)
    shards = merge.load_shards(merge.expand_shard_args([args.shards]))
    mark("load shards (sha256 of the scenes files)")
    summary = shards[0].summary
    recorded = config_from_recorded(summary["config"])
    info = ReleaseInfo(config=summary["config"], versions=summary["versions"], assets=summary["assets"],
                       attributions=summary["attributions"], dataset_name=summary["dataset"])
    mark("config")
    spans = merge.subset_spans(shards, recorded.plans, int(summary["shard"]["release_scenes"]))
    mark("subset spans (line offsets)")
    with ReleaseWriter(args.out, recorded.export, parquet_writers=args.workers) as writer:
        merge.merge_rows([shard.folder for shard in shards], spans, writer, args.workers)
        mark("rows (this process)")
        writer.commit(info)
        mark("commit (Parquet, card, summary)")
    shutil.rmtree(args.out)
    wall, cpu = start_wall, start_cpu
    for name, at_wall, at_cpu in marks:
        print(f"{name:42s} wall {at_wall - wall:7.1f} s  cpu {at_cpu - cpu:7.1f} s")
        wall, cpu = at_wall, at_cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"child processes cpu {children.ru_utime + children.ru_stime:.1f} s; "
          f"total wall {time.perf_counter() - start_wall:.1f} s")
    return 0


if __name__ == "__main__":  # the rows phase's worker processes are spawned: they import this module
    raise SystemExit(main())
