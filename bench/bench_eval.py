"""Time rose-eval on a full-size (5,560-item) synthetic test split.

    .venv/bin/python bench/bench_eval.py [--repeats 3] [--n_boot 10000]

Builds v0.1-format metadata for 1,112 synthetic scenes (301/221/221/221/148 per subset,
five tasks each; rose_gen.tiny_example's generator) and a predictions file with
the tiny example's mix of right, wrong and malformed answers in a temporary directory,
then reports wall-clock times for:

- the console script end to end (parity outputs + analyses, default --n_boot 10000),
- the console script with --no_analyses (the public evaluator's outputs only),
- the parity part in process: load + parse + score + aggregate + render, no writing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rose_eval.cli import build_parser, score_records
from rose_eval.io import index_by_item_id, read_jsonl
from rose_eval.report.tables import render_outputs
from rose_gen.tiny_example import dump_jsonl, metadata_rows, predictions

SCENES = {"ROSE-ChineseGlyph": 301, "ROSE-EmojiStyle": 221, "ROSE-EmojiContent": 221,
          "ROSE-PixelEdit": 221, "ROSE-PixelContent": 148}
ROSE_EVAL = Path(sys.executable).with_name("rose-eval")


def _cpu() -> float:
    """CPU seconds of this process plus its finished children (wall time is noisy on a
    shared machine; CPU time is not)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) over ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def parity_in_process(root: Path, pred: Path) -> None:
    from rose_eval.aggregate import build_summary

    args = build_parser().parse_args(["--dataset_root", str(root), "--predictions", str(pred),
                                      "--out_dir", "unused"])
    meta = read_jsonl(root / "metadata_test.jsonl", role="metadata")
    preds = read_jsonl(pred, role="predictions")
    meta_index = index_by_item_id(meta, role="metadata")
    pred_index = index_by_item_id(preds, role="predictions")
    rows = score_records(sorted(meta_index), meta_index, pred_index, model="bench",
                         near_miss_l1=args.near_miss_l1)
    summary = build_summary(rows, [r.row for r in meta], run={
        "model": "bench", "display_name": "bench", "split": "test", "dataset_repo_id": "x",
        "metadata_jsonl": "m", "predictions_jsonl": "p", "allow_partial": False,
        "num_expected": len(meta_index), "num_prediction_rows": len(preds),
        "missing_item_ids": [], "extra_item_ids": []})
    render_outputs(rows, summary, digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n_boot", type=int, default=10000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        rows = metadata_rows("test", SCENES, bridges=False)
        dump_jsonl(root / "metadata_test.jsonl", rows)
        dump_jsonl(root / "predictions.jsonl", predictions(rows))
        print(f"built {len(rows)} metadata rows + predictions in "
              f"{time.perf_counter() - start:.2f} s")
        assert len(rows) == 5560
        base = [str(ROSE_EVAL), "--dataset_root", str(root), "--predictions",
                str(root / "predictions.jsonl"), "--out_dir", str(root / "out")]

        def cli(*extra: str) -> None:
            subprocess.run([*base, *extra], check=True, stdout=subprocess.DEVNULL)

        full = timed(lambda: cli("--n_boot", str(opts.n_boot)), opts.repeats)
        parity_only = timed(lambda: cli("--no_analyses"), opts.repeats)
        in_process = timed(lambda: parity_in_process(root, root / "predictions.jsonl"),
                           opts.repeats)
    for label, (wall, cpu) in (
        (f"rose-eval end to end (analyses, n_boot={opts.n_boot})", full),
        ("rose-eval --no_analyses (public outputs only)", parity_only),
        ("parity core in process (load+score+aggregate+render)", in_process),
    ):
        print(f"{label:56s} wall {wall:5.2f} s   cpu {cpu:5.2f} s   (medians)")


if __name__ == "__main__":
    main()
