"""Benchmark rose-gen end to end against a PNG-encoding floor.

Usage: .venv/bin/python bench/bench_gen.py [--profile v0_1] [--workers 2] [--out DIR] [--keep]

1. Generates the profile's release (plan, render, rows, JSONL, Parquet, card, summary)
   with ``workers`` processes: wall time, images/s, peak RSS of the main process and of
   the largest worker.
2. The floor: the same images, decoded beforehand (untimed), PNG-encoded again by Pillow at
   zlib level 1 (issue 27's comparator, whatever ``render.png_encoder`` and
   ``render.png_compress_level`` the release used; before the default level became 2 the
   two were the same) by ``workers``
   processes; the floor is the slowest worker's summed encoding time (images are spread
   over workers by pixel count). ``--no-floor`` skips it (memory runs).
3. Peak RSS: ``ru_maxrss`` of the main process and of the largest worker, and the peak of
   main + workers together, sampled from /proc every 50 ms. ``--scale 4`` multiplies every
   subset's scene counts (4x v0.1) to show whether memory grows with the release.

The goal is wall <= 1.2 x floor (issue 15; 1.5 before); ``cpu_main_s`` and ``cpu_workers_s`` split the CPU. CPU seconds (main process + workers) are reported next
to wall seconds for both, because on a shared machine other jobs stretch wall time. Every subset uses its real source when it is installed
(its module imports and its pool builds); otherwise the Latin test source stands in and
the report says so.

Issue 15, each scene drawn, checked and rendered in one worker (the visibility check's tiles
are the rendered tiles; the main process draws no pixels) and cheaper per-scene work
(bench/bench_scene_cost.py), v0_1, workers=2, idle 2-core VM (load 0.5-1.4), 2026-11-30:

    before (main after issue 10): wall 52.45 s, floor 21.42 s -> 2.45; CPU 93.4 s vs 62.0 s;
                                  peak RSS main 527 MB, largest worker 410 MB, together 1,017 MB
    after:  wall 33.77 s (89.6 images/s), floor 19.82 s -> 1.70; CPU 64.7 s (main 6.7 + workers 58.0)
            vs 56.6 s for the floor's decode + encode; peak RSS main 326 MB, largest worker 384 MB,
            together 920 MB
    4x (--scale 4 --no-floor, 6,048 scenes): wall 128.5 s (3.8x the 1x wall), CPU 246 s (main 26.4);
            peak RSS main 411 MB, largest worker 390 MB, together 969 MB (+5 % over 1x)
    The main process holds ~131 MB (1x) to ~150 MB (4x) while rendering; its peak is the Parquet
    commit (two files written at once; a writer keeps ~100 KB of footer per row group until the
    file closes, so splits past export.parquet_max_rows_per_file rows are written as several files).
    Goal 1.2x not met: of the 64.7 s CPU, ~39 s is PNG encoding (the floor); the rest is the
    emoji SVG tiles, the visibility measure, planning, rows and Parquet.

Issue 15 (streaming export, bounded tile/font caches, SVG tiles without a PNG round trip,
one array -> Pillow copy per scene), before -> after, each pair run back to back on the
2-core VM shared with other jobs (load average 8-12; 2026-11-30), v0_1, workers=2:

    pair 1 (load 8-12): wall / floor 1.76 -> 1.36 (216.6 s / 123.1 s -> 191.8 s / 141.5 s),
                        CPU 82.9 -> 73.5 s vs 66.6-66.7 s for the floor's decode + encode
    pair 2 (load 5-8):  wall / floor 1.28 -> 1.48 (82.9 s / 64.8 s -> 87.2 s / 58.9 s),
                        CPU 63.5 -> 63.6 s vs 57.8-58.4 s for the floor
    -> speed unchanged within the noise of a shared VM; one-process A/B per subset (workers=1,
       back to back): EmojiStyle 8.91 -> 8.79 s CPU, PixelEdit 17.81 -> 17.53 s (-1.3 %, -1.6 %).
       The goal of 1.2 x is not shown here.
    peak RSS, main + workers:   1x 1,566 -> 827 MB    4x 2,485 -> 1,150 MB
    peak RSS, largest worker:   1x   670 -> 307 MB    4x 1,033 ->   325 MB
    peak RSS, main:             1x   391 -> 335 MB    4x   654 ->   505 MB
    (4x: 6,048 scenes, 1,012 MB release; the main's growth is the scene plans, ~13 KB each)

Issue 15, flat main-process memory (a planner thread one subset ahead of dispatch; at most
4 scenes per worker submitted and unread), before -> after, v0_1, workers=2, 2-core VM
shared with other jobs (2026-11-30; the "after" 1x ran beside this branch's own test run,
so its wall and CPU are not comparable; memory is):

    1x before (load 3.4-6.6): wall 194 s, CPU 104 s, floor 119 s -> 1.63;
                              main 635 MB, largest worker 513 MB, main + workers 1,232 MB
    1x after  (load 6.7-7.4): wall 353 s, CPU 144 s, floor 111 s -> 3.17;
                              main 562 MB, largest worker 451 MB, main + workers 1,145 MB
    4x before (load 8.7-9.4): wall 1,116 s, CPU 527 s, floor 520 s -> 2.14;
                              main 1,023 MB, largest worker 862 MB, main + workers 1,602 MB
    4x after  (load 5.6-6.0): --no-floor, wall 760 s, CPU 520 s;
                              main 670 MB, largest worker 469 MB, main + workers 1,600 MB
    main RSS (sampled every 5 s): 4x before 870-882 MB at two samples late in rendering;
    4x after flat within each subset but stepping up as later sources start (glyph ~370 MB,
    emoji ~440 MB, pixel ~590 MB), then 670 MB in the last ~20 s (end of rendering or the Parquet commit). Goal (4x within
    10 % of 1x) not met: 670 vs 562 MB (+19 %; before +61 %). The steps were the main process
    drawing each source's tiles for the visibility check (per-source caches); it draws none now (above).

Root cause: not the scene plans (tracemalloc: ~5 KB a SceneSpec, 7.5 MB for all of 1x),
but rendered results. The old pipeline planned every subset before reading a result while
``Pool.imap`` kept rendering, and imap's result cache is unbounded: every scene rendered
while the main process planned (or was starved of CPU by other jobs) waited in memory
with its PNG bytes, so the main's peak grew with the release and with the load.

Floor: planning now costs a large share of the CPU. cProfile of ``plan_subsets`` at 1x
(shared VM, profiled): 46 s CPU, 81 % of it in ``redraw.drawn_visibility`` (the emoji
tiles drawn by cairosvg and fitted, 47 %; the visibility measure, 20 %), and the workers
draw the same tiles again. In-process rendering (200 scenes): PNG encode 52 % of
``process_scene``, emoji tiles 23 %. Next step: check visibility where the scene is
rendered (in the workers) or hand the checked tiles to the renderer. (Done: both, see the
first block.)

Under that load wall times are 7-8x the idle ones; the ratios and RSS are the figures to
compare, and the idle re-run is the lead's.

Recorded figures (v0_1, workers=2, all five real sources, idle 2-core VM, after starting
the workers before planning (each subset rendered as soon as it is planned, provenance
gathered meanwhile) and writing the two Parquet files in two threads; 2026-11-30, two runs):

    1,512 scenes, 3,024 images, 252 MB release
    wall 27.1-27.4 s (110-112 images/s); PNG floor 18.6-18.7 s -> wall / floor = 1.45-1.46 (goal 1.5: met)
    CPU 51.7-52.3 s (main + workers) vs 52.1-52.3 s for the floor (decode + encode)
    peak RSS: main 382 MB, largest worker 604 MB
    timeline (one run, 27.0 s): planning + provenance done at 1.9 s while the workers start; last scene
    at 24.6 s, then JSONL 0.3 s + Parquet 1.3 s + card, sha256 and rename 0.3 s.

With only the first change: wall 28.3 s, floor 19.6 s -> 1.44. Before both, same idle VM (1.68x):

    wall 33.1 s (91.3 images/s); PNG floor 19.7 s -> wall / floor = 1.68 (goal 1.5: not met)
    CPU 60.9 s (main + workers) vs 56.0 s for the floor (decode + encode)
    peak RSS: main 345 MB, largest worker 614 MB
    single-process profile (PixelEdit + EmojiStyle): PNG encoding is 72 % of the time;
    the rest is SVG tiles, array->PIL copies, planning and the main process's writing.

Earlier, on the same VM shared with other jobs (load average 4-6):

    1,512 scenes, 3,024 images, 252 MB release
    wall 94.8 s (31.9 images/s); PNG floor 70.8 s -> wall / floor = 1.34
    CPU 59.9 s (main + workers) vs 56.8 s for the floor (decode + encode)
    peak RSS: main 338 MB, largest worker 673 MB

Earlier runs of the same profile on the busy machine gave 1.71 and 1.78 (before the
cue was drawn in place and the Parquet image column built from arrays).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rose_gen.release.config import compose_config, load_config  # noqa: E402
from rose_gen.release.pipeline import generate_release  # noqa: E402
from rose_gen.sources import SOURCES, load_sources  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

REAL_SOURCES = {  # subset key -> (module, registry name)
    "glyph": ("rose_gen.sources.glyph", "glyph"),
    "emoji_style": ("rose_gen.sources.emoji_style", "emoji_style"),
    "emoji_content": ("rose_gen.sources.emoji_content", "emoji_content"),
    "pixel_edit": ("rose_gen.sources.pixel_edit", "pixel_edit"),
    "pixel_content": ("rose_gen.sources.pixel_content", "pixel_content"),
}
TEST_SOURCES = "tests.fixtures.latin_source"


def pick_sources() -> tuple[list[str], list[str], list[str]]:
    """Overrides, plug-in modules and the subsets that fell back to the test source."""
    with contextlib.suppress(Exception):  # a broken built-in is reported per subset below
        load_sources()
    overrides, plugins, fallback = [], [], []
    for key, (module, name) in REAL_SOURCES.items():
        try:
            if name not in SOURCES:
                importlib.import_module(module)
            SOURCES.get(name).pool({})
            plugins.append(module)
        except Exception as exc:  # noqa: BLE001 - any failure means: not usable here
            from tests.fixtures.latin_source import SUBSET_KEYS

            overrides.append(f"subset.{key}.source={SUBSET_KEYS[key]}")
            fallback.append(f"{key} ({type(exc).__name__}: {str(exc)[:80]})")
    if fallback:
        plugins.append(TEST_SOURCES)
    return overrides, plugins, fallback


def _encode_share(paths: list[str], level: int) -> float:
    total = 0.0
    for path in paths:
        with Image.open(path) as im:
            im.load()
            rgb = im.convert("RGB")
        t0 = time.perf_counter()
        rgb.save(io.BytesIO(), format="PNG", compress_level=level)  # the comparator: Pillow at level 1
        total += time.perf_counter() - t0
    return total


FLOOR_LEVEL = 1  # issue 27's comparator: Pillow at zlib level 1, whatever level the release was written at


def png_floor(release: Path, workers: int, level: int = FLOOR_LEVEL) -> tuple[float, int]:
    """Slowest worker's time to PNG-encode its share of the release's images with Pillow at ``level``."""
    images = sorted(release.joinpath("images").rglob("*.png"))
    sized = []
    for p in images:
        with Image.open(p) as im:
            sized.append((im.size[0] * im.size[1], str(p)))
    shares: list[list[str]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for pixels, path in sorted(sized, reverse=True):
        i = loads.index(min(loads))
        shares[i].append(path)
        loads[i] += pixels
    if workers == 1:
        return _encode_share(shares[0], level), len(images)
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        times = pool.starmap(_encode_share, [(share, level) for share in shares])
    return max(times), len(images)


def _tree_rss_mb(pid: int) -> tuple[float, float]:
    """(RSS of ``pid``, RSS of ``pid`` and all its descendants) in MB, read from /proc."""
    def rss(p: int) -> float:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def children(p: int) -> list[int]:
        out: list[int] = []
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{p}/task").iterdir():
                with contextlib.suppress(OSError):
                    out += [int(c) for c in (task / "children").read_text().split()]
        return out

    main = rss(pid)
    total, todo = main, children(pid)
    while todo:
        kid = todo.pop()
        total += rss(kid)
        todo += children(kid)
    return main, total


class RssSampler:
    """Peak RSS of this process and of this process plus its workers, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak_main = self.peak_total = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            main, total = _tree_rss_mb(os.getpid())
            self.peak_main, self.peak_total = max(self.peak_main, main), max(self.peak_total, total)
            self._stop.wait(0.05)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def scale_overrides(profile: str, scale: int) -> list[str]:
    """Overrides multiplying every subset's scene and dev-scene counts of ``profile`` by ``scale``."""
    if scale == 1:
        return []
    cfg = compose_config([f"profile={profile}"])
    out = []
    for key, sub in cfg.subset.items():
        out += [f"subset.{key}.scenes={sub.scenes * scale}", f"subset.{key}.dev_scenes={sub.dev_scenes * scale}"]
    return out


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


