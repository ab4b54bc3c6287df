"""rose-eval against the public v0.1 evaluator, side by side, on a full 5,560-item test split.

    .venv/bin/python bench/bench_eval.py /path/to/evaluate_rose.py [--repeats 7] [--n_boot 10000]
        [--work /tmp/rose-bench-eval] [--json results.json]

The public evaluator (``demo/evaluate_rose.py`` of xbdxwyh/ROSE-v0.1) is not part of this
repository: pass its path. The input is built once into ``--work`` (reused while the
generator's code and config do not change): the v0_1 profile's test split planned by
``rose_gen`` with the real visual sources (5,560 rows with every v0.1 field; no images are
rendered) and a predictions file with the tiny example's mix of right, wrong and malformed
answers (``rose_gen.release.tiny_example.predictions``: off-by-one, whole-grid, sloppy spacing,
prose, missing DONE/SUBMIT, duplicates, off-grid clicks, empty answers with an API error).

Each repetition runs the commands as child processes, rotating which goes first, and
reads wall time, CPU time (user + system) and peak RSS of each child from ``os.wait4``. (The
input is built in a child process too: a child's peak RSS counts the memory of the process
it was forked from, so the measuring process stays small.)
rose-eval runs the whole command: the eight files, every analysis and the 10,000-resample
scene bootstrap (``--no_analyses``, the public evaluator's work alone, is shown beside it). Medians are reported with their ratio (rose-eval / public). The first
run's eight files are compared: all but evaluation_summary.json must be byte-identical,
and the summary identical once rose-eval's ``analyses`` key and the two input paths are
set aside. On a shared machine the medians still move; CPU time moves least.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rose_eval.report.tables import PARITY_FILES, SUMMARY

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context, write_row  # noqa: E402 - the bench folder is not a package

ROSE_EVAL = Path(sys.executable).with_name("rose-eval")
SPLIT_SIZE = 5560


def build_input(work: Path) -> Path:
    """Write release/metadata_test.jsonl and predictions.jsonl into ``work`` (cached)."""
    from rose_gen.release import tiny_example
    from rose_gen.release.pipeline import scene_rows
    from rose_gen.render.compose import CueSettings
    from rose_gen.scene import plan
    from rose_gen.scene.plan import plan_subset
    from rose_gen.scene.v0_1_plans import V0_1_PLANS
    from rose_gen.sources import SOURCES, load_sources
    from rose_gen.tasks import prompts, templates

    stamp_source = "".join(Path(m.__file__).read_text()
                           for m in (plan, prompts, templates, tiny_example))
    stamp = hashlib.sha256(stamp_source.encode()).hexdigest()[:16]
    release = work / "release"
    if (work / "stamp").exists() and (work / "stamp").read_text() == stamp:
        return release
    shutil.rmtree(work, ignore_errors=True)
    release.mkdir(parents=True)
    start = time.perf_counter()
    load_sources()
    rows = [row for subset_plan in V0_1_PLANS.values()
            for scene in plan_subset(subset_plan, 0, SOURCES.get(subset_plan.source))
            for row in scene_rows(scene, CueSettings()).main if row["split"] == "test"]
    assert len(rows) == SPLIT_SIZE, len(rows)
    tiny_example.dump_jsonl(release / "metadata_test.jsonl", rows)
    tiny_example.dump_jsonl(work / "predictions.jsonl", tiny_example.predictions(rows))
    (work / "stamp").write_text(stamp)
    print(f"built {len(rows)} v0_1 test rows + predictions in {time.perf_counter() - start:.1f} s "
          f"({(release / 'metadata_test.jsonl').stat().st_size / 1e6:.1f} MB metadata)")
    return release


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median wall s, median CPU s) of ``fn()`` run ``repeats`` times in this process."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), _cpu_seconds()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu_seconds() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def measure(command: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process run to completion."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if status != 0:
        raise SystemExit(f"{command[0]} failed (status {status}): {stderr[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def same_outputs(public: Path, ours: Path) -> list[str]:
    """The parity files that differ between the two output folders."""
    differing = []
    for name in PARITY_FILES:
        a, b = (public / name).read_bytes(), (ours / name).read_bytes()
        if name == SUMMARY:
            left, right = json.loads(a), json.loads(b)
            right.pop("analyses", None)
            for key in ("metadata_jsonl", "predictions_jsonl"):
                left.pop(key), right.pop(key)
            if left != right:
                differing.append(name)
        elif a != b:
            differing.append(name)
    return differing


def prepared_input(work: Path) -> Path:
    """build_input run in a child process (keeps this process's memory out of the figures)."""
    subprocess.run([sys.executable, __file__, "--build_only", "--work", str(work), "unused"],
                   check=True)
    return work / "release"


EVAL_COLUMNS = ["items", "runs", "wall s", "CPU s", "peak RSS MB", "vs public (wall / CPU / RSS)",
                "outputs identical"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("public", type=Path, help="path of the public evaluate_rose.py")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n_boot", type=int, default=10_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-bench-eval"))
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--build_only", action="store_true", help=argparse.SUPPRESS)
    add_markdown_flag(parser, "eval.md")
    opts = parser.parse_args()
    context = run_context()
    if opts.build_only:
        build_input(opts.work)
        return
    release = prepared_input(opts.work)
    predictions = opts.work / "predictions.jsonl"
    # A generated split is not the public dataset, so rose-eval would not claim its repo id;
    # both get the same one to compare like with like.
    common = ["--dataset_root", str(release), "--predictions", str(predictions), "--repo_id", "rose-bench/v0_1"]
    commands = {
        "public": [sys.executable, str(opts.public), *common, "--out_dir", str(opts.work / "out_public")],
        "rose-eval": [str(ROSE_EVAL), *common, "--out_dir", str(opts.work / "out_rose_eval"),
                      "--n_boot", str(opts.n_boot)],
        "--no_analyses": [str(ROSE_EVAL), *common, "--out_dir", str(opts.work / "out_parity"),
                          "--no_analyses"],
    }
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for repeat in range(opts.repeats):
        order = list(commands)[repeat % 3:] + list(commands)[:repeat % 3]  # rotate who goes first
        for name in order:
            runs[name].append(measure(commands[name]))
        if repeat == 0:
            differing = same_outputs(opts.work / "out_public", opts.work / "out_rose_eval")
            identical = "yes" if not differing else "NO: " + ", ".join(map(str, differing))
            print("outputs:", "identical" if not differing else f"DIFFER: {differing}")
    medians = {name: tuple(statistics.median(run[k] for run in values) for k in range(3))
               for name, values in runs.items()}
    print(f"\n{SPLIT_SIZE} items, {opts.repeats} alternating runs each, medians "
          f"(rose-eval: 8 files + analyses, n_boot={opts.n_boot})")
    print(f"{'':14s} {'wall s':>8s} {'CPU s':>8s} {'peak RSS MB':>12s}")
    for name, (wall, cpu, rss) in medians.items():
        print(f"{name:14s} {wall:8.2f} {cpu:8.2f} {rss:12.0f}")
    ratio = [ours / public for ours, public in zip(medians["rose-eval"], medians["public"],
                                                    strict=True)]
    print(f"{'ratio':14s} {ratio[0]:8.2f} {ratio[1]:8.2f} {ratio[2]:12.2f}   (rose-eval / public)")
    if opts.markdown:
        intro = (f"`rose-eval` (the eight files, every analysis, {opts.n_boot:,} bootstrap resamples; "
                 "`--no_analyses`: the public evaluator's work alone) against the public v0.1 evaluator "
                 f"(`demo/evaluate_rose.py` of xbdxwyh/ROSE-v0.1) on the {SPLIT_SIZE:,}-item v0_1 test "
                 "split, each command a child process, alternating who goes first; medians of wall, "
                 "CPU (user + system) and peak RSS; *vs public* is the ratio of each. Reproduce: "
                 "`.venv/bin/python bench/bench_eval.py PUBLIC_EVALUATOR --markdown`.")
        for name, (wall, cpu, rss) in medians.items():
            versus = "1" if name == "public" else " / ".join(
                f"{ours / theirs:.2f}×" for ours, theirs in zip((wall, cpu, rss), medians["public"], strict=True))
            write_row(opts.markdown, "Scoring: rose-eval against the public evaluator", intro, EVAL_COLUMNS, name,
                      [f"{SPLIT_SIZE:,}", str(opts.repeats), f"{wall:.2f}", f"{cpu:.2f}", f"{rss:.0f}", versus,
                       identical if name == "rose-eval" else ""], context)
    if opts.json:
        opts.json.write_text(json.dumps({"items": SPLIT_SIZE, "repeats": opts.repeats,
                                         "n_boot": opts.n_boot, "runs": runs,
                                         "medians": medians, "ratio": ratio}, indent=2) + "\n")


if __name__ == "__main__":
    main()
