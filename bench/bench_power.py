"""The worked example of docs/scoring.md, run for real: is the cv baseline better than random
guessing at ``difficulty=hard``, and how many scenes does the claim need?

    .venv/bin/python bench/bench_power.py --work /tmp/rose-power --markdown [--confirm]

A pilot release (``profile=mini difficulty=hard``, 12 scenes per subset, 10 of them test)
is answered by the oracle, cv and random baselines and scored; ``rose-eval compare`` ranks
the three, and ``rose-eval power`` plans the scenes that detect a 4-point cv-minus-random
difference. ``--confirm`` then runs the ``rose-gen`` line the plan prints, answers and
scores it with the same baselines and compares again. Every section of the record
(``bench/power.md``) is a command's own output, verbatim.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_markdown_flag, run_context  # noqa: E402 - the bench folder is not a package

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SUBSETS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")
SOLVERS = ("oracle", "cv", "random")
DELTA = 4


def run(*args: str, ok: tuple[int, ...] = (0,)) -> str:
    """Run one of our commands from the venv; its stdout (stderr shown on failure)."""
    cmd = [str(BIN / args[0]), *args[1:]]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL)
    if done.returncode not in ok:
        sys.exit(f"bench_power: {shlex.join(args)} failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    return done.stdout


def answer_and_score(release: Path, work: Path, tag: str) -> list[Path]:
    """Each baseline's predictions on the test split, scored; the evaluation folders."""
    out = []
    for solver in SOLVERS:
        preds, evals = work / f"{tag}_{solver}.jsonl", work / f"eval_{tag}_{solver}"
        if not (evals / "evaluation_summary.json").is_file():
            # exit 1: items the baseline could not answer, written as failed rows and scored as failed
            run("rose-run", "--dataset_root", str(release), "--split", "test", "--solver", solver,
                "--output", str(preds), "--no_progress", ok=(0, 1))
            run("rose-eval", "--dataset_root", str(release), "--split", "test", "--predictions", str(preds),
                "--out_dir", str(evals))
        out.append(evals)
    return out


def fenced(text: str) -> str:
    return "```text\n" + text.strip("\n") + "\n```"


def demoted(markdown: str) -> str:
    """``markdown`` with every heading one level lower (outside fenced code)."""
    out, fenced_code = [], False
    for line in markdown.splitlines():
        fenced_code ^= line.startswith("```")
        out.append("#" + line if not fenced_code and line.startswith("#") else line)
    return "\n".join(out)


def pairs_table(compare_out: str) -> str:
    """The pairwise-claims table of ``rose-eval compare``'s output (the lines from its header on)."""
    lines = compare_out.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("| A | B |")), None)
    if start is None:
        sys.exit("bench_power: rose-eval compare printed no pairwise table")
    table = [ln for ln in lines[start:] if ln.startswith("|") and not set(ln) <= set("|-: ")]
    return "\n".join(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-power"), help="scratch folder (reused)")
    parser.add_argument("--confirm", action="store_true", help="also run the planned release and compare again")
    add_markdown_flag(parser, "power.md")
    args = parser.parse_args()
    context = run_context()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    pilot = work / "hard"
    if not (pilot / "export_summary.json").is_file():
        run("rose-gen", "profile=mini", "difficulty=hard", f"output_dir={pilot}", "progress=false",
            *(f"subset.{s}.scenes=12" for s in SUBSETS))
    oracle, cv, rnd = answer_and_score(pilot, work, "hard")
    compare_pilot = pairs_table(run("rose-eval", "compare", str(oracle), str(cv), str(rnd)))
    power = run("rose-eval", "power", str(cv), str(rnd), "--delta", str(DELTA))
    sections = [("Compare on the pilot", "`rose-eval compare` of the three baselines on the pilot "
                 "(10 test scenes per subset):", fenced(compare_pilot)),
                ("Power from the pilot", f"`rose-eval power EVAL_cv EVAL_random --delta {DELTA}`, verbatim "
                 "(its heading one level down, inside this section):", demoted(power.strip("\n")))]
    if args.confirm:
        line = next((ln.strip() for ln in power.splitlines() if ln.strip().startswith("rose-gen ")), None)
        if line is None:
            sys.exit("bench_power: rose-eval power printed no rose-gen line")
        words = shlex.split(line)
        planned = work / "planned"
        words = [w for w in words if not w.startswith("output_dir=")] + [f"output_dir={planned}", "progress=false"]
        if not (planned / "export_summary.json").is_file():
            run(*words)
        oracle2, cv2, rnd2 = answer_and_score(planned, work, "planned")
        compare_planned = pairs_table(run("rose-eval", "compare", str(oracle2), str(cv2), str(rnd2)))
        scenes = re.search(r"scenes=(\d+)", line)
        sections.append(("Compare on the planned release",
                         f"The line the plan printed, run (`{shlex.join(words[:4])} ...`, "
                         f"{scenes.group(1) if scenes else '?'} scenes per subset before the dev split), the same "
                         "three baselines, `rose-eval compare`:", fenced(compare_planned)))
    text = ("# The worked power example, measured\n\n"
            f"Made by `{' '.join(['.venv/bin/python', 'bench/bench_power.py', *sys.argv[1:]])}` "
            f"on {context.date} UTC, commit {context.commit}. Pilot: `rose-gen profile=mini difficulty=hard` "
            "with `subset.<key>.scenes=12` (mini keeps 2 dev scenes), seed 0; baselines on the test split.\n")
    for title, intro, body in sections:
        text += f"\n## {title}\n\n{intro}\n\n{body}\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
        print(f"recorded {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