class CommandResult:
    """What the in-process result gives the report, read back from a finished release."""

    def __init__(self, path: Path) -> None:
        self.path = path
        summary = json.loads((path / "export_summary.json").read_text(encoding="utf-8"))
        per = summary["counts"]["scenes"]  # {subset: {split: n}}
        self.scenes = sum(int(n) for splits in per.values() for n in splits.values())


def run_command(args: argparse.Namespace, out: Path, plugins: list[str], overrides: list[str]) -> CommandResult:
    """Run ``rose-gen`` of this venv as a user would; its release."""
    command = [str(Path(sys.executable).parent / "rose-gen"), f"profile={args.profile}", f"output_dir={out}",
               f"workers={args.workers}", "progress=false", "overwrite=true", f"plugins=[{','.join(plugins)}]",
               *overrides, *scale_overrides(args.profile, args.scale), *args.override]
    if args.shards:
        # The docs' joblib sweep: one job per shard, `workers` jobs at a time, one process each;
        # the launching process merges when every shard is done.
        command[1:1] = ["-m", "hydra/launcher=joblib", f"shard.index=range(0,{args.shards})",
                        f"shard.count={args.shards}", f"hydra.launcher.n_jobs={args.workers}"]
        command[command.index(f"workers={args.workers}")] = "workers=1"
    subprocess.run(command, check=True, cwd=ROOT)
    return CommandResult(out)


