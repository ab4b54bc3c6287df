"""rose-eval: score a predictions JSONL against ROSE release metadata (never uses the network).

Writes the public v0.1 evaluator's eight files with identical content, adds the analyses
under the ``analyses`` key of evaluation_summary.json (unless ``--no_analyses``) and prints
a Markdown summary. Subcommands (``rose-eval compare ...``) are listed in SUBCOMMANDS.

A predictions file with an ``epoch`` field (``rose-run --epochs k``) is scored per epoch:
the eight files are epoch 1's, ``epochs.json`` beside them holds every epoch's numbers,
their mean, the per-item agreement and the intervals of all epochs (:mod:`rose_eval.epochs`).

Every input row is checked before scoring (:mod:`rose_eval.validate`); every run prints its
coverage on stderr (:mod:`rose_eval.coverage`) and writes ``provenance.json`` beside the
eight files (:mod:`rose_eval.provenance`).

Exit status: 0 done; 1 outputs written but an analysis failed (one stderr line per failed
analysis), or ``--strict`` and the coverage has a gap; 2 bad input or arguments (one
stderr line, nothing written).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rose_eval import provenance as prov
from rose_eval.aggregate import RunInfo, build_summary
from rose_eval.analyses import failures
from rose_eval.analyses.worker import BootstrapHelper
from rose_eval.cli.args import EXIT_USAGE, OneLineParser, int_in
from rose_eval.coverage import Coverage, measure
from rose_eval.epochs import (
    EPOCHS_FILE,
    check_even,
    epochs_summary,
    split_epochs,
    summary_line,
    uneven,
)
from rose_eval.io import (
    METADATA_FIELDS,
    InputError,
    Record,
    index_by_item_id,
    read_predictions,
    rows_of_split,
    run_model,
)
from rose_eval.protocol import parse_answer
from rose_eval.report.tables import display_model_name, json_bytes, write_outputs
from rose_eval.score import score_parsed
from rose_eval.split_rows import read_rows, resolve_split
from rose_eval.truth import item_truth
from rose_eval.validate import check_metadata, check_predictions

PROG = "rose-eval"
EXIT_ANALYSIS_FAILED = 1
EXIT_INPUT_ERROR = EXIT_USAGE
EXIT_COVERAGE_GAP = 1  # --strict: outputs written, but the run does not cover its split cleanly
DEFAULT_REPO_ID = prov.PUBLIC_REPO_ID
# name -> module whose main(argv) -> int runs `rose-eval <name> ...`
SUBCOMMANDS: dict[str, str] = {
    "compare": "rose_eval.cli.compare",
    "power": "rose_eval.cli.power",  # how many scenes a claim needs
    "report": "rose_eval.cli.report",  # the HTML report
}
METADATA_FIX = ("point --dataset_root at a release folder holding metadata_{split}.jsonl (or "
                "data/{split}.parquet, or its data/{split}-*-of-*.parquet parts), or pass "
                "--metadata FILE")
SCORING_FIELDS_HINT = (
    "fix the row: scoring needs integer rows/cols, a known region_type with its "
    "region_params, and coordinate lists like [\"R2,C5\"]"
)


def build_parser() -> OneLineParser:
    """The public evaluator's flags plus --metadata, --seed, --n_boot, --no_analyses."""
    parser = OneLineParser(
        prog=PROG,
        description="Score ROSE predictions against release metadata (same outputs as the "
                    "public v0.1 evaluator, plus analyses). Subcommands: "
                    + ", ".join(f"'{PROG} {name} ...'" for name in SUBCOMMANDS) + ".",
    )
    parser.add_argument("--predictions", type=Path, required=True,
                        help="predictions JSONL: {item_id, model, raw_text, error} per line; "
                             "or a VLMEvalKit result file (.xlsx or .tsv with a prediction column)")
    parser.add_argument("--dataset_root", type=Path, default=None,
                        help="release folder with metadata_{split}.jsonl or data/{split}.parquet "
                             "(or its HF-style data/{split}-0000k-of-0000n.parquet parts)")
    parser.add_argument("--metadata", type=Path, default=None,
                        help="a metadata file anywhere (.jsonl or .parquet; one part of several "
                             "reads them all); overrides --dataset_root")
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    parser.add_argument("--out_dir", type=Path, required=True,
                        help="output folder, replaced as a whole (other files in it are kept)")
    parser.add_argument("--allow_partial", action="store_true",
                        help="score only the items that have predictions")
    parser.add_argument("--model", type=str, default="", help="name recorded for the model (default: the one in the predictions)")
    parser.add_argument("--display_name", type=str, default="",
                        help="how the model is named in the LaTeX table rows")
    parser.add_argument("--digits", type=int_in(0, 50), default=1,
                        help="decimals in the LaTeX rows (0-50)")
    parser.add_argument("--near_miss_l1", type=int_in(0), default=1,
                        help="L1 radius for near-miss clicks (>= 0)")
    parser.add_argument("--repo_id", type=str, default=None,
                        help="recorded in the summary only (nothing is downloaded); default: "
                             f"{DEFAULT_REPO_ID} for the public v0.1 metadata, else empty")
    parser.add_argument("--revision", type=str, default="", help="accepted and ignored")
    parser.add_argument("--seed", type=int_in(0), default=0,
                        help="seed of the bootstrap analyses (>= 0)")
    parser.add_argument("--n_boot", type=int_in(1, 1_000_000), default=10_000,
                        help="bootstrap resamples (1-1,000,000)")
    parser.add_argument("--no_analyses", action="store_true",
                        help="write only the public evaluator's outputs (and provenance.json)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any item is unscored, a subset absent, an answer "
                             "carries an endpoint error or was cut at max_tokens")
    parser.add_argument("--lenient_answers", action="store_true",
                        help="score prediction rows without raw_text, or with a non-string "
                             "one, as the public v0.1 evaluator does (default: refused)")
    parser.add_argument("--allow_uneven_epochs", action="store_true",
                        help="score a repeated run whose epochs are not 1..k or answer different "
                             "items (default: refused)")
    parser.add_argument("--controls_predictions", type=Path, default=None,
                        help="predictions for the release's interface-control items (analysis/controls/); "
                             "control item ids in --predictions are used too. Scored only for the "
                             "interface_controls analysis: the public outputs are those of the main items")
    return parser


