"""The report's inputs: evaluated runs (summary + per-item records) and the release behind them.

An evaluation folder is what `rose-eval --out_dir` wrote. Its per-item records are read
with `rose-eval compare`'s reader (one error vocabulary for both commands) and its
`evaluation_summary.json` as written. The release (images, prompts, regions) is found
from `--dataset_root`, else from the metadata path the summary records; without it the
report still renders, with a text-only gallery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose_eval.analyses.compare import CompareError, EvaluatedRun, check_same_metadata, load_runs
from rose_eval.io import InputError
from rose_eval.report.tables import SUMMARY
from rose_eval.runners.dataset import DatasetError, resolve_image
from rose_eval.split_rows import SplitFiles, find_split, read_rows, split_of_file

# Where a release keeps the bridge rows (beside metadata_{split}.jsonl).
BRIDGE_METADATA_DIRS: tuple[str, ...] = ("analysis/global_click", "analysis/matched_local_count")


class ReportError(Exception):
    """A user-facing input problem: one line saying what, where and how to fix it."""


@dataclass(frozen=True)
class ReportRun:
    """One evaluated run: its display name, folder, summary and per-item records."""

    name: str
    path: Path
    summary: Mapping[str, Any]
    items: tuple[Mapping[str, Any], ...]
    provenance: Mapping[str, Any] | None = None

    @property
    def evaluated(self) -> EvaluatedRun:
        """The run as `rose-eval compare` sees it."""
        return EvaluatedRun(self.name, self.path, tuple(dict(i) for i in self.items),
                            self.provenance)


def _read_summary(eval_dir: Path) -> dict[str, Any]:
    path = eval_dir / SUMMARY
    if not path.is_file():
        raise ReportError(f"{path}: missing; run `rose-eval ... --out_dir {eval_dir}` first")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: unreadable ({str(exc).splitlines()[0]}); re-create it "
                          "with rose-eval") from None
    if not isinstance(summary, dict):
        raise ReportError(f"{path}: not a JSON object; re-create it with rose-eval")
    return summary


def load_report_runs(eval_dirs: Sequence[Path]) -> list[ReportRun]:
    """Every folder's records and summary; names are display names (unique)."""
    try:
        evaluated = load_runs([d.expanduser().resolve() for d in eval_dirs])
        check_same_metadata(evaluated)
    except CompareError as exc:
        raise ReportError(str(exc)) from None
    runs: list[ReportRun] = []
    taken: set[str] = set()
    for run in evaluated:
        summary = _read_summary(run.path)
        name = str(summary.get("display_name") or run.name)
        if run.not_standard:  # marked in every table of the report
            name = f"{name} [{run.not_standard}]"
        if name in taken:
            name = f"{name} ({run.path.name})"
        taken.add(name)
        runs.append(ReportRun(name, run.path, summary, run.items, run.provenance))
    return runs


@dataclass(frozen=True)
class Release:
    """Metadata rows by item id and the folder their image paths are relative to."""

    root: Path
    rows: Mapping[str, Mapping[str, Any]]

    def row(self, item_id: str) -> Mapping[str, Any] | None:
        return self.rows.get(item_id)

    def image_path(self, row: Mapping[str, Any]) -> Path | None:
        """The row's image inside the release (None when it is missing)."""
        fallback = f"images/{row.get('rose_subset')}/{row.get('image_id')}.png"
        image = row.get("image") if isinstance(row.get("image"), str) else fallback
        try:
            return resolve_image(self.root, {**row, "image": image}, str(self.root))
        except DatasetError:
            return None


def _bridge_files(root: Path, splits: Sequence[str]) -> list[SplitFiles]:
    paths = [root / d / f"metadata_{split}.jsonl" for split in splits for d in BRIDGE_METADATA_DIRS]
    return [split_of_file(path) for path in paths if path.is_file()]


def _recorded_metadata(summary: Mapping[str, Any]) -> tuple[Path, Path] | None:
    """(release root, metadata file) from the summary's recorded metadata path, if it exists."""
    recorded = summary.get("metadata_jsonl")
    if not isinstance(recorded, str) or not recorded:
        return None
    path = Path(recorded)
    if not path.is_file():
        return None
    root = path.parent.parent if path.parent.name == "data" else path.parent
    return root, path


def _rows_of(files: SplitFiles, wanted: AbstractSet[str]) -> list[Mapping[str, Any]]:
    """The metadata rows of ``wanted`` items (the gallery's few dozen)."""
    try:
        return [r.row for r in read_rows(files) if str(r.row.get("item_id")) in wanted]
    except InputError as exc:
        raise ReportError(exc.one_line()) from None


def load_release(dataset_root: Path | None, runs: Sequence[ReportRun],
                 wanted: AbstractSet[str]) -> Release | None:
    """The ``wanted`` rows of the release behind the runs: --dataset_root, else the first
    recorded metadata path (plus the release's bridge rows beside it).

    None when neither is available. A given --dataset_root that is not a release is an error.
    """
    splits = sorted({str(run.summary.get("split") or "test") for run in runs})
    try:
        if dataset_root is not None:
            root = dataset_root.expanduser().resolve()
            if not root.is_dir():
                raise ReportError(f"--dataset_root {root}: not a directory; pass the release "
                                  "folder the runs were evaluated on")
            main = [find_split(root, split) for split in splits]
        else:
            found = [_recorded_metadata(run.summary) for run in runs]
            found = [f for f in found if f is not None]
            if not found:
                return None
            root = found[0][0]
            main = [split_of_file(path) for r, path in found if r == root]
        files = list(dict.fromkeys([*main, *_bridge_files(root, splits)]))
    except InputError as exc:
        raise ReportError(exc.one_line()) from None
    rows: dict[str, Mapping[str, Any]] = {}
    for split_files in files:
        for row in _rows_of(split_files, wanted):
            rows.setdefault(str(row.get("item_id")), row)
    return Release(root, rows)