GEN_COLUMNS = ["scenes", "wall s", "Pillow level-1 encode s", "wall / encode", "CPU s",
               "peak RSS MB (main + workers)", "release MB"]


def record(args, figures: dict, context) -> None:
    """One row of bench/gen.md for this configuration (the command or in process, scale, overrides)."""
    key = ("the rose-gen command" if args.command else "in process") + f", {args.profile}"
    key += f" ×{args.scale}" if args.scale != 1 else ""
    key += f", {args.shards} shards on joblib, {args.workers} at a time" if args.shards else f", workers={args.workers}"
    key += "".join(f", {o}" for o in args.override) or ", default writer"
    nan = figures["png_floor_s"] != figures["png_floor_s"]
    values = [f"{figures['scenes']:,}", f"{figures['wall_s']:.1f}",
              "not run" if nan else f"{figures['png_floor_s']:.1f}",
              "" if nan else f"**{figures['wall_over_floor']:.2f}×**", f"{figures['cpu_s']:.1f}",
              f"{figures['peak_rss_main_plus_workers_mb']:,.0f}", f"{figures['release_mb']:.0f}"]
    intro = ("`rose-gen` timed as a user runs it (`--command`: the whole command, start-up and export "
             "included) or in process, against the time Pillow needs to PNG-encode the same images at "
             "level 1 over the same number of workers (the issue-27 comparator, whatever writer the "
             "release used). CPU is main process + workers; peak RSS is main + workers sampled every "
             "50 ms. Reproduce a row: `.venv/bin/python bench/bench_gen.py --command --markdown` "
             "(add `--override render.png_encoder=pillow` for Pillow's writer, `--scale 4 --no-floor` "
             "for 4× the scenes).")
    write_row(args.markdown, "Generating a release", intro, GEN_COLUMNS, key, values, context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="v0_1")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="release folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the release")
    parser.add_argument("--scale", type=int, default=1, help="multiply every subset's scene counts (4: 4x v0.1)")
    parser.add_argument("--no-floor", action="store_true", help="skip the PNG-encode floor (memory runs)")
    parser.add_argument("--command", action="store_true",
                        help="time the whole rose-gen command as a user runs it (start-up and export included)")
    parser.add_argument("--override", action="append", default=[],
                        help="extra rose-gen override, e.g. render.png_encoder=pillow (repeatable)")
    parser.add_argument("--shards", type=int, default=0,
                        help="with --command: the joblib sweep of this many shards (one process each, "
                             "`workers` at a time), merged at its end")
    add_markdown_flag(parser, "gen.md")
    args = parser.parse_args()
    if args.shards and not args.command:
        parser.error("--shards needs --command")
    context = run_context()

    overrides, plugins, fallback = pick_sources()
    tmp = Path(tempfile.mkdtemp(prefix="rose-bench-"))
    out = args.out or tmp / "release"
    config = load_config([f"profile={args.profile}", f"output_dir={out}", f"workers={args.workers}",
                          "progress=false", "overwrite=true", f"plugins=[{','.join(plugins)}]", *overrides,
                          *scale_overrides(args.profile, args.scale), *args.override])
    load_before = os.getloadavg()
    cpu0 = _cpu()
    t0 = time.perf_counter()
    with RssSampler() as sampler:
        if args.command:
            result = run_command(args, out, plugins, overrides)
        else:
            result = generate_release(config)
    wall = time.perf_counter() - t0
    cpu1 = _cpu()
    load_after = os.getloadavg()
    rss_main = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    t1 = time.perf_counter()
    if args.no_floor:
        floor, n_images = float("nan"), 2 * result.scenes
    else:
        floor, n_images = png_floor(result.path, args.workers)
    floor_wall = time.perf_counter() - t1
    cpu2 = _cpu()
    gen_cpu = (cpu1[0] - cpu0[0]) + (cpu1[1] - cpu0[1])
    size = sum(p.stat().st_size for p in result.path.rglob("*") if p.is_file())
    figures = {
        "profile": args.profile,
        "measured": "the rose-gen command" if args.command else "generate_release in process",
        "overrides": args.override,
        "scale": args.scale,
        "workers": args.workers,
        "load_avg_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "scenes": result.scenes,
        "images": n_images,
        "wall_s": round(wall, 2),
        "images_per_s": round(n_images / wall, 2),
        "peak_rss_main_mb": round(rss_main, 1),
        "peak_rss_worker_mb": round(rss_child, 1),
        "peak_rss_main_sampled_mb": round(sampler.peak_main, 1),
        "peak_rss_main_plus_workers_mb": round(sampler.peak_total, 1),
        "png_floor_s": round(floor, 2),
        "wall_over_floor": round(wall / floor, 2),
        "cpu_s": round(gen_cpu, 1),
        "cpu_main_s": round(cpu1[0] - cpu0[0], 1),
        "cpu_workers_s": round(cpu1[1] - cpu0[1], 1),
        "png_floor_cpu_s": round(cpu2[1] - cpu1[1] if args.workers > 1 else cpu2[0] - cpu1[0], 1),
        "png_floor_wall_incl_decode_s": round(floor_wall, 1),
        "release_mb": round(size / 2**20, 1),
        "test_source_stands_in_for": fallback,
    }
    print(json.dumps(figures, indent=2))
    if args.markdown:
        record(args, figures, context)
    if not args.keep and args.out is None:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