def score_records(matched_ids: Sequence[str], metadata: dict[str, Record],
                  predictions: dict[str, Record], *, model: str,
                  near_miss_l1: int) -> list[dict[str, Any]]:
    """Per-item records for the matched ids, in sorted id order."""
    rows: list[dict[str, Any]] = []
    for item_id in sorted(matched_ids):
        meta = metadata[item_id]
        try:
            truth = item_truth(meta.row)
        except (KeyError, ValueError, TypeError, ArithmeticError, RecursionError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise InputError(f"metadata row {item_id!r} cannot be scored: {detail}",
                             meta.where, SCORING_FIELDS_HINT) from None
        prediction = predictions[item_id].row
        prediction.setdefault("model", model)
        parsed = parse_answer(prediction.get("raw_text"), truth.task_mode)
        rows.append(score_parsed(truth, parsed, prediction, near_miss_l1=near_miss_l1))
    return rows


def dataset_repo_id(args: argparse.Namespace, rows_sha256: str) -> str:
    """--repo_id as given, else the public dataset's id only for its own metadata."""
    if args.repo_id is not None:
        return args.repo_id
    return DEFAULT_REPO_ID if prov.public_dataset(rows_sha256) else ""


def evaluate(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str], Coverage]:
    """Load, check, score, aggregate, analyse and write; returns (summary, failed analyses,
    coverage).

    Raises InputError for bad input (nothing is written then).
    """
    helper = None if args.no_analyses else BootstrapHelper()  # starts before anything is read
    try:
        return _evaluate(args, helper)
    finally:
        if helper is not None:
            helper.close()


