"""`rose-eval report EVAL_DIR... --out report.html`: one self-contained HTML report.

The page needs no network and runs no script: figures are inline SVG, gallery images
PNG data URIs, styles inline, and a Content-Security-Policy forbids everything else.
Same inputs and flags -> same bytes (no timestamps; seeded sampling; fixed SVG salts).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rose_eval import __version__
from rose_eval.report import gallery, sections
from rose_eval.report.htmlkit import Html, el, page
from rose_eval.report.runs import ReportError, ReportRun, load_release, load_report_runs

PROG = "rose-eval report"
EXIT_INPUT_ERROR = 2
DEFAULT_GALLERY = 12


@dataclass(frozen=True)
class ReportConfig:
    """Everything one report depends on."""

    eval_dirs: tuple[Path, ...]
    out: Path
    dataset_root: Path | None = None
    gallery: int = DEFAULT_GALLERY
    seed: int = 0
    n_boot: int = 10_000


def _section(anchor: str, title: str, *body: object) -> Html:
    return el("section", el("h2", title), *body, id=anchor)


def _gallery(runs: Sequence[ReportRun], config: ReportConfig) -> Html:
    picked = [gallery.sample_failures(run.items, config.gallery, config.seed) for run in runs]
    wanted = {str(item.get("item_id")) for items in picked for item in items}
    release = load_release(config.dataset_root, runs, wanted)
    intro = ("Failed items drawn at random (seed "
             f"{config.seed}, up to {config.gallery} per model, templates in turn).")
    if release is None:
        intro += (" The release was not found (no --dataset_root and no readable metadata path "
                  "in the summaries), so images and prompts are missing.")
    parts: list[object] = [el("p", intro, class_="note"), gallery.LEGEND]
    for run, items in zip(runs, picked, strict=True):
        cards = []
        for item in items:
            row = release.row(str(item.get("item_id"))) if release else None
            path = release.image_path(row) if release and row else None
            cards.append(gallery.card(item, row, gallery.item_image(item, row, path)))
        parts.append(el("h3", run.name))
        parts.append(el("div", cards, class_="gallery") if cards
                     else el("p", "No failed item.", class_="note"))
    return Html("".join(map(str, parts)))


def _header(runs: Sequence[ReportRun], config: ReportConfig) -> list[Html]:
    first = runs[0].summary
    n_items = first.get("coverage", {}).get("num_evaluated", len(runs[0].items))
    boot = first.get("analyses", {}).get("bootstrap", {}) if isinstance(
        first.get("analyses"), dict) else {}
    scenes = sum((boot.get("n_scenes") or {}).values()) if isinstance(boot, dict) else 0
    lead = (f"{len(runs)} run{'s' if len(runs) != 1 else ''} · split {first.get('split', '?')} · "
            f"{n_items} items" + (f" · {scenes} scenes" if scenes else "")
            + (f" · intervals: {boot.get('n_boot')} scene-cluster bootstrap resamples, seed "
               f"{boot.get('seed')}" if boot.get("n_boot") else ""))
    toc = [("finding", "Finding"), ("table1", "Table 1"), ("table2", "Table 2"),
           ("gap", "Perception → action"), ("heatmap", "Subset × template"),
           ("errors", "Error taxonomy"), ("consistency", "Scene consistency"),
           ("bridges", "Bridges"), ("compare", "Comparison"), ("gallery", "Failure gallery"),
           ("inputs", "Inputs")]
    return [el("h1", "ROSE evaluation report"), el("p", lead, class_="lead"),
            el("nav", [el("a", label, href=f"#{anchor}") for anchor, label in toc], class_="toc")]


def build_report(config: ReportConfig) -> bytes:
    """The whole report as bytes. Raises ReportError on bad input."""
    runs = load_report_runs(config.eval_dirs)
    consistency = sections.consistency(runs)
    bridges = sections.bridges(runs)
    comparison = sections.comparison(runs, seed=config.seed, n_boot=config.n_boot)
    body = [
        *_header(runs, config),
        el("section", sections.finding(runs), id="finding"),
        _section("table1", "Table 1: PASS by subset", sections.table1(runs)),
        _section("table2", "Table 2: PASS by template", sections.table2(runs)),
        _section("gap", "Perception to action", sections.gap_section(runs)),
        _section("heatmap", "PASS by subset and template", sections.heatmaps(runs)),
        _section("errors", "Error taxonomy", sections.taxonomy(runs),
                 el("h3", "Validity and abstention"), sections.diagnostics(runs)),
        _section("consistency", "Scene consistency", consistency
                 or el("p", "Not in these summaries.", class_="note")),
        _section("bridges", "Bridges", bridges
                 or el("p", "No bridge rows (T1B, T2B) in these runs.", class_="note")),
        _section("compare", "Paired comparison", comparison
                 or el("p", "One run: nothing to compare.", class_="note")),
        _section("gallery", "Failure gallery", _gallery(runs, config)),
        _section("inputs", "Inputs", el("ul", [
            el("li", el("strong", run.name), f": {run.path} (model {run.summary.get('model')}, "
               f"predictions {run.summary.get('predictions_jsonl')})") for run in runs]),
            el("p", f"rose-eval {__version__} report; gallery seed {config.seed}; comparison "
               f"resamples {config.n_boot}.", class_="note")),
    ]
    return page("ROSE evaluation report: " + ", ".join(run.name for run in runs), body,
                meta={"generator": f"rose-eval {__version__}"})


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary sibling and rename: never a half-written report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the report from others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{PROG}: error: {message} (command line); see {PROG} --help", file=sys.stderr)
        raise SystemExit(EXIT_INPUT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("eval_dirs", nargs="+", type=Path, metavar="EVAL_DIR",
                        help="evaluation folder written by rose-eval --out_dir")
    parser.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    parser.add_argument("--dataset_root", type=Path, default=None,
                        help="release folder (images, prompts); default: the metadata path "
                        "recorded in the first summary")
    parser.add_argument("--gallery", type=int, default=DEFAULT_GALLERY,
                        help="failed items shown per model (0 = no gallery images)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the gallery sample and of the paired comparison")
    parser.add_argument("--n_boot", type=int, default=10_000,
                        help="paired scene resamples of the comparison (several runs)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `rose-eval report`; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        from rose_eval.report.plots import require_matplotlib

        require_matplotlib()
    except ImportError as exc:
        print(f"{PROG}: error: {exc} (environment)", file=sys.stderr)
        return EXIT_INPUT_ERROR
    config = ReportConfig(tuple(args.eval_dirs), args.out, args.dataset_root, args.gallery,
                          args.seed, args.n_boot)
    try:
        if config.gallery < 0 or config.n_boot < 1 or config.seed < 0:
            raise ReportError("--gallery must be >= 0, --n_boot >= 1 and --seed >= 0 "
                              "(command line)")
        data = build_report(config)
        try:
            write_atomic(config.out.expanduser(), data)
        except OSError as exc:
            raise ReportError(f"{config.out}: cannot write ({exc.strerror or exc}); choose a "
                              "writable --out path") from None
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    print(f"{PROG}: wrote {config.out} ({len(data) / 1024:.0f} KiB)", file=sys.stderr)
    return 0
