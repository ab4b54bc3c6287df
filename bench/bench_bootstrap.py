"""Time `run_analyses` (all analyses, 10,000 scene-bootstrap resamples) on a test-sized split.

Also times the scene bootstrap alone and a 5-model `compare` (in memory, no file I/O).

Builds a synthetic 1,112-scene / 5,560-item split with the v0.1 test sizes per subset,
scores synthetic answers with the strict scorer (not timed), then times run_analyses.

    .venv/bin/python bench/bench_bootstrap.py [--n_boot 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from rose_eval.analyses import run_analyses
from rose_eval.analyses.bootstrap import scene_bootstrap
from rose_eval.analyses.compare import EvaluatedRun, compare_runs
from rose_eval.score import score_item
from rose_eval.vocab import SUBSET_ORDER, TEMPLATE_ORDER

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

TEST_SCENES = dict(zip(SUBSET_ORDER, (301, 221, 221, 221, 148), strict=True))
MODES = ("COUNT", "COUNT", "CLICK", "CLICK", "CLICK_COUNT")
GRID = 10


def _label(cell: tuple[int, int]) -> str:
    return f"R{cell[0]},C{cell[1]}"


def _regions(rng: np.random.Generator) -> list[tuple[str, dict, set]]:
    r1, c1 = (int(x) for x in rng.integers(1, GRID - 2, size=2))
    every = {(r, c) for r in range(1, GRID + 1) for c in range(1, GRID + 1)}
    rect = {(r, c) for r in range(r1, r1 + 3) for c in range(c1, c1 + 3)}
    band = {(r, c) for r in range(r1, r1 + 2) for c in range(1, GRID + 1)}
    rect_params = {"r1": r1, "r2": r1 + 2, "c1": c1, "c2": c1 + 2}
    return [
        ("GLOBAL", {}, every),
        ("ROW_RANGE", {"r1": r1, "r2": r1 + 1}, band),
        ("RECTANGLE", rect_params, rect),
        ("VISUAL_REGION", rect_params, rect),
        ("EXCLUSION", {"exclude_type": "RECTANGLE", "exclude_params": rect_params}, every - rect),
    ]


def _gold(mode: str, clicks: list[str]) -> str:
    body = "".join(f"CLICK({c}); " for c in clicks)
    if mode == "COUNT":
        return f"COUNT({len(clicks)})"
    return body + ("DONE" if mode == "CLICK" else f"SUBMIT({len(clicks)})")


def synthetic_split(seed: int = 0) -> tuple[list[dict], list[dict]]:
    """(metadata rows, scored per-item records) for a synthetic test-sized split."""
    rng = np.random.default_rng(seed)
    metadata, items = [], []
    for subset, n_scenes in TEST_SCENES.items():
        for k in range(1, n_scenes + 1):
            cells = rng.choice(GRID * GRID, size=int(rng.integers(1, 6)), replace=False)
            targets = {(int(i) // GRID + 1, int(i) % GRID + 1) for i in cells}
            skill = rng.beta(2, 2)
            for t, (template, mode, (rtype, params, region)) in enumerate(
                zip(TEMPLATE_ORDER, MODES, _regions(rng), strict=True), start=1
            ):
                gt = sorted(targets & region)
                labels = [_label(c) for c in gt]
                row = {
                    "item_id": f"{subset}_ITEM_{5 * (k - 1) + t:06d}",
                    "scene_id": f"{subset}_SCENE_{k:06d}", "rose_subset": subset,
                    "split": "test", "task_template": template, "task_mode": mode,
                    "region_type": rtype, "region_params": params, "region_case": "partial",
                    "rows": GRID, "cols": GRID, "ground_truth_count": len(gt),
                    "ground_truth_clicks": labels,
                    "all_target_cells": sorted(_label(c) for c in targets),
                    "region_target_cells": labels, "ground_truth_formal_answer": _gold(mode, labels),
                }
                answer = _gold(mode, labels if rng.random() < skill * (1.1 - 0.2 * t) else labels[1:])
                if rng.random() < 0.05:
                    answer = f"Looking at the grid, the answer is {answer}."
                metadata.append(row)
                items.append(score_item(row, {"raw_text": answer, "model": "synthetic"}))
    return metadata, items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n_boot", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    add_markdown_flag(parser, "bootstrap.md")
    args = parser.parse_args()
    context = run_context()
    metadata, items = synthetic_split()
    scenes = len({(r["rose_subset"], r["scene_id"]) for r in items})
    print(f"items={len(items)} scenes={scenes} n_boot={args.n_boot}")
    rng = np.random.default_rng(1)
    models = [  # five models: the synthetic one with 0%, 10%, ... of its passes removed
        EvaluatedRun(f"model-{k}", Path(f"model-{k}"), tuple(
            {**item, "pass": 0} if rng.random() < 0.1 * k else item for item in items))
        for k in range(5)
    ]
    for name, run in (
        ("scene_bootstrap", lambda: scene_bootstrap(items, seed=0, n_boot=args.n_boot)),
        ("run_analyses", lambda: run_analyses(items, metadata, seed=0, n_boot=args.n_boot)),
        ("compare_5_models", lambda: compare_runs(models, seed=0, n_boot=args.n_boot)),
    ):
        wall, cpu = [], []
        for _ in range(args.repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            result = run()
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        print(f"{name:16s} best wall {min(wall):.3f} s, best CPU {min(cpu):.3f} s "
              f"(wall runs: {', '.join(f'{t:.3f}' for t in wall)})")
        if args.markdown:
            intro = (f"The analyses alone, in process, on a synthetic test-sized split: the scene bootstrap, "
                     f"every analysis `rose-eval` runs, and `compare` over five models, each with "
                     f"{args.n_boot:,} resamples; best of {args.repeat} runs. Reproduce: "
                     "`.venv/bin/python bench/bench_bootstrap.py --markdown`.")
            write_row(args.markdown, "The analyses", intro,
                      ["items", "scenes", "resamples", "best wall s", "best CPU s"], name,
                      [f"{len(items):,}", f"{scenes:,}", f"{args.n_boot:,}", f"{min(wall):.3f}", f"{min(cpu):.3f}"],
                      context)
    print("best model:", result["best"], "| rank kept:",
          [round(row["rank_stability"], 3) for row in result["leaderboard"]])


if __name__ == "__main__":
    main()
