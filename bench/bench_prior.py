"""The chance floor, measured: the prior baseline at v0_1 and at profile=balanced.

    .venv/bin/python bench/bench_prior.py [--work /tmp/rose-prior] [--scenes 30] [--dev_scenes 10]
        [--seed 0] [--out bench/prior.md]

For each profile: ``rose-gen profile=<p>`` with ``--scenes`` test and ``--dev_scenes`` dev
scenes per subset, ``rose-run --solver prior`` on the test split (answer priors fitted on
the dev split only) and ``rose-eval`` on it. The tables are read from rose-eval's own
``analyses``: the run's PASS per template, its counting-vs-action gap, and the
``chance_floor`` entry's uniform and random chance. Writes ``bench/prior.md``, which the
README and docs/validity.md quote in figure blocks (``tests/test_docs.py`` checks them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SUBSET_KEYS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")
TEMPLATES = ("G-Cnt", "L-Cnt", "L-Clk", "V-Clk", "Excl. C+S")
PROFILES = ("v0_1", "balanced")
BIN = Path(sys.executable).parent


def run(*args: str) -> None:
    """Run one of this venv's console scripts; stop the bench with its stderr when it fails."""
    proc = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_prior: {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")


def measure(work: Path, profile: str, scenes: int, dev: int, seed: int) -> dict:
    """rose-eval's summary of the prior baseline on a fresh release of ``profile``."""
    release, preds, out = work / profile, work / f"{profile}_prior.jsonl", work / f"eval_{profile}"
    counts = [f"subset.{k}.{f}={n}" for k in SUBSET_KEYS for f, n in (("scenes", scenes + dev), ("dev_scenes", dev))]
    run("rose-gen", f"profile={profile}", f"output_dir={release}", f"seed={seed}", "workers=2", "progress=false",
        "overwrite=true", *counts)
    run("rose-run", "--dataset_root", str(release), "--split", "test", "--solver", "prior", "--output", str(preds))
    run("rose-eval", "--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
        "--out_dir", str(out))
    return json.loads((out / "evaluation_summary.json").read_text(encoding="utf-8"))


def pct(value: float | None) -> str:
    """A fraction (rose-eval's analyses hold fractions) as a percentage with one decimal."""
    return "" if value is None else f"{100 * value:.1f}"


def tables(summaries: dict[str, dict], scenes: int, dev: int, seed: int) -> str:
    """bench/prior.md: the per-template table, the distance to uniform, the per-subset table."""
    lines = [
        "# The chance floor, measured",
        "",
        f"Made by `bench/bench_prior.py --scenes {scenes} --dev_scenes {dev} --seed {seed}`: fresh releases with "
        f"{scenes} test and {dev} dev scenes per subset ({5 * scenes} test items per template), "
        "`rose-run --solver prior` on the test split (priors fitted on dev only), scored by `rose-eval`; "
        "uniform and random from its `chance_floor` analysis. PASS %.",
        "",
        "## Per template",
        "",
        "| release | " + " | ".join(TEMPLATES) + " | Avg. | Counting | Action | Δ |",
        "|---|" + "---|" * (len(TEMPLATES) + 4),
    ]
    for profile, summary in summaries.items():
        floor = summary["analyses"]["chance_floor"]
        gap = floor["floor_gap"]
        row = [pct(floor["floor"]["by_template"].get(t)) for t in TEMPLATES]
        lines.append(f"| {profile}: prior (floor) | " + " | ".join(row)
                     + f" | {pct(floor['floor']['by_template']['Avg. PASS'])} | {pct(gap['Counting Avg.'])}"
                     f" | {pct(gap['Action Avg.'])} | {100 * float(gap['Delta']):+.1f} |")
        uni = floor["uniform"]["by_template"]
        lines.append(f"| {profile}: uniform | " + " | ".join(pct(uni.get(t)) for t in TEMPLATES)
                     + f" | {pct(uni['Avg. PASS'])} | | | |")
    rnd = next(iter(summaries.values()))["analyses"]["chance_floor"]["random"]["by_template"]
    lines.append(f"| random (expected), {next(iter(summaries))} | " + " | ".join(pct(rnd.get(t)) for t in TEMPLATES)
                 + f" | {pct(rnd['Avg. PASS'])} | | | |")
    lines += ["", "## Prior minus uniform", "",
              "| release | " + " | ".join(TEMPLATES) + " |", "|---|" + "---|" * len(TEMPLATES)]
    for profile, summary in summaries.items():
        floor = summary["analyses"]["chance_floor"]
        diffs = []
        for t in TEMPLATES:
            a, b = floor["floor"]["by_template"][t], floor["uniform"]["by_template"][t]
            diffs.append(f"{100 * (a - b):+.1f}")
        lines.append(f"| {profile} | " + " | ".join(diffs) + " |")
    lines += ["", "## Per subset", "", "| prior PASS % | " + " | ".join(TEMPLATES) + " |",
              "|---|" + "---|" * len(TEMPLATES)]
    for profile, summary in summaries.items():
        by_subset = summary["analyses"]["chance_floor"]["floor"]["by_subset"]
        for subset, values in by_subset.items():
            lines.append(f"| {profile} {subset.removeprefix('ROSE-')} | "
                         + " | ".join(pct(values.get(t)) for t in TEMPLATES) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-prior"))
    parser.add_argument("--scenes", type=int, default=30, help="test scenes per subset")
    parser.add_argument("--dev_scenes", type=int, default=10, help="dev scenes per subset")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("prior.md"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    summaries = {p: measure(args.work, p, args.scenes, args.dev_scenes, args.seed) for p in PROFILES}
    text = tables(summaries, args.scenes, args.dev_scenes, args.seed)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
