"""Benchmark the robust solvability reference beside cv on fresh releases, per preset.

    .venv/bin/python bench/bench_robust.py [--work /tmp/rose-robust] [--scenes 20] [--dev_scenes 10]
        [--difficulty standard hard extreme] [--solvers robust cv] [--seed 101]

For each difficulty: ``rose-gen profile=v0_1 difficulty=<d>`` with ``--scenes`` test scenes
(plus ``--dev_scenes`` dev scenes) per subset, then for each solver ``rose-run --solver``
on the test split (wall time of the whole command) and ``rose-eval`` on it. PASS per
subset and per template is read from rose-eval's per-item results; the failing items
are written to ``<work>/<difficulty>_<solver>_failures.jsonl`` (scene, image, answer,
gold) so the scenes can be opened at full size. The robust solver's thresholds were tuned
on dev splits only; this scores the test split.

Every scene with a failing robust item is diagnosed (:func:`diagnose`, written to
``<work>/<difficulty>_robust_diagnosis.jsonl``): on each of its images, whether the grid
and the cue rectangle were found, and the *margin*, the smallest exception distance over
the largest majority distance in the robust descriptor. A margin at or below 1 means no
threshold separates the exceptions from the majority's own variation: the scene is a
*suspect* (listed on stdout: subset, scene, image, margin) to be opened at full size; above
1 the separation rule is at fault, not the scene.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

SUBSET_KEYS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")
SHORT = {"ROSE-ChineseGlyph": "Glyph", "ROSE-EmojiStyle": "EStyle", "ROSE-EmojiContent": "EContent",
         "ROSE-PixelEdit": "PEdit", "ROSE-PixelContent": "PContent"}
BIN = Path(sys.executable).parent


def run(*args: str) -> float:
    """Run a console script of this venv; its wall time. Exit 1 of rose-run (error rows) is an outcome."""
    started = time.perf_counter()
    proc = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and args[0] != "rose-run"):
        sys.exit(f"bench_robust: {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return time.perf_counter() - started


def generate(release: Path, difficulty: str, scenes: int, dev: int, seed: int) -> None:
    """A fresh v0_1-profile release at ``difficulty``."""
    counts = [f"subset.{k}.{field}={n}" for k in SUBSET_KEYS for field, n in (("scenes", scenes + dev), ("dev_scenes", dev))]
    run("rose-gen", "profile=v0_1", f"difficulty={difficulty}", f"output_dir={release}", f"seed={seed}", "workers=2",
        "progress=false", "overwrite=true", *counts)


def tallies(release: Path, preds: Path, failures_out: Path) -> tuple[dict, dict, int]:
    """PASS per subset and per (subset, template) with rose_eval's scorer; failures written out."""
    from rose_eval.score import score_item

    rows = [json.loads(x) for x in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    answers = {p["item_id"]: p for p in (json.loads(x) for x in preds.read_text(encoding="utf-8").splitlines() if x.strip())}
    by_subset: dict[str, list[int]] = defaultdict(list)
    by_template: dict[tuple[str, str], list[int]] = defaultdict(list)
    failed = []
    for row in rows:
        passed = int(score_item(row, answers.get(row["item_id"]))["pass"])
        subset, template = SHORT.get(row["rose_subset"], row["rose_subset"]), row["task_template"][:2]
        by_subset[subset].append(passed)
        by_template[(subset, template)].append(passed)
        if not passed:
            pred = answers.get(row["item_id"], {})
            failed.append({"item_id": row["item_id"], "scene_id": row["scene_id"], "subset": subset,
                           "template": row["task_template"], "image": row["image"], "answer": pred.get("raw_text"),
                           "error": pred.get("error"), "gold": row["answer"]})
    failures_out.write_text("".join(json.dumps(f) + "\n" for f in failed), encoding="utf-8")
    return by_subset, by_template, len(rows)


def diagnose(release: Path, failures: list[dict]) -> list[dict]:
    """Per image of every scene with a failing robust item: grid, cue and separation margin."""
    import numpy as np
    from PIL import Image

    from rose_eval.runners.cv_prompt import CVError
    from rose_eval.runners.robust_solver import read_robust

    rows = [json.loads(x) for x in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    scenes = {f["scene_id"] for f in failures}
    images: dict[str, dict] = {}
    for row in rows:
        if row["scene_id"] in scenes:
            images.setdefault(row["image"], row)
    out = []
    for image, row in images.items():
        cue = row["task_template"].startswith("T4")
        try:
            reading = read_robust(np.asarray(Image.open(release / image).convert("RGB")), cue)
        except CVError as exc:  # the solver could not read this image at all: the solver's failure
            out.append({"subset": SHORT.get(row["rose_subset"], row["rose_subset"]), "scene_id": row["scene_id"],
                        "image": image, "cue": cue, "grid_ok": False, "unreadable": str(exc), "suspect": False})
            continue
        grid = (reading.grid.rows, reading.grid.cols, reading.grid.cell)
        record = {"subset": SHORT.get(row["rose_subset"], row["rose_subset"]), "scene_id": row["scene_id"], "image": image,
                  "cue": cue, "grid_ok": grid == (row["rows"], row["cols"], row["cell_size"])}
        if cue:
            p = row["region_params"]
            span = reading.highlight
            record["cue_ok"] = span is not None and (span.rows, span.cols) == ((p["r1"], p["r2"]), (p["c1"], p["c2"]))
        if record["grid_ok"]:
            gold = np.zeros(reading.distance.shape, dtype=bool)
            for r, c in row["target_cells"]:
                gold[r - 1, c - 1] = True
            majority, exceptions = reading.distance[~gold], reading.distance[gold]
            record["margin"] = round(float(exceptions.min() / max(majority.max(), 1e-6)), 3) if gold.any() else None
            record["exact"] = bool((reading.exceptions == gold).all())
            record["second_identity"] = (row.get("difficulty_preset") or {}).get("second_identity")
        record["suspect"] = bool(record["grid_ok"] and record.get("margin") is not None and record["margin"] <= 1.0)
        out.append(record)
    return out


def pct(values: list[int]) -> str:
    return f"{100.0 * sum(values) / len(values):5.1f}" if values else "    -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-robust"))
    parser.add_argument("--scenes", type=int, default=20, help="test scenes per subset")
    parser.add_argument("--dev_scenes", type=int, default=10, help="dev scenes per subset")
    parser.add_argument("--difficulty", nargs="+", default=["standard", "hard", "extreme"])
    parser.add_argument("--solvers", nargs="+", default=["robust", "cv"])
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="reuse an existing release in --work")
    parser.add_argument("--markdown", type=Path, help="also write the tables as Markdown to this file (bench/robust.md collects them)")
    args = parser.parse_args()
    md: list[str] = []
    args.work.mkdir(parents=True, exist_ok=True)
    templates = ("T1", "T2", "T3", "T4", "T5")
    for difficulty in args.difficulty:
        release = args.work / difficulty
        if not (args.reuse and (release / "metadata_test.jsonl").exists()):
            generate(release, difficulty, args.scenes, args.dev_scenes, args.seed)
        print(f"\n== {difficulty} (profile v0_1, {args.scenes} test scenes per subset, seed {args.seed})")
        print(f"  {'solver':<8} {'subset':<9} {'PASS':>6} " + " ".join(f"{t:>6}" for t in templates))
        md += [f"\n**{difficulty}** (profile v0_1, {args.scenes} test scenes per subset, seed {args.seed})\n",
               "| solver | subset | PASS | " + " | ".join(templates) + " |", "|---|---|---:|" + "---:|" * len(templates)]
        for solver in args.solvers:
            preds = args.work / f"{difficulty}_{solver}.jsonl"
            wall = run("rose-run", "--dataset_root", str(release), "--split", "test", "--solver", solver,
                       "--output", str(preds), "--overwrite", "--no_progress", "--concurrency", str(args.concurrency))
            run("rose-eval", "--predictions", str(preds), "--dataset_root", str(release), "--split", "test",
                "--out_dir", str(args.work / f"{difficulty}_{solver}_eval"), "--no_analyses")
            by_subset, by_template, n = tallies(release, preds, args.work / f"{difficulty}_{solver}_failures.jsonl")
            for subset, values in by_subset.items():
                cells = " ".join(f"{pct(by_template.get((subset, t), [])):>6}" for t in templates)
                print(f"  {solver:<8} {subset:<9} {pct(values):>6} {cells}")
                md.append(f"| {solver} | {subset} | {pct(values).strip()} | "
                          + " | ".join(pct(by_template.get((subset, t), [])).strip() for t in templates) + " |")
            total = [v for values in by_subset.values() for v in values]
            print(f"  {solver:<8} {'all':<9} {pct(total):>6}   ({n} items, rose-run wall {wall:.1f} s, "
                  f"{1000.0 * wall / max(n, 1):.0f} ms/item)")
            every = [(t, [v for (_, tt), vs in by_template.items() if tt == t for v in vs]) for t in templates]
            md.append(f"| {solver} | **all** ({n} items, {wall / max(n, 1):.2f} s/item) | **{pct(total).strip()}** | "
                      + " | ".join(pct(vs).strip() for _, vs in every) + " |")
            if solver == "robust":
                failures = [json.loads(x) for x in (args.work / f"{difficulty}_robust_failures.jsonl").read_text(
                    encoding="utf-8").splitlines() if x.strip()]
                records = diagnose(release, failures)
                (args.work / f"{difficulty}_robust_diagnosis.jsonl").write_text(
                    "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
                suspects = [r for r in records if r["suspect"]]
                print(f"  robust: {len({f['scene_id'] for f in failures})} scene(s) with a failing item; "
                      f"suspect images (margin <= 1): {len(suspects)}")
                for r in suspects:
                    print(f"    suspect {r['subset']} {r['scene_id']} {r['image']} margin {r['margin']}")

    if args.markdown:
        args.markdown.write_text("\n".join(md) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
