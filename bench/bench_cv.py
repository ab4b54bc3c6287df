"""Benchmark the cv baseline on a release and on a degraded copy of it.

    .venv/bin/python bench/bench_cv.py RELEASE_DIR [--split test] [--work DIR] [--jpeg 80] [--blur 0.7]

The degraded copy has the same metadata and every image re-encoded as JPEG (quality
``--jpeg``) after a Gaussian blur of radius ``--blur``, decoded and stored back as PNG
under the same name and size. cv runs through ``rose-run`` (the real CLI); items are
scored with ``rose_eval.score.score_item``. Prints PASS per subset and per template,
the failures (item, answer, gold) and the speed.

Recorded on this 2-core machine, concurrency 2 (2026-11-30):
- ``rose-gen profile=mini`` (100 test items): PASS 100/100 clean and 100/100 degraded, ~50 items/s.
- mini profile with 110 scenes per subset, seed 7 (2,500 test items): PASS 2,500/2,500 clean
  (36 items/s) and 2,500/2,500 degraded (27 items/s); every subset and template 100%.
- mini profile, 40 scenes per subset, ``render=mask`` (tinted T4 cue, 800 items): 800/800 both.
- harsher copy of the 2,500-item release (``--jpeg 70 --blur 1.0``): 2,500/2,500 (47 items/s).
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

from PIL import Image, ImageFilter

from rose_eval.cli.run import main as rose_run
from rose_eval.score import score_item

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package


def degrade_release(src: Path, dst: Path, quality: int, blur: float) -> int:
    """Copy ``src`` to ``dst`` with every image blurred + JPEG round-tripped; returns image count."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("images"))
    count = 0
    for image_path in sorted((src / "images").rglob("*.png")):
        target = dst / image_path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        with Image.open(image_path) as image:
            rgb = image.convert("RGB").filter(ImageFilter.GaussianBlur(blur))
        buffer = io.BytesIO()
        rgb.save(buffer, format="JPEG", quality=quality)
        Image.open(io.BytesIO(buffer.getvalue())).convert("RGB").save(target, format="PNG")
        count += 1
    return count


def evaluate(release: Path, split: str, predictions: Path) -> tuple[dict, dict, list]:
    rows = [json.loads(x) for x in (release / f"metadata_{split}.jsonl").read_text().splitlines() if x.strip()]
    preds = {p["item_id"]: p for p in (json.loads(x) for x in predictions.read_text().splitlines())}
    by_subset: dict[str, list[int]] = defaultdict(list)
    by_template: dict[str, list[int]] = defaultdict(list)
    failures = []
    for row in rows:
        passed = int(score_item(row, preds.get(row["item_id"]))["pass"])
        by_subset[row["rose_subset"]].append(passed)
        by_template[row["task_template"]].append(passed)
        if not passed:
            pred = preds.get(row["item_id"], {})
            failures.append((row["item_id"], row["task_template"], pred.get("raw_text"), pred.get("error"),
                             row["answer"], row["image"]))
    return by_subset, by_template, failures


def report(name: str, by_subset: dict, by_template: dict, failures: list, seconds: float, n: int) -> None:
    total = sum(sum(v) for v in by_subset.values())
    print(f"\n== {name}: PASS {total}/{n} = {100.0 * total / n:.1f}%  ({n / seconds:.1f} items/s, {seconds:.1f} s)")
    for key, values in [*by_subset.items(), *by_template.items()]:
        print(f"  {key:<28} {sum(values):>4}/{len(values):<4} {100.0 * sum(values) / len(values):6.1f}%")
    for failure in failures:
        print("  FAIL", *failure)


def run(release: Path, split: str, out: Path, concurrency: int) -> float:
    started = time.monotonic()
    code = rose_run(["--dataset_root", str(release), "--split", split, "--solver", "cv", "--output", str(out),
                     "--overwrite", "--no_progress", "--concurrency", str(concurrency)])
    if code not in (0, 1):
        sys.exit(code)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--split", default="test")
    parser.add_argument("--work", type=Path, default=Path("out/bench_cv"))
    parser.add_argument("--jpeg", type=int, default=80)
    parser.add_argument("--blur", type=float, default=0.7)
    parser.add_argument("--concurrency", type=int, default=2)
    add_markdown_flag(parser, "cv.md")
    args = parser.parse_args()
    context = run_context()
    args.work.mkdir(parents=True, exist_ok=True)
    degraded = args.work / "degraded_release"
    images = degrade_release(args.release, degraded, args.jpeg, args.blur)
    print(f"degraded copy: {images} images (blur {args.blur}, JPEG q{args.jpeg}) -> {degraded}")
    for name, release in (("clean", args.release), ("degraded", degraded)):
        out = args.work / f"cv_{name}_{args.split}.jsonl"
        seconds = run(release, args.split, out, args.concurrency)
        by_subset, by_template, failures = evaluate(release, args.split, out)
        n = sum(len(v) for v in by_subset.values())
        report(name, by_subset, by_template, failures, seconds, n)
        if args.markdown:
            passed = sum(sum(v) for v in by_subset.values())
            intro = ("The cv baseline through `rose-run --solver cv` (the real CLI) on a release and on a "
                     f"degraded copy of it (Gaussian blur {args.blur}, JPEG quality {args.jpeg}, stored back as "
                     f"PNG), {args.split} split, concurrency {args.concurrency}; speed is items per second of the "
                     "whole run. Reproduce: `.venv/bin/python bench/bench_cv.py RELEASE --markdown`.")
            write_row(args.markdown, "The cv baseline", intro, ["items", "PASS", "items/s", "wall s"],
                      f"{name}: {args.release.name}", [f"{n:,}", f"{100.0 * passed / n:.1f} %", f"{n / seconds:.1f}",
                                                       f"{seconds:.1f}"], context)


if __name__ == "__main__":
    main()
