"""Measure every difficulty preset: baseline PASS rates per subset and the release audit.

For each preset: ``rose-gen profile=mini difficulty=<preset>`` (scenes per subset set by
``--scenes``), ``rose-run --solver cv`` and ``--solver random`` on the test split,
``rose-eval`` on both, ``rose-audit`` on the release. Writes ``bench/presets.md`` (or
``--out``) with one table of PASS rates and one of audit figures, and prints both.

    .venv/bin/python bench/bench_presets.py [--work /tmp/rose-presets] [--scenes 6]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

PRESETS = ("easy", "standard", "hard", "extreme")
# Ablations: hard with one knob group switched off, to see which knob moves the baselines.
ABLATIONS: dict[str, tuple[str, ...]] = {
    "hard-no-jitter": ("difficulty=hard", "difficulty.preset.jitter.max_offset=0", "difficulty.preset.jitter.min_scale=1"),
    "hard-no-degrade": ("difficulty=hard", "difficulty.preset.degrade.downscale=null",
                        "difficulty.preset.degrade.jpeg_quality=null"),
    "hard-jitter-only": ("difficulty=hard", "difficulty.preset.similarity_band=[0,1]",
                         "difficulty.preset.extra_exceptions=0", "difficulty.preset.second_identity_share=0",
                         "difficulty.preset.cell_scale=1", "difficulty.preset.degrade.downscale=null",
                         "difficulty.preset.degrade.jpeg_quality=null"),
}
SOLVERS = ("cv", "random")
SHORT = {"ROSE-ChineseGlyph": "Glyph", "ROSE-EmojiStyle": "EStyle", "ROSE-EmojiContent": "EContent",
         "ROSE-PixelEdit": "PEdit", "ROSE-PixelContent": "PContent"}
BIN = Path(sys.executable).parent


def run(*args: str) -> None:
    """Run a console script of this venv; stop with its stderr when it fails."""
    proc = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True)
    # exit 1 is an outcome, not a failure: rose-run wrote error rows for items a solver could not
    # answer (they score as failed), rose-audit found flagged exceptions in standard scenes.
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and args[0] not in ("rose-audit", "rose-run")):
        sys.exit(f"bench_presets: {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")


def pass_rates(eval_dir: Path) -> dict[str, float]:
    """PASS rate per subset from rose-eval's summary_by_subset.csv."""
    with open(eval_dir / "summary_by_subset.csv", encoding="utf-8-sig") as fh:
        return {row["rose_subset"]: float(row["pass_rate"]) for row in csv.DictReader(fh)}


def measure(preset: str, work: Path, scenes: int, seed: int, overrides: tuple[str, ...] = ()) -> dict:
    """Generate, answer, evaluate and audit one preset's release (``overrides`` replace ``difficulty=``)."""
    rel = work / preset
    per_subset = [f"subset.{k}.scenes={scenes}" for k in
                  ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")]
    started = time.perf_counter()
    run("rose-gen", "profile=mini", *(overrides or (f"difficulty={preset}",)), f"output_dir={rel}", f"seed={seed}", "workers=2",
        "progress=false", "overwrite=true", *per_subset)
    gen_s = time.perf_counter() - started
    out = {"preset": preset, "generate_s": round(gen_s, 1), "pass": {}}
    for solver in SOLVERS:
        preds = work / f"{preset}_{solver}.jsonl"
        run("rose-run", "--dataset_root", str(rel), "--split", "test", "--solver", solver, "--output", str(preds),
            "--overwrite", "--no_progress")
        run("rose-eval", "--predictions", str(preds), "--dataset_root", str(rel), "--split", "test",
            "--out_dir", str(work / f"{preset}_{solver}_eval"), "--no_analyses")
        out["pass"][solver] = pass_rates(work / f"{preset}_{solver}_eval")
        errors = [json.loads(line) for line in preds.read_text(encoding="utf-8").splitlines() if line.strip()]
        out.setdefault("errors", {})[solver] = sum(1 for e in errors if e.get("error"))
    run("rose-audit", str(rel), "--out", str(work / f"{preset}_audit.json"))
    out["audit"] = json.loads((work / f"{preset}_audit.json").read_text(encoding="utf-8"))
    return out


def tables(results: list[dict], scenes: int, seed: int) -> str:
    """The markdown report."""
    subsets = list(SHORT)
    lines = [f"# Difficulty presets, measured (profile mini, {scenes} scenes per subset, test split, seed {seed})",
             "", "Made by `bench/bench_presets.py`. PASS = share of test items answered exactly "
             "(rose-eval `pass_rate`), per subset, for the two built-in baselines.", "",
             "Ablations (`hard-*`) are hard with one knob group off: " + "; ".join(
                 f"`{k}`: {' '.join(v[1:])}" for k, v in ABLATIONS.items()) + ".", "", "## Baselines", "",
             "| preset | solver | " + " | ".join(SHORT[s] for s in subsets) + " |",
             "|---|---|" + "---:|" * len(subsets)]
    for r in results:
        for solver in SOLVERS:
            rates = r["pass"][solver]
            cells = [f"{100 * rates[s]:.0f}%" if s in rates else "-" for s in subsets]
            lines.append(f"| {r['preset']} | {solver} | " + " | ".join(cells) + " |")
    lines += ["", "## Audit", "", "Audit (`rose-audit`): per subset *flagged/exceptions* (exception cells at or below the "
              "visibility threshold against the median majority cell or the nearest sampled majority cell), "
              "then the smallest changed fraction against the nearest majority cell, then the p90 changed "
              "fraction of majority cells against their median (the jitter/degradation noise floor), then "
              "scenes with two exception identities.", "",
              "| preset | " + " | ".join(SHORT[s] for s in subsets) + " |", "|---|" + "---|" * len(subsets)]
    for r in results:
        cells = []
        for s in subsets:
            a = r["audit"]["subsets"].get(s)
            if a is None:
                cells.append("-")
                continue
            near = (a["similarity"]["nearest_majority_changed_fraction"] or {}).get("min", float("nan"))
            spread = (a["similarity"]["majority_spread_changed_fraction"] or {}).get("p90", float("nan"))
            cells.append(f"{a['flagged']}/{a['exceptions']}; min {near:.3f}; noise {spread:.3f}; "
                         f"2nd {a['second_identity_scenes']}")
        lines.append(f"| {r['preset']} | " + " | ".join(cells) + " |")
    lines += ["", "## Errors and time", "", "Items a solver could not answer (error rows, scored as failed): " + ", ".join(
        f"{r['preset']} " + "/".join(f"{solver} {r['errors'][solver]}" for solver in SOLVERS) for r in results)]
    lines += ["", "Generation time (s, 2 workers): " + ", ".join(f"{r['preset']} {r['generate_s']}" for r in results),
              ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/rose-presets", help="scratch folder for releases and runs")
    parser.add_argument("--scenes", type=int, default=6, help="scenes per subset (mini: 6, 2 of them dev)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).with_name("presets.md")))
    parser.add_argument("--no_ablations", action="store_true", help="only the four presets")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = [measure(p, work, args.scenes, args.seed) for p in PRESETS]
    if not args.no_ablations:
        results += [measure(name, work, args.scenes, args.seed, o) for name, o in ABLATIONS.items()]
    report = tables(results, args.scenes, args.seed)
    Path(args.out).write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
