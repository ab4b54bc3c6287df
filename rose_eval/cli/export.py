"""``rose-export``: hand a ROSE release to another harness, and its answers back to rose-eval.

    rose-export vlmevalkit RELEASE OUT.tsv [--split test] [--dataset_class rose.py]
                                                              the dataset TSV (and class) for VLMEvalKit
    rose-export lmms-eval RELEASE OUT_DIR                     the task folder for lmms-eval
    rose-export predictions inspect LOG --output PREDS.jsonl
    rose-export predictions lmms-eval SAMPLES... --output PREDS.jsonl
    rose-export predictions vlmevalkit RESULT.xlsx --output PREDS.jsonl

Every file is written atomically with a manifest beside it (``*.manifest.json``) saying
what the harness was given or sent. Bad input prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rose_eval.cli.args import EXIT_USAGE, OneLineParser
from rose_eval.harness.common import (
    BenchmarkChangeError,
    Prediction,
    tool_record,
    write_predictions,
)
from rose_eval.io import InputError
from rose_eval.runners.accounting import identity_warning
from rose_eval.runners.dataset import DatasetError
from rose_eval.runners.predictions import manifest_path_for, write_manifest
from rose_eval.vocab import SPLITS

PROG = "rose-export"
EXIT_INPUT_ERROR = EXIT_USAGE
HARNESSES = ("inspect", "lmms-eval", "vlmevalkit")


def epoch_choice(text: str) -> int | str:
    """An argparse type: an epoch number >= 1, or 'all'."""
    if text.strip().lower() == "all":
        return "all"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an epoch number or 'all', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"epochs count from 1, got {value}")
    return value


def build_parser() -> OneLineParser:
    """The subcommands and flags of rose-export."""
    parser = OneLineParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    vlm = commands.add_parser("vlmevalkit", help="write the VLMEvalKit dataset TSV of one split")
    vlm.add_argument("release", type=Path)
    vlm.add_argument("output", type=Path, help="e.g. ~/LMUData/ROSE_test.tsv")
    vlm.add_argument("--split", choices=SPLITS, default="test")
    vlm.add_argument("--dataset_class", type=Path, default=None,
                     help="also write VLMEvalKit's dataset class here, e.g. VLMEvalKit/vlmeval/dataset/rose.py")
    lmms = commands.add_parser("lmms-eval", help="write the lmms-eval task folder for a release")
    lmms.add_argument("release", type=Path)
    lmms.add_argument("output", type=Path, help="folder to pass to lmms-eval --include_path")
    preds = commands.add_parser("predictions", help="a harness's output -> rose-eval predictions")
    preds.add_argument("harness", choices=HARNESSES)
    preds.add_argument("sources", type=Path, nargs="+",
                       help="inspect: the .eval/.json log; lmms-eval: samples files or their "
                            "folder; vlmevalkit: the result .xlsx/.tsv")
    preds.add_argument("--output", type=Path, required=True, help="predictions JSONL to write")
    preds.add_argument("--model", default="", help="model label (default: from the harness)")
    preds.add_argument("--epoch", type=epoch_choice, default=1,
                       help="inspect: which epoch to convert, or 'all' (rows then carry an epoch field)")
    return parser


def _needs(module: str, extra: str) -> Callable[[], Any]:
    def load() -> Any:
        try:
            return __import__(module, fromlist=["convert"])
        except ModuleNotFoundError as exc:
            raise InputError(f"this needs the Python package {exc.name!r}", "command line",
                             f"pip install 'rose-toolkit[{extra}]'") from None

    return load


def _vlmevalkit_predictions(sources: Sequence[Path], model: str) -> tuple[list[Prediction], dict[str, Any]]:
    from rose_eval.harness.vlmevalkit import WRAPPER_WARNING, read_result_file

    if len(sources) != 1:
        raise InputError("give exactly one VLMEvalKit result file", "command line",
                         "convert one result file per command")
    records = read_result_file(sources[0], warn=lambda _message: None)
    label = model.strip()
    predictions = [Prediction(str(r.row["item_id"]), label or str(r.row.get("model") or sources[0].stem),
                              r.row["raw_text"], r.row["error"]) for r in records]
    failed = sum(1 for p in predictions if p.error)
    return predictions, {"harness": {"name": "VLMEvalKit", "result_file": str(sources[0].resolve())},
                         "sent": {"warning": WRAPPER_WARNING},
                         "notes": [f"{failed} request(s) failed in VLMEvalKit (its 'Failed to obtain "
                                   "answer via API' in place of the prediction): error rows, no "
                                   "raw_text; see counts.errors"]}


def _predictions(args: argparse.Namespace) -> int:
    if args.harness == "inspect":
        if len(args.sources) != 1:
            raise InputError("give exactly one inspect log", "command line", "convert one log per command")
        found, manifest = _needs("rose_eval.harness.inspect_log", "inspect")().convert(
            args.sources[0], model=args.model, epoch=args.epoch)
    elif args.harness == "lmms-eval":
        from rose_eval.harness.lmms_eval_log import convert

        found, manifest = convert(args.sources, model=args.model)
    else:
        found, manifest = _vlmevalkit_predictions(args.sources, args.model)
        print(f"{PROG}: warning: {manifest['sent']['warning']}", file=sys.stderr)
    output = args.output.expanduser().resolve()
    if output.is_dir():
        raise InputError("--output is a folder", output, "name a .jsonl file")
    written = write_predictions(output, found, manifest)
    if (warning := identity_warning(json.loads(written.read_text(encoding="utf-8"))["server"], PROG)) is not None:
        print(warning, file=sys.stderr)
    for change in manifest.get("benchmark_changes") or []:
        print(f"{PROG}: WARNING: benchmark changed: {change}; PASS is not comparable to ROSE",
              file=sys.stderr)
    print(f"{PROG}: {len(found)} predictions -> {output} (manifest {written.name})", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "predictions":
        return _predictions(args)
    if args.command == "vlmevalkit":
        from rose_eval.harness.vlmevalkit import (
            dataset_class_target,
            export_tsv,
            write_dataset_class,
        )

        class_file = None if args.dataset_class is None else dataset_class_target(args.dataset_class)
        manifest = export_tsv(args.release, args.output, args.split)
        if class_file is not None:
            manifest["harness"]["dataset_class_file"] = str(write_dataset_class(class_file))
        target = args.output.expanduser().resolve()
        write_manifest(manifest_path_for(target), {**manifest, "tool": tool_record()})
        print(f"{PROG}: {manifest['dataset']['rows']} rows, {manifest['sent']['images']['count']} "
              f"images -> {target}", file=sys.stderr)
        return 0
    from rose_eval.harness.lmms_eval_task import write_task_folder

    written = write_task_folder(args.release, args.output)
    print(f"{PROG}: {len(written)} files -> {args.output.expanduser().resolve()} "
          "(lmms-eval --include_path that folder --tasks rose_test)", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the rose-export console script; returns the exit status."""
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    try:
        return _run(args)
    except InputError as exc:
        message = exc.one_line()
    except (DatasetError, BenchmarkChangeError) as exc:
        message = " ".join(str(exc).split())
    except OSError as exc:
        message = f"cannot write the output: {exc.strerror or exc} ({exc.filename or 'output'}); " \
                  "choose a writable path"
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_INPUT_ERROR


if __name__ == "__main__":
    sys.exit(main())