def _evaluate(args: argparse.Namespace,
              helper: BootstrapHelper | None) -> tuple[dict[str, Any], dict[str, str], Coverage]:
    metadata_files = resolve_split(dataset_root=args.dataset_root, metadata=args.metadata,
                                   split=args.split, fix=METADATA_FIX.format(split=args.split))
    metadata_path = metadata_files.first
    metadata_records = rows_of_split(read_rows(metadata_files, METADATA_FIELDS), args.split)
    metadata = index_by_item_id(metadata_records, role="metadata")
    check_metadata(metadata_records)

    predictions_path = args.predictions.expanduser().resolve()
    prediction_records = read_predictions(predictions_path)
    controls = control_run(args, prediction_records)
    prediction_records = [rec for rec in prediction_records if str(rec.row.get("item_id")) not in controls.metadata]
    if not args.lenient_answers:
        check_predictions(prediction_records)
    model = run_model((rec.row for rec in prediction_records), args.model, predictions_path)
    by_epoch = split_epochs(prediction_records)
    if by_epoch is not None:  # a repeated run: the public files score the first epoch
        check_even(by_epoch, predictions_path, allow=args.allow_uneven_epochs)
        prediction_records = next(iter(by_epoch.values()))
    predictions = index_by_item_id(prediction_records, role="predictions")

    matched = metadata.keys() & predictions.keys()
    missing = sorted(metadata.keys() - predictions.keys())
    if missing and not args.allow_partial:
        raise InputError(
            f"{len(missing)} of {len(metadata)} {args.split} items have no prediction "
            f"(first: {', '.join(missing[:3])})", predictions_path,
            "add the missing predictions, or pass --allow_partial to score a partial run")
    if not matched:
        raise InputError(f"no prediction item_id matches the {args.split} metadata",
                         predictions_path,
                         f"check --split and that the predictions belong to {metadata_path}")

    eval_rows = score_records(matched, metadata, predictions, model=model,
                              near_miss_l1=args.near_miss_l1)
    metadata_rows = [rec.row for rec in metadata_records]
    rows_sha256 = prov.rows_digest(metadata_rows)
    repo_id = dataset_repo_id(args, rows_sha256)
    run = RunInfo(
        model=model, display_name=display_model_name(model, args.display_name),
        split=args.split, dataset_repo_id=repo_id, metadata_path=metadata_path,
        predictions_path=predictions_path, allow_partial=args.allow_partial,
        num_expected=len(metadata), num_prediction_rows=len(prediction_records),
        missing_item_ids=tuple(missing),
        extra_item_ids=tuple(sorted(predictions.keys() - metadata.keys())),
    )
    computed = {}
    if helper is not None and helper.active:  # the bootstrap runs there from now on
        helper.send(eval_rows, seed=args.seed, n_boot=args.n_boot)
        computed["bootstrap"] = helper.result
    summary = build_summary(eval_rows, metadata_rows, run)
    coverage = measure(eval_rows, metadata_rows,
                       {key: rec.row for key, rec in predictions.items()})
    extra_files: dict[str, bytes] = {}
    repeats = None
    if by_epoch is not None:
        repeats = score_epochs(by_epoch, eval_rows, metadata, args, model)
        extra_files[EPOCHS_FILE] = json_bytes(repeats)
    sidecar = prov.build_provenance(
        files=metadata_files, rows_sha256=rows_sha256, split=args.split,
        rows=len(metadata), metadata_rows=metadata_rows, predictions=predictions_path,
        model=model, dataset_repo_id=repo_id or None, coverage=coverage,
        settings={"allow_partial": args.allow_partial, "near_miss_l1": args.near_miss_l1,
                  "seed": args.seed, "n_boot": args.n_boot, "analyses": not args.no_analyses,
                  "lenient_answers": args.lenient_answers,
                  **({} if repeats is None else {"epochs": repeats["epochs"],
                                                 "allow_uneven_epochs": args.allow_uneven_epochs})})

    def add_analyses() -> None:  # once the per-item files are written
        from rose_eval.analyses import run_analyses

        summary["analyses"] = run_analyses(eval_rows, metadata_rows, seed=args.seed,
                                           n_boot=args.n_boot, paper=summary["paper_metrics"],
                                           computed=computed,
                                           dataset_root=args.dataset_root or metadata_path.parent,
                                           split=args.split,
                                           controls=controls.score(model, args.near_miss_l1))

    out_dir = args.out_dir.expanduser().resolve()
    try:
        write_outputs(out_dir, eval_rows, summary, args.digits,
                      before_summary=None if args.no_analyses else add_analyses,
                      extra_files={prov.PROVENANCE_FILE: prov.provenance_bytes(sidecar), **extra_files})
    except OSError as exc:
        raise InputError(f"cannot write the outputs: {exc.strerror or exc}", out_dir,
                         "choose a writable --out_dir") from None
    if repeats is not None:
        print(f"{PROG}: {summary_line(repeats)} ({EPOCHS_FILE})", file=sys.stderr)
    return summary, failures(summary.get("analyses", {})), coverage


