"""Plan the v0_1 profile (no pixels): wall time, case mix and difficulty calibration.

Usage: .venv/bin/python bench/plan_v0_1.py [--seed N] [--real]

Without ``--real`` every subset plans over a stand-in pool of distinct pairs (no
similarity, so the similarity tier is ``unknown``); with ``--real`` the registered
v0.1 sources are used (their assets must be installed). Prints, per subset, the share
of hard T3 rows for each ``hard_from`` threshold next to v0.1's share, so
``V0_1_HARD_FROM`` in rose_gen/scene/plan.py can be re-calibrated when a source changes.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import replace

import numpy as np

from rose_gen.scene.difficulty import difficulty_score
from rose_gen.scene.plan import plan_subset
from rose_gen.scene.v0_1_plans import V0_1_PLANS
from rose_gen.sources import SOURCES, AssetPair, SourceInfo, load_sources

V0_1_HARD_SHARE = {
    "ROSE-ChineseGlyph": 0.17,
    "ROSE-EmojiStyle": 0.23,
    "ROSE-EmojiContent": 0.52,
    "ROSE-PixelEdit": 0.77,
    "ROSE-PixelContent": 0.27,
}
_INFO = {
    "ROSE-ChineseGlyph": ("CH", "CHINESE_GLYPH", 202600000000, "main"),
    "ROSE-EmojiStyle": ("ESTY", "EMOJI_STYLE", 202600000000, "pilot"),
    "ROSE-EmojiContent": ("ECON", "EMOJI_CONTENT", 202600000000, "pilot"),
    "ROSE-PixelEdit": ("PEDIT", "PIXEL_EDIT", 202700000000, "main"),
    "ROSE-PixelContent": ("PCONT", "PIXEL_CONTENT", 202700000000, "main"),
}
T3 = "T3_CLICK_LOCAL_NUMERIC"
class StandInSource:
    """Distinct placeholder pairs; never renders."""

    def __init__(self, subset: str, name: str, layout_family: str) -> None:
        prefix, primitive, base, image_split = _INFO[subset]
        self.info = SourceInfo(name, subset, prefix, primitive, base, layout_family, image_split)

    def pool(self, options):
        return [AssetPair(self.info.name, f"a{i}", f"b{i}", f"a{i}__b{i}") for i in range(500)]

    def orient(self, pair, rng):
        return pair if rng.random() < 0.5 else replace(pair, majority=pair.target, target=pair.majority)

    def render_tile(self, pair, role, cell_size):
        raise NotImplementedError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--real", action="store_true", help="use the registered v0.1 sources")
    args = parser.parse_args()
    if args.real:
        load_sources()
    total_scenes, total_time = 0, 0.0
    for subset, plan in V0_1_PLANS.items():
        source = (
            SOURCES.get(plan.source)
            if args.real
            else StandInSource(subset, plan.source, plan.layout.family)
        )
        pool = source.pool(plan.source_options)
        start = time.perf_counter()
        scenes = plan_subset(plan, args.seed, source, pool)
        elapsed = time.perf_counter() - start
        total_scenes += len(scenes)
        total_time += elapsed
        scores = np.array([difficulty_score(s.difficulty_inputs[T3], plan.difficulty) for s in scenes])
        hard = np.mean([s.difficulty[T3] == "hard" for s in scenes])
        cases = Counter(s.regions[T3].case for s in scenes)
        sweep = "  ".join(f">={t}:{np.mean(scores >= t):.2f}" for t in range(2, 10))
        print(
            f"{subset:20s} scenes={len(scenes):4d} plan={elapsed:6.2f}s "
            f"hard(T3)={hard:.3f} (v0.1 {V0_1_HARD_SHARE[subset]:.2f}, hard_from="
            f"{plan.difficulty.hard_from})\n    sweep {sweep}\n    T3 cases "
            + ", ".join(f"{k} {v / len(scenes):.2f}" for k, v in cases.most_common())
        )
    print(f"total {total_scenes} scenes in {total_time:.2f}s ({total_scenes / total_time:.0f} scenes/s)")


if __name__ == "__main__":
    main()
