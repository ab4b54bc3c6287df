"""rose-eval: score a predictions JSONL against ROSE release metadata (never uses the network).

Writes the public v0.1 evaluator's eight files with identical content, adds the
analyses under the new ``analyses`` key of evaluation_summary.json (unless
``--no_analyses``) and prints a summary. ``rose-eval compare ...`` compares runs.
Structural input faults end the run with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rose_eval.aggregate import build_summary
from rose_eval.harness.vlmevalkit import is_result_file, read_result_file
from rose_eval.io import (
    InputError,
    Record,
    index_by_item_id,
    infer_model,
    read_jsonl,
    read_metadata,
    resolve_metadata_path,
    rows_of_split,
)
from rose_eval.protocol import parse_answer
from rose_eval.report.tables import (
    SUMMARY,
    display_model_name,
    json_bytes,
    render_outputs,
    table1_row,
    table2_row,
    write_outputs_atomically,
)
from rose_eval.score import item_truth, score_parsed

PROG = "rose-eval"
EXIT_INPUT_ERROR = 2
DEFAULT_REPO_ID = "sysuwyh357/ROSE-v0.1"
SCORING_FIELDS_HINT = (
    "fix the row: scoring needs integer rows/cols, a known region_type with its "
    "region_params, and coordinate lists like [\"R2,C5\"]"
)


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"{PROG}: error: {message} (command line); see {PROG} --help",
              file=sys.stderr)
        raise SystemExit(EXIT_INPUT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    """The public evaluator's flags plus --metadata, --seed, --n_boot, --no_analyses."""
    parser = _OneLineParser(
        prog=PROG,
        description="Score ROSE predictions against release metadata "
                    "(same outputs as the public v0.1 evaluator, plus analyses). "
                    f"Use '{PROG} compare EVAL_DIR ...' to compare evaluated runs.",
    )
    parser.add_argument("--predictions", type=Path, required=True,
                        help="predictions JSONL: {item_id, model, raw_text, error} per line; "
                             "or a VLMEvalKit result file (.xlsx or .tsv with a prediction column)")
    parser.add_argument("--dataset_root", type=Path, default=None,
                        help="release folder with metadata_{split}.jsonl or data/{split}.parquet")
    parser.add_argument("--metadata", type=Path, default=None,
                        help="a metadata file anywhere (.jsonl or .parquet); overrides --dataset_root")
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    parser.add_argument("--out_dir", type=Path, required=True)
    parser.add_argument("--allow_partial", action="store_true",
                        help="score only the items that have predictions")
    parser.add_argument("--model", type=str, default="", help="model-name override")
    parser.add_argument("--display_name", type=str, default="",
                        help="display name used in the LaTeX rows")
    parser.add_argument("--digits", type=int, default=1, help="decimals in the LaTeX rows")
    parser.add_argument("--near_miss_l1", type=int, default=1,
                        help="L1 radius for near-miss clicks")
    parser.add_argument("--repo_id", type=str, default=DEFAULT_REPO_ID,
                        help="recorded in the summary only (nothing is downloaded)")
    parser.add_argument("--revision", type=str, default="", help="accepted and ignored")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap analyses")
    parser.add_argument("--n_boot", type=int, default=10000, help="bootstrap resamples")
    parser.add_argument("--no_analyses", action="store_true",
                        help="write only the public evaluator's outputs")
    return parser