def score_epochs(by_epoch: dict[int, list[Record]], first_rows: list[dict[str, Any]],
                 metadata: dict[str, Record], args: argparse.Namespace, model: str) -> dict[str, Any]:
    """Score every epoch after the first (whose rows are ``first_rows``) and summarise them
    all (:func:`rose_eval.epochs.epochs_summary`); an epoch with items outside the metadata,
    or none in it, is an InputError."""
    rows_by_epoch = {}
    for epoch, records in by_epoch.items():
        if not rows_by_epoch:
            rows_by_epoch[epoch] = first_rows
            continue
        predictions = index_by_item_id(records, role=f"epoch {epoch} predictions")
        matched = metadata.keys() & predictions.keys()
        if not matched:
            raise InputError(f"no prediction item_id of epoch {epoch} matches the {args.split} metadata",
                             records[0].where, "check that every epoch answers this split")
        rows_by_epoch[epoch] = score_records(matched, metadata, predictions, model=model,
                                             near_miss_l1=args.near_miss_l1)
    return epochs_summary(rows_by_epoch, even=not uneven(by_epoch), problems=uneven(by_epoch),
                          seed=args.seed, n_boot=args.n_boot, intervals=not args.no_analyses)


class ControlRun:
    """The interface-control rows of the release and the predictions that answer them."""

    def __init__(self, metadata: dict[str, Record], predictions: dict[str, Record]) -> None:
        self.metadata, self.predictions = metadata, predictions

    def score(self, model: str, near_miss_l1: int) -> list[dict[str, Any]]:
        """Scored control items (each with its ``control`` and ``source_item_id``), sorted by id."""
        matched = self.metadata.keys() & self.predictions.keys()
        rows = score_records(matched, self.metadata, self.predictions, model=model, near_miss_l1=near_miss_l1)
        for row in rows:
            meta = self.metadata[row["item_id"]].row
            row["control"], row["source_item_id"] = meta.get("control"), meta.get("source_item_id")
        return rows


def control_run(args: argparse.Namespace, main_predictions: Sequence[Record]) -> ControlRun:
    """The release's control rows (``--dataset_root``) and their predictions: those in the main
    predictions whose ids are control items, then ``--controls_predictions``. InputError when
    control predictions are given for a release without control rows, or match none."""
    from rose_eval.controls import present_controls, read_control_rows

    root = args.dataset_root.expanduser().resolve() if args.dataset_root is not None else None
    present = present_controls(root, args.split) if args.metadata is None else ()
    extra = args.controls_predictions
    if not present:
        if extra is not None:
            raise InputError(f"--controls_predictions given, but the release has no interface-control rows for "
                             f"{args.split}", root or args.metadata,
                             "point --dataset_root at a release generated with export.controls")
        return ControlRun({}, {})
    rows = [rec for control in present for rec in read_control_rows(root, control, args.split)]
    check_metadata(rows)
    metadata = index_by_item_id(rows, role="control metadata")
    records = [rec for rec in main_predictions if str(rec.row.get("item_id")) in metadata
               and rec.row.get("epoch", 1) == 1]  # a repeated run's controls: the first epoch
    if extra is not None:
        path = extra.expanduser().resolve()
        own = read_predictions(path)
        unknown = [str(rec.row.get("item_id")) for rec in own if str(rec.row.get("item_id")) not in metadata]
        if unknown:
            raise InputError(f"{len(unknown)} control predictions match no control row (first: "
                             f"{', '.join(unknown[:3])})", path,
                             "pass the rose-run output of this release's control items (--controls)")
        records += own
    if not args.lenient_answers:
        check_predictions(records)
    return ControlRun(metadata, index_by_item_id(records, role="control predictions"))


def run_subcommand(name: str, argv: Sequence[str]) -> int:
    """``rose-eval <name> ARGS``: the subcommand module's main(ARGS)."""
    return int(importlib.import_module(SUBCOMMANDS[name]).main(list(argv)) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the rose-eval console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return run_subcommand(argv[0], argv[1:])
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    gc.disable()  # one pass over large acyclic data: cycle collection only costs time here
    try:
        summary, failed, coverage = evaluate(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    finally:
        gc.enable()
    from rose_eval.report.markdown import render_markdown

    print(render_markdown(summary))
    print(f"{PROG}: {coverage.line()}", file=sys.stderr)
    for name, message in failed.items():
        print(f"{PROG}: error: analysis {name} failed ({message}); the other outputs are "
              f"written to {args.out_dir}", file=sys.stderr)
    if failed:
        return EXIT_ANALYSIS_FAILED
    if args.strict and coverage.gaps:
        print(f"{PROG}: error: --strict: {'; '.join(coverage.gaps)} (outputs written to "
              f"{args.out_dir})", file=sys.stderr)
        return EXIT_COVERAGE_GAP
    return 0


if __name__ == "__main__":
    sys.exit(main())
