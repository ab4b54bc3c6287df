"""Time `rose-eval report` on a v0.1-size test split (1,110 scenes, 5,550 items + bridges).

    .venv/bin/python bench/bench_report.py [--scenes 224] [--models 3] [--repeats 2]

Builds a release in a temporary directory with the rose_gen pipeline and the Latin test
sources (real rendering at small cell sizes, so the set-up is quick), answers it with the
oracle and seeded random baselines (`rose-run`), evaluates each run (`rose-eval`, 10,000
resamples), then times the report as a console script, end to end: one model, and all
models (paired comparison with 10,000 resamples; gallery of 12 per model). Prints wall and
CPU seconds (CPU includes the child process; the machine may be shared) and the size.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the Latin test sources live in tests/fixtures

from rose_eval.cli.eval import main as rose_eval  # noqa: E402
from rose_eval.cli.run import main as rose_run  # noqa: E402
from rose_gen.release.config import load_config  # noqa: E402
from rose_gen.release.pipeline import generate_release  # noqa: E402
from tests.fixtures.latin_source import latin_overrides  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

ROSE_EVAL = Path(sys.executable).with_name("rose-eval")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def build(root: Path, scenes: int, models: int) -> tuple[Path, list[Path]]:
    release = root / "release"
    generate_release(load_config([f"output_dir={release}", "progress=false", "workers=2",
                                  *latin_overrides(scenes=scenes, dev=2)]))
    metadata = release / "metadata_test.jsonl"
    rows = _jsonl(metadata)
    for folder in ("global_click", "matched_local_count"):
        rows += _jsonl(release / "analysis" / folder / "metadata_test.jsonl")
    metadata.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    eval_dirs = []
    for k in range(models):
        solver = ["--solver", "oracle"] if k == 0 else ["--solver", "random", "--seed", str(k)]
        preds = root / f"preds_{k}.jsonl"
        assert rose_run(["--dataset_root", str(release), "--split", "test", *solver, "--model",
                         f"model-{k}", "--output", str(preds)]) == 0
        eval_dir = root / f"eval_{k}"
        assert rose_eval(["--dataset_root", str(release), "--predictions", str(preds),
                          "--out_dir", str(eval_dir)]) == 0
        eval_dirs.append(eval_dir)
    return release, eval_dirs


def timed(cmd: list[str], repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), _cpu()
        subprocess.run(cmd, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=224, help="scenes per subset (2 are dev)")
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the set-up here and reuse it on the next run")
    add_markdown_flag(parser, "report.md")
    args = parser.parse_args()
    context = run_context()
    with tempfile.TemporaryDirectory(prefix="bench_report_") as tmp:
        root = args.workdir or Path(tmp)
        start = time.perf_counter()
        if args.workdir and (root / f"eval_{args.models - 1}").is_dir():
            release, eval_dirs = root / "release", [root / f"eval_{k}" for k in range(args.models)]
        else:
            release, eval_dirs = build(root, args.scenes, args.models)
        n_items = len(_jsonl(eval_dirs[0] / "per_item_eval.jsonl"))
        print(f"set-up: {n_items} items, {args.models} runs, {time.perf_counter() - start:.1f} s")
        for label, dirs in (("1 model", eval_dirs[:1]), (f"{args.models} models", eval_dirs)):
            out = root / f"report_{len(dirs)}.html"
            cmd = [str(ROSE_EVAL), "report", *map(str, dirs), "--out", str(out),
                   "--dataset_root", str(release)]
            wall, cpu = timed(cmd, args.repeats)
            print(f"rose-eval report, {label}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                  f"{out.stat().st_size / 1024:.0f} KiB")
            if args.markdown:
                intro = ("`rose-eval report` as a user runs it (the whole command), on scored runs of a "
                         f"generated release ({args.scenes} scenes per subset); with more than one run it adds "
                         f"the paired comparison; median of {args.repeats} runs. Reproduce: "
                         "`.venv/bin/python bench/bench_report.py --markdown`.")
                write_row(args.markdown, "The report", intro, ["items per run", "wall s", "CPU s", "HTML KiB"],
                          label, [f"{n_items:,}", f"{wall:.2f}", f"{cpu:.2f}", f"{out.stat().st_size / 1024:.0f}"],
                          context)


if __name__ == "__main__":
    main()
