"""`rose-eval power`: how many scenes a claim needs, and the `rose-gen` line that makes them.

    rose-eval power EVAL_DIR [--delta 5]              one model's PASS (a pilot run)
    rose-eval power EVAL_A EVAL_B [--delta 5]         the paired difference A - B (two pilots)
    rose-eval power --rate 60 [--rate_b 55] [--icc 1] [--correlation 0] [--rows_per_scene 5]

From a pilot (runs evaluated by rose-eval on the same scenes) or from stated rates, it
prints, per subset and for the metric's Avg. (Table 1: PASS, SOFT or VALID): the pilot's
standard error, within-scene correlation (ICC) and design effect, the minimum detectable
difference of the present run, and the scenes needed to detect ``--delta`` points at
``--alpha`` (two-sided) with ``--power``; then the `rose-gen` overrides that make exactly
that many scenes in the scored split (the release's recorded config gives the subset keys,
profile, difficulty and dev scenes; the seed is the pilot's plus one, so the scenes are
fresh). The arithmetic is in :mod:`rose_eval.analyses.power`; this module reads the pilot and the
release's recorded config, and prints.

Exit status: 0 done; 2 bad input (one stderr line, nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rose_eval.analyses.bootstrap import build_scene_table
from rose_eval.analyses.compare import CompareError, check_same_items, load_runs
from rose_eval.analyses.power import (
    DEFAULT_ALPHA,
    DEFAULT_POWER,
    METRICS,
    UPPER_CONFIDENCE,
    Plan,
    make_plan,
    pilot_plan,
    stated_variances,
)
from rose_eval.atomic import write_atomic
from rose_eval.cli.args import EXIT_USAGE, OneLineParser
from rose_eval.report.tables import SUMMARY
from rose_eval.vocab import SUBSET_SHORT

PROG = "rose-eval power"
EXPORT_SUMMARY = "export_summary.json"
DEFAULT_DELTA = 5.0
# The generator's config keys of the v0.1 subsets (conf/subset/<key>.yaml; a test checks
# them), for a release whose export_summary.json is not at hand.
SUBSET_KEYS: dict[str, str] = {
    "ROSE-ChineseGlyph": "glyph",
    "ROSE-EmojiStyle": "emoji_style",
    "ROSE-EmojiContent": "emoji_content",
    "ROSE-PixelEdit": "pixel_edit",
    "ROSE-PixelContent": "pixel_content",
}


class PowerError(Exception):
    """A user-facing problem: one line saying what, where and how to fix it."""


# ---- the release behind the pilot ------------------------------------------------------------

def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def release_config(dataset_root: Path | None, eval_dir: Path | None
                   ) -> tuple[dict[str, Any] | None, Path | None, str]:
    """(recorded generation config, export_summary path, split) of the pilot's release.

    The release is ``--dataset_root``, else the folder of the metadata file the pilot's
    evaluation_summary.json records; the split is the pilot's (test when unknown).
    """
    summary = _read_json(eval_dir / SUMMARY) if eval_dir is not None else None
    split = str((summary or {}).get("split") or "test")
    if dataset_root is not None:
        root = dataset_root.expanduser().resolve()
        if not (root / EXPORT_SUMMARY).is_file():
            raise PowerError(f"--dataset_root {root}: no {EXPORT_SUMMARY}; pass a release "
                             "made by rose-gen (or leave --dataset_root out)")
    else:
        recorded = (summary or {}).get("metadata_jsonl")
        if not isinstance(recorded, str) or not recorded:
            return None, None, split
        meta = Path(recorded)
        root = meta.parent.parent if meta.parent.name == "data" else meta.parent
    path = root / EXPORT_SUMMARY
    exported = _read_json(path) if path.is_file() else None
    config = exported.get("config") if exported else None
    return (config if isinstance(config, dict) else None), (path if config else None), split


def _subset_entries(config: Mapping[str, Any] | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """rose_subset name -> (config key, its recorded subset config)."""
    recorded = (config or {}).get("subset") or {}
    out = {str(v.get("name")): (str(k), v) for k, v in recorded.items() if isinstance(v, dict)}
    for name, key in SUBSET_KEYS.items():
        out.setdefault(name, (key, {}))
    return out


def rose_gen_overrides(plan: Plan, config: Mapping[str, Any] | None, split: str, *,
                       dev_scenes: int | None = None, output_dir: str | None = None
                       ) -> tuple[str, list[str]]:
    """The `rose-gen` command that makes ``plan.scenes_per_subset`` scenes per subset in the
    scored split, and notes on what it assumed."""
    n = plan.scenes_per_subset
    entries = _subset_entries(config)
    notes: list[str] = []
    words = ["rose-gen"]
    if config is not None:
        words.append(f"profile={config.get('profile_name')}")
        difficulty = (config.get("difficulty") or {}).get("name")
        if difficulty:
            words.append(f"difficulty={difficulty}")
        words.append(f"seed={int(config.get('seed') or 0) + 1}")
    else:
        notes.append("no release config (export_summary.json) at hand: add the profile and "
                     "settings the scenes should have, or pass --dataset_root RELEASE to take "
                     "them from a release")
    words.append(f"output_dir={output_dir or f'out/rose_{n}_scenes'}")
    keys: list[str] = []
    unknown_dev: list[str] = []
    for part in plan.subsets:
        name = part.part.subset
        key, recorded = entries.get(name, (None, {}))
        if key is None:
            notes.append(f"{name}: no generator key known; set its scenes by hand")
            continue
        keys.append(key)
        dev = dev_scenes if dev_scenes is not None else recorded.get("dev_scenes")
        if split == "dev":
            test = (int(recorded["scenes"]) - int(recorded["dev_scenes"])
                    if "scenes" in recorded and "dev_scenes" in recorded else 0)
            words += [f"subset.{key}.scenes={n + test}", f"subset.{key}.dev_scenes={n}"]
        else:
            if dev is None:
                dev = 0
                unknown_dev.append(key)
            words += [f"subset.{key}.scenes={n + int(dev)}", f"subset.{key}.dev_scenes={dev}"]
    if unknown_dev:
        notes.append(f"dev scenes of {', '.join(unknown_dev)} unknown: set to 0 (--dev_scenes K "
                     "gives each subset K)")
    recorded_keys = list(((config or {}).get("subset") or {}).keys())
    if config is not None and set(keys) != set(recorded_keys):
        words.append(f"subsets=[{','.join(keys)}]")
    return " ".join(words), list(dict.fromkeys(notes))


# ---- output ---------------------------------------------------------------------------------

def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _pct(value: float | None, digits: int = 1) -> str:
    return "--" if value is None else f"{100 * value:.{digits}f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "--" if value is None else f"{value:.{digits}f}"


def plan_markdown(plan: Plan, *, title: str, pilot_line: str, command: str,
                  notes: Sequence[str]) -> str:
    """The plan as Markdown: per-subset table, the Avg. line, the scene count and command."""
    paired = plan.paired
    pilot = plan.se_now is not None
    metric = METRICS[plan.metric]
    head = ["Subset", "scenes", "rows/scene"]
    head += ["A", "B", "A - B", "corr. A,B", "ICC A", "ICC B", "deff A", "deff B"] if paired \
        else [plan.metric, "ICC", "deff"]
    head += ["SE", "MDD now"] if pilot else []
    head += [f"scenes for {100 * plan.delta:g} pts alone"]
    lines = [f"## {title}", "", pilot_line, "",
             f"Two-sided test at alpha = {plan.alpha:g} with {100 * plan.power:g} % power; the "
             "scene is the cluster (scene-clustered variance, Miller 2024). Rates, SE and MDD "
             "in %/points.", "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for line in plan.subsets:
        p = line.part
        mark = " †" if p.substituted else ""
        cells = [SUBSET_SHORT.get(p.subset, p.subset) + mark,
                 str(p.n_scenes) if p.n_scenes else "--", _num(p.rows_per_scene, 1)]
        if paired:
            cells += [_pct(p.points[0]), _pct(p.points[1]), _pct(p.points[0] - p.points[1]),
                      _num(p.correlation), _num(p.icc[0]), _num(p.icc[1]), _num(p.deff[0]),
                      _num(p.deff[1])]
        else:
            cells += [_pct(p.points[0]), _num(p.icc[0]), _num(p.deff[0])]
        cells += [_pct(line.se_now), _pct(line.mdd_now)] if pilot else []
        cells.append(f"{line.scenes_alone:,}")
        lines.append("| " + " | ".join(cells) + " |")
    n = plan.scenes_per_subset
    k = len(plan.subsets)
    rows = sum(line.part.rows_per_scene for line in plan.subsets) * n
    what = "the paired difference A - B" if paired else f"one model's {metric}"
    lines.append("")
    if pilot:
        lines.append(f"**Minimum detectable difference now** ({what}, {metric} over {k} "
                     f"subsets): {_pct(plan.mdd_now)} points (SE {_pct(plan.se_now)}"
                     + (f", design effect {plan.deff:.2f}" if plan.deff is not None else "")
                     + "); a smaller true difference is found with less than "
                     f"{100 * plan.power:g} % power.")
        lines.append("")
    lines.append(f"**To detect {100 * plan.delta:g} points** ({what}, {metric}): "
                 f"**{n:,} scenes per subset** in the scored split ({n * k:,} scenes, about "
                 f"{round(rows):,} rows per model).")
    if plan.scenes_per_subset_upper is not None:
        lines.append(f"The pilot's variance rests on {plan.pilot_df} degrees of freedom: at its "
                     f"{100 * UPPER_CONFIDENCE:g} % upper confidence bound the count is "
                     f"{plan.scenes_per_subset_upper:,} scenes per subset.")
    lines += ["", "```bash", command, "```"]
    extra = list(plan.notes) + list(notes)
    if extra:
        lines.append("")
        lines += [f"- {note}" for note in extra]
    if any(line.part.substituted for line in plan.subsets):
        lines.append("- †: planned from the worst case the pilot allows (the note above).")
    return "\n".join(lines) + "\n"


# ---- command line ---------------------------------------------------------------------------

def _percent(text: str) -> float:
    """A rate or difference in percent (``62``, ``62%``, ``62.5``) as a fraction."""
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {text!r}") from None
    if not 0.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"must be from 0 to 100 (percent), got {text}")
    return value / 100.0


def _delta(text: str) -> float:
    """--delta: points above 0, at most 100."""
    value = _percent(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"delta must be above 0 points, got {text}")
    return value


def _fraction(low: float, high: float, *, closed: bool = False):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        inside = low <= value <= high if closed else low < value < high
        if not inside:
            bounds = f"[{low:g}, {high:g}]" if closed else f"({low:g}, {high:g})"
            raise argparse.ArgumentTypeError(f"must lie in {bounds}, got {text}")
        return value
    return parse


def _at_least(low: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {text}")
        return value
    return parse


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG, description="How many scenes a claim needs: minimum detectable difference "
        "of a pilot run, scenes per subset to detect --delta points, and the rose-gen line "
        "that makes them.")
    parser.add_argument("eval_dirs", nargs="*", type=Path, metavar="EVAL_DIR",
                        help="one pilot run (one model's PASS) or two on the same scenes "
                             "(the paired difference first minus second)")
    parser.add_argument("--delta", type=_delta, default=DEFAULT_DELTA / 100,
                        help=f"difference to detect, in points (default {DEFAULT_DELTA:g})")
    parser.add_argument("--alpha", type=_fraction(0, 1), default=DEFAULT_ALPHA,
                        help="two-sided test level (default 0.05)")
    parser.add_argument("--power", type=_fraction(0, 1), default=DEFAULT_POWER,
                        help="chance of detecting --delta (default 0.8)")
    parser.add_argument("--metric", choices=sorted(METRICS), default="PASS",
                        help="Table 1 metric; its Avg. over subsets is planned (default PASS)")
    parser.add_argument("--dataset_root", type=Path, default=None,
                        help="the release whose export_summary.json gives the rose-gen keys "
                             "(default: the pilot's, from its evaluation_summary.json)")
    parser.add_argument("--dev_scenes", type=_count, default=None,
                        help="dev scenes per subset in the suggested release (default: the "
                             "release's recorded ones)")
    parser.add_argument("--output_dir", default=None, help="output_dir in the suggested line")
    stated = parser.add_argument_group("stated rates (no pilot)")
    stated.add_argument("--rate", type=_percent, default=None,
                        help="the model's expected rate, percent")
    stated.add_argument("--rate_b", type=_percent, default=None,
                        help="a second model's rate: plan the paired difference")
    stated.add_argument("--icc", type=_fraction(0, 1, closed=True), default=1.0,
                        help="within-scene correlation of the rows (default 1: each scene "
                             "counts once, the most conservative)")
    stated.add_argument("--correlation", type=_fraction(-1, 1, closed=True), default=0.0,
                        help="correlation of the two models' scene means (default 0)")
    stated.add_argument("--rows_per_scene", type=_at_least(1), default=5.0,
                        help="rows per scene (default 5: the five main templates)")
    stated.add_argument("--subsets", default=",".join(SUBSET_KEYS.values()),
                        help="comma-separated subset keys (default: the five v0.1 subsets)")
    parser.add_argument("--out", type=Path, default=None, help="also write the plan as JSON")
    return parser


def _stated_plan(args: argparse.Namespace) -> tuple[Plan, list[str]]:
    """The plan from --rate (and --rate_b), and the subset names it covers."""
    rates = [args.rate] + ([args.rate_b] if args.rate_b is not None else [])
    by_key = {key: name for name, key in SUBSET_KEYS.items()}
    keys = [k.strip() for k in args.subsets.split(",") if k.strip()]
    if not keys:
        raise PowerError("--subsets is empty; name at least one subset key (e.g. glyph)")
    names = [by_key.get(k, k) for k in keys]
    parts = stated_variances(rates, names, icc=args.icc, rows_per_scene=args.rows_per_scene,
                             correlation=args.correlation)
    return make_plan(parts, metric=args.metric, delta=args.delta, alpha=args.alpha,
                     power=args.power), names


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The Markdown text and the JSON record; raises PowerError on bad input."""
    if args.rate is None and args.rate_b is not None:
        raise PowerError("--rate_b needs --rate (the first model's rate)")
    if args.rate is not None and args.eval_dirs:
        raise PowerError("give pilot EVAL_DIRs or --rate, not both")
    if args.rate is None and not args.eval_dirs:
        raise PowerError("nothing to plan from: give one or two EVAL_DIRs (pilot runs) or "
                         "--rate (a stated rate)")
    if len(args.eval_dirs) > 2:
        raise PowerError(f"{len(args.eval_dirs)} EVAL_DIRs given; power plans one model or one "
                         "pair (use rose-eval compare for more)")
    if args.rate is not None:
        plan, _ = _stated_plan(args)
        config, where, split = release_config(args.dataset_root, None)
        pilot_line = (f"No pilot: stated rate {_pct(args.rate)} %"
                      + (f" and {_pct(args.rate_b)} % (paired, correlation "
                         f"{args.correlation:g})" if args.rate_b is not None else "")
                      + f", ICC {args.icc:g}, {args.rows_per_scene:g} rows per scene "
                      f"(design effect {1 + (args.rows_per_scene - 1) * args.icc:.2f}).")
        title = f"How many scenes: {args.metric}" + (", paired difference" if
                                                    args.rate_b is not None else "")
        source: dict[str, Any] = {"rates": [args.rate, args.rate_b], "icc": args.icc,
                                  "correlation": args.correlation,
                                  "rows_per_scene": args.rows_per_scene}
    else:
        try:
            runs = load_runs([d.expanduser().resolve() for d in args.eval_dirs])
            if len(runs) == 2:
                check_same_items(runs)
        except CompareError as exc:
            raise PowerError(str(exc)) from None
        tables = [build_scene_table(r.items) for r in runs]
        if not tables[0].subsets:
            raise PowerError(f"{runs[0].path}: no rows of a known subset to plan from")
        if len(tables) == 2 and tables[0].scene_ids != tables[1].scene_ids:
            raise PowerError("the two runs disagree on which scene each item belongs to; "
                             "pass runs evaluated on the same release")
        try:
            plan = pilot_plan(tables, metric=args.metric, delta=args.delta, alpha=args.alpha,
                              power=args.power)
        except ValueError as exc:
            raise PowerError(f"{runs[0].path}: {exc}") from None
        config, where, split = release_config(args.dataset_root, runs[0].path)
        names = " minus ".join(r.name for r in runs)
        scenes = sum(len(ids) for ids in tables[0].scene_ids)
        pilot_line = (f"Pilot: {names} on the {split} split, {scenes} scenes "
                      f"({', '.join(str(len(i)) for i in tables[0].scene_ids)} per subset)"
                      + (f"; release config {_shown(where)}" if where else "") + ".")
        title = f"How many scenes: {args.metric}, {names}"
        source = {"eval_dirs": [str(r.path) for r in runs], "split": split}
    command, notes = rose_gen_overrides(plan, config, split, dev_scenes=args.dev_scenes,
                                        output_dir=args.output_dir)
    text = plan_markdown(plan, title=title, pilot_line=pilot_line, command=command, notes=notes)
    record = {"plan": asdict(plan), "source": source, "rose_gen": command, "notes": notes}
    return text, record


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `rose-eval power`; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    try:
        text, record = run(args)
        if args.out is not None:
            try:
                write_atomic(args.out, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
            except OSError as exc:
                raise PowerError(f"{args.out}: cannot write ({exc.strerror}); choose a "
                                 "writable --out path") from None
    except PowerError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