def _optional_attr(module_name: str, attr: str) -> Callable[..., Any] | None:
    """module.attr if the module is present, else None (missing modules are optional)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            return None
        raise
    return getattr(module, attr, None)


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
        prediction = dict(predictions[item_id].row)
        prediction.setdefault("model", model)
        parsed = parse_answer(prediction.get("raw_text"), truth.task_mode)
        rows.append(score_parsed(truth, parsed, prediction, near_miss_l1=near_miss_l1))
    return rows


def _run_analyses(eval_rows: list[dict[str, Any]], metadata_rows: list[dict[str, Any]],
                  args: argparse.Namespace) -> dict[str, Any] | None:
    run_analyses = _optional_attr("rose_eval.analyses", "run_analyses")
    if run_analyses is None:
        return None
    try:
        return run_analyses(eval_rows, metadata_rows, seed=args.seed, n_boot=args.n_boot)
    except Exception as exc:  # an analysis bug must not cost the parity outputs
        message = f"{type(exc).__name__}: {exc}".splitlines()[0]
        print(f"{PROG}: warning: analyses failed ({message}); parity outputs are complete",
              file=sys.stderr)
        return {"error": message}


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Load, score, aggregate and write; returns the summary. Raises InputError."""
    if args.digits < 0:
        raise InputError(f"--digits must be >= 0, got {args.digits}", "command line",
                         "pass --digits 1 (the default) or another non-negative number")
    metadata_path = resolve_metadata_path(dataset_root=args.dataset_root,
                                          metadata=args.metadata, split=args.split)
    metadata_records = rows_of_split(read_metadata(metadata_path), args.split)
    metadata = index_by_item_id(metadata_records, role="metadata")

    predictions_path = args.predictions.expanduser().resolve()
    # Harness hook: a VLMEvalKit result file (.xlsx/.tsv) is read as prediction rows.
    prediction_records = (read_result_file(predictions_path) if is_result_file(predictions_path)
                          else read_jsonl(predictions_path, role="predictions"))
    predictions = index_by_item_id(prediction_records, role="predictions")
    model = infer_model((rec.row for rec in prediction_records), args.model, predictions_path)

    matched = metadata.keys() & predictions.keys()
    missing = sorted(metadata.keys() - predictions.keys())
    extra = sorted(predictions.keys() - metadata.keys())
    if missing and not args.allow_partial:
        raise InputError(
            f"{len(missing)} of {len(metadata)} {args.split} items have no prediction "
            f"(first: {', '.join(missing[:3])})", predictions_path,
            "add the missing predictions, or pass --allow_partial to score a partial run")
    if not matched:
        raise InputError(f"no prediction item_id matches the {args.split} metadata",
                         predictions_path,
                         f"check --split and that the predictions belong to {metadata_path}")

    eval_rows = score_records(sorted(matched), metadata, predictions, model=model,
                              near_miss_l1=args.near_miss_l1)
    metadata_rows = [rec.row for rec in metadata_records]
    summary = build_summary(eval_rows, metadata_rows, run={
        "model": model,
        "display_name": display_model_name(model, args.display_name),
        "split": args.split,
        "dataset_repo_id": args.repo_id,
        "metadata_jsonl": str(metadata_path),
        "predictions_jsonl": str(predictions_path),
        "allow_partial": args.allow_partial,
        "num_expected": len(metadata),
        "num_prediction_rows": len(prediction_records),
        "missing_item_ids": missing,
        "extra_item_ids": extra,
    })
    files = render_outputs(eval_rows, summary, digits=args.digits)
    if not args.no_analyses:
        analyses = _run_analyses(eval_rows, metadata_rows, args)
        if analyses is not None:
            summary["analyses"] = analyses
            try:
                files[SUMMARY] = json_bytes(summary)
            except (TypeError, ValueError) as exc:  # e.g. a numpy value left in the result
                message = f"analyses are not JSON-serialisable: {exc}".splitlines()[0]
                print(f"{PROG}: warning: {message}", file=sys.stderr)
                summary["analyses"] = {"error": message}
                files[SUMMARY] = json_bytes(summary)
    out_dir = args.out_dir.expanduser().resolve()
    try:
        write_outputs_atomically(out_dir, files)
    except OSError as exc:
        raise InputError(f"cannot write the outputs: {exc.strerror or exc}", out_dir,
                         "choose a writable --out_dir") from None
    return summary


def print_summary(summary: dict[str, Any], digits: int) -> None:
    """The markdown report when available, else the two LaTeX rows."""
    render_markdown = _optional_attr("rose_eval.report.markdown", "render_markdown")
    if render_markdown is not None:
        try:
            print(render_markdown(summary))
            return
        except Exception as exc:  # the files are written; fall back to the plain rows
            message = f"{type(exc).__name__}: {exc}".splitlines()[0]
            print(f"{PROG}: warning: markdown summary failed ({message})", file=sys.stderr)
    paper = summary["paper_metrics"]
    print(f"ROSE evaluation: {summary['display_name']} ({summary['model']}), "
          f"split {summary['split']}, {summary['coverage']['num_evaluated']} items")
    print("Table 1 row:\n" + table1_row(summary["display_name"], paper["table1"], digits))
    print("Table 2 row:\n" + table2_row(summary["display_name"], paper["table2"], digits))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the rose-eval console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "compare":
        compare_main = _optional_attr("rose_eval.analyses.compare", "main")
        if compare_main is None:
            print(f"{PROG}: error: 'compare' is not available in this installation (command "
                  "line); update rose-toolkit", file=sys.stderr)
            return EXIT_INPUT_ERROR
        return int(compare_main(argv[1:]) or 0)
    if argv and argv[0] == "report":  # the HTML report (rose_eval/report/html.py)
        from rose_eval.report.html import main as report_main

        return report_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        summary = evaluate(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    print_summary(summary, args.digits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
