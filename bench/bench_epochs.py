"""rose-eval on a repeated run (3 epochs) beside the same run's single epoch, full 5,560-item split.

    .venv/bin/python bench/bench_epochs.py [--epochs 3] [--repeats 3] [--n_boot 10000]
        [--work /tmp/rose-bench-eval] [--json results.json]

The input is bench_eval.py's (the v0_1 test split's rows and the tiny example's predictions,
built once into ``--work``). Epoch 1 is those predictions; epoch e > 1 gives every item the
answer of the item ``e - 1`` places further on among the items of its template and mode (a
grammar-valid answer of the same kind, right only by chance), so the epochs disagree.
Both commands run as child processes, alternating which goes first; wall time, CPU time
(user + system) and peak RSS come from ``os.wait4``. The repeated run's extra cost is the
scoring of the other epochs and the pooled scene bootstrap of ``epochs.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_eval import ROSE_EVAL, measure, prepared_input  # noqa: E402


def repeated_predictions(release: Path, single: Path, epochs: int, out: Path) -> None:
    """``single``'s rows as epoch 1, shifted answers as the other epochs (see the docstring)."""
    meta = [json.loads(line) for line in (release / "metadata_test.jsonl").open(encoding="utf-8")]
    rows = {r["item_id"]: r for r in map(json.loads, single.open(encoding="utf-8"))}
    groups: dict[tuple[str, str], list[str]] = {}
    for m in meta:
        groups.setdefault((m["task_template"], m["task_mode"]), []).append(m["item_id"])
    with out.open("w", encoding="utf-8") as handle:
        for epoch in range(1, epochs + 1):
            for ids in groups.values():
                for i, item in enumerate(ids):
                    source = rows[ids[(i + epoch - 1) % len(ids)]]
                    handle.write(json.dumps({**rows[item], "raw_text": source["raw_text"],
                                             "error": source.get("error"), "epoch": epoch}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n_boot", type=int, default=10_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-bench-eval"))
    parser.add_argument("--json", type=Path, default=None)
    opts = parser.parse_args()
    release = prepared_input(opts.work)
    single = opts.work / "predictions.jsonl"
    repeated = opts.work / f"predictions_{opts.epochs}_epochs.jsonl"
    repeated_predictions(release, single, opts.epochs, repeated)
    common = ["--dataset_root", str(release), "--split", "test", "--n_boot", str(opts.n_boot)]
    commands = {
        "single epoch": [str(ROSE_EVAL), *common, "--predictions", str(single),
                         "--out_dir", str(opts.work / "out_single")],
        f"{opts.epochs} epochs": [str(ROSE_EVAL), *common, "--predictions", str(repeated),
                                  "--out_dir", str(opts.work / "out_epochs")],
    }
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for rep in range(opts.repeats):
        for name in names[rep % 2:] + names[:rep % 2]:
            figures[name].append(measure(commands[name]))
    report = {name: {"wall_s": statistics.median(f[0] for f in runs), "cpu_s": statistics.median(f[1] for f in runs),
                     "peak_rss_mb": max(f[2] for f in runs)} for name, runs in figures.items()}
    epochs = json.loads((opts.work / "out_epochs" / "epochs.json").read_text(encoding="utf-8"))
    report["epochs.json"] = {"mean": epochs["mean"], "agreement": epochs["agreement"]["share"],
                             "per_epoch_avg_pass": [e["table1/Avg. PASS"] for e in epochs["per_epoch"]],
                             "pooled_interval": epochs["intervals"]["table1"]["Avg. PASS"]}
    same = all((opts.work / "out_single" / n).read_bytes() == (opts.work / "out_epochs" / n).read_bytes()
               for n in ("per_item_eval.jsonl", "table1_row.txt", "table2_row.txt", "summary_by_subset.csv"))
    report["epoch 1 files = single-epoch files"] = same
    for name, row in report.items():
        print(f"{name}: {row}")
    if opts.json:
        opts.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
