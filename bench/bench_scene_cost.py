"""Per-subset CPU split of the generator's per-scene work, in one process.

Usage: .venv/bin/python bench/bench_scene_cost.py [--profile v0_1] [--step N] [--subset NAME] [--cprofile FILE]

Every ``step``-th scene of each subset is drawn and rendered as a worker does
(:class:`rose_gen.release.pipeline.SceneDrawer`: plan, preset, the visibility check and its
redraws, then tiles, compose, cue, PNG encode, reusing the check's tiles) and its rows are
built (``rows_of``, done by the main process), all in this process; the CPU time
(``process_time``) of each part is summed *exclusively* (a part called inside another is
not counted twice):

- ``plan``: ``rose_gen.scene.plan._plan_scene`` (layout, orientation, regions, rating);
- ``tiles``: ``rose_gen.render.compose.scene_tiles`` (the sources' ``render_tile`` and fitting);
- ``visibility``: ``tile_difference`` / ``scene_visibility`` of the planning check;
- ``cue_colour``: ``choose_cue_color`` (CIELAB of the tiles' colours);
- ``compose``: ``compose_grid``; ``encode``: ``encode_png`` (the release's PNG writer);
- ``rows``: ``build_scene_rows``; ``other``: the rest of the scene's time.

Figures are scaled by ``step`` (an estimate of the whole subset). CPU time, not wall time,
is the figure: the machine is shared. ``--cprofile FILE`` also writes a cProfile of the run.

Issue 15 ("closer to the PNG floor", branch i15c: emoji fit, regions, visibility, cue
colour, sprites, grid), v0_1, ``--step 3`` (figures x3, so one-time costs such as atlas
loads are tripled too), CPU seconds in one process, 2-core VM shared with other jobs
(2026-11-30; EmojiStyle tiles from a second back-to-back pair). Output byte-identical (scripts/check_reorg_identity.sh: diff empty).

    this bench (draw + render in one worker, main 307bdd4), back to back, load 3.4:
                plan  tiles (EmojiStyle)  visibility  cue  compose  rows  other  encode  outside encode
      before    2.44  10.53   (6.57)      3.83        1.06  0.71    0.64  3.13   39.71   22.35
      after     1.43   5.77   (2.71)      3.68        0.75  0.57    0.61  3.22   38.29   16.03
    the earlier pipeline (plan, then render: tiles drawn twice), load 1.5-2.5:
      before    3.94  14.43   (8.21)      4.96        1.64  1.12    1.01  4.54   43.23   31.64
      after     1.96   7.41   (3.22)      4.03        0.85  0.57    0.76  3.15   39.64   18.74

What is left above the floor, per scene: EmojiStyle's probe renders (cairosvg ~3.3 ms,
Noto ~2 ms; every scene draws a new identity, so nothing to reuse) and 1-2 Lanczos resizes
per fitted tile (~0.5 ms each); EmojiContent's cairosvg tiles (~2.5 ms each); the
visibility measure (scipy Gaussian blurs and skimage SSIM, ~5 ms on a 140 px pixel-art
tile pair); ``other`` is mostly ``render_scene``'s array -> Pillow copy.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import sys
import time
from pathlib import Path

import rose_gen.assets.visibility as visibility
import rose_gen.release.pipeline as pipeline
import rose_gen.release.ranked_rows as ranked_rows
import rose_gen.render.compose as compose
from rose_gen.release.config import load_config
from rose_gen.scene import plan as planning
from rose_gen.scene import redraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

PARTS = ("plan", "tiles", "visibility", "cue_colour", "compose", "encode", "rows", "other")


class SplitTimer:
    """Exclusive CPU time per part: a timed call nested in another is counted once, in its own part."""

    def __init__(self) -> None:
        self.totals: collections.Counter[str] = collections.Counter()
        self._children: list[float] = []

    def wrap(self, module: object, name: str, part: str) -> None:
        """Replace ``module.name`` by a timed wrapper (when the module has it)."""
        func = getattr(module, name, None)
        if func is None:
            return

        def timed(*args, **kwargs):
            self._children.append(0.0)
            start = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent = time.process_time() - start
                inner = self._children.pop()
                self.totals[part] += spent - inner
                if self._children:
                    self._children[-1] += spent

        setattr(module, name, timed)


def record_parts(args, key: str, parts: dict, context) -> None:
    """One row of bench/scene_cost.md: a subset's CPU seconds per part (whole profile, extrapolated)."""
    intro = (f"CPU seconds per part of the per-scene work of `profile={args.profile}`, in one process, "
             f"every {args.step}th scene of each subset drawn and the sum multiplied by {args.step}; *encode* "
             "is the PNG writer, everything else is the work outside encoding. Reproduce: "
             "`.venv/bin/python bench/bench_scene_cost.py --markdown`.")
    write_row(args.markdown, "Per-scene work", intro, [*PARTS, "total", "outside encode"], key,
              [f"{parts[p]:.2f}" for p in PARTS] + [f"{parts['total']:.2f}", f"{parts['total'] - parts['encode']:.2f}"],
              context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="v0_1")
    parser.add_argument("--step", type=int, default=3, help="sample every Nth scene of each subset")
    parser.add_argument("--cprofile", default=None, help="write a cProfile of the run to this file")
    parser.add_argument("--subset", action="append", default=None, help="only this subset (repeatable)")
    add_markdown_flag(parser, "scene_cost.md")
    args = parser.parse_args()
    context = run_context()

    timer = SplitTimer()
    timer.wrap(compose, "encode_png", "encode")
    timer.wrap(compose, "scene_tiles", "tiles")
    timer.wrap(compose, "choose_cue_color", "cue_colour")
    timer.wrap(compose, "compose_grid", "compose")
    timer.wrap(visibility, "tile_difference", "visibility")
    timer.wrap(redraw, "tile_difference", "visibility")
    timer.wrap(redraw, "scene_visibility", "visibility")
    timer.wrap(planning, "_plan_scene", "plan")
    timer.wrap(ranked_rows, "build_scene_rows", "rows")

    cfg = load_config([f"profile={args.profile}", "output_dir=/tmp/bench_scene_cost_unused", "progress=false"])
    pipeline.import_plugins(cfg.plugins)
    profiler = cProfile.Profile() if args.cprofile else None
    grand: collections.Counter[str] = collections.Counter()
    print(f"{'subset':<20}" + "".join(f"{p:>11}" for p in PARTS) + f"{'total':>9}")
    drawer = pipeline.SceneDrawer(cfg.plans, cfg.seed, cfg.render)
    for index, plan in enumerate(cfg.plans):
        if args.subset and plan.subset not in args.subset:
            continue
        drawer.subset_draws(index)  # pool, splits and cut: once per subset and process, not per scene
        timer.totals.clear()
        start = time.process_time()
        if profiler:
            profiler.enable()
        for k in range(1, plan.n_scenes + 1, args.step):
            drawn = drawer(pipeline.SceneJob(index, k))
            ranked_rows.rows_of(drawn.scene, drawn.cue_color)
        if profiler:
            profiler.disable()
        total = time.process_time() - start
        parts = {p: timer.totals[p] * args.step for p in PARTS[:-1]}
        parts["other"] = total * args.step - sum(parts.values())
        parts["total"] = total * args.step
        grand.update(parts)
        if args.markdown:
            record_parts(args, plan.subset, parts, context)
        print(f"{plan.subset:<20}" + "".join(f"{parts[p]:>11.2f}" for p in PARTS) + f"{parts['total']:>9.2f}",
              flush=True)
    print(f"{'ALL':<20}" + "".join(f"{grand[p]:>11.2f}" for p in PARTS) + f"{grand['total']:>9.2f}")
    print(f"outside encode: {grand['total'] - grand['encode']:.2f} s CPU")
    if args.markdown:
        record_parts(args, "all subsets", grand, context)
    if profiler:
        profiler.dump_stats(args.cprofile)


if __name__ == "__main__":
    main()
