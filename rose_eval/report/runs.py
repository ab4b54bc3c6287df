"""The report's inputs: evaluated runs (summary + per-item records) and the release behind them.

An evaluation folder is what `rose-eval --out_dir` wrote. Its per-item records are read
with `rose-eval compare`'s reader (one error vocabulary for both commands) and its
`evaluation_summary.json` as written. The release (images, prompts, regions) is found
from `--dataset_root`, else from the metadata path the summary records; without it the
report still renders, with a text-only gallery.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose_eval.analyses.compare import CompareError, EvaluatedRun, load_runs
from rose_eval.io import InputError, read_metadata, resolve_metadata_path
from rose_eval.jsonl import UNREADABLE, JsonlFault, json_object, jsonl_lines
from rose_eval.report.tables import SUMMARY
from rose_eval.runners.dataset import DatasetError, resolve_image

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

    @property
    def evaluated(self) -> EvaluatedRun:
        """The run as `rose-eval compare` sees it."""
        return EvaluatedRun(self.name, self.path, tuple(dict(i) for i in self.items))


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
    except CompareError as exc:
        raise ReportError(str(exc)) from None
    runs: list[ReportRun] = []
    taken: set[str] = set()
    for run in evaluated:
        summary = _read_summary(run.path)
        name = str(summary.get("display_name") or run.name)
        if name in taken:
            name = f"{name} ({run.path.name})"
        taken.add(name)
        runs.append(ReportRun(name, run.path, summary, run.items))
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


def _metadata_files(root: Path, split: str) -> list[Path]:
    main = resolve_metadata_path(dataset_root=root, metadata=None, split=split)
    bridges = [root / d / f"metadata_{split}.jsonl" for d in BRIDGE_METADATA_DIRS]
    return [main, *(p for p in bridges if p.is_file())]


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


_ITEM_ID = re.compile(r'"item_id"\s*:\s*(?:"([^"\\]*)"|(-?\d+))')


def _rows_of(path: Path, wanted: AbstractSet[str]) -> list[Mapping[str, Any]]:
    """The metadata rows of ``wanted`` items. A JSONL line is decoded only when its item_id
    is wanted (the gallery needs a few dozen rows of thousands); Parquet is read whole."""
    if path.suffix.lower() == ".parquet":
        try:
            return [r.row for r in read_metadata(path) if str(r.row.get("item_id")) in wanted]
        except InputError as exc:
            raise ReportError(exc.one_line()) from None
    rows = []
    try:
        for line_no, line in jsonl_lines(path):
            found = _ITEM_ID.search(line)
            if found is None or (found.group(1) or found.group(2)) not in wanted:
                continue
            row = json_object(path, line_no, line)
            if str(row.get("item_id")) in wanted:
                rows.append(row)
    except JsonlFault as fault:
        fix = ("point --dataset_root at the release the runs were evaluated on" if fault.kind == UNREADABLE
               else "fix or regenerate the release")
        raise ReportError(f"{fault}; {fix}") from None
    return rows


def load_release(dataset_root: Path | None, runs: Sequence[ReportRun],
                 wanted: AbstractSet[str]) -> Release | None:
    """The ``wanted`` rows of the release behind the runs: --dataset_root, else the first
    recorded metadata path (plus the release's bridge rows beside it).

    None when neither is available. A given --dataset_root that is not a release is an error.
    """
    splits = sorted({str(run.summary.get("split") or "test") for run in runs})
    files: list[Path] = []
    if dataset_root is not None:
        root = dataset_root.expanduser().resolve()
        if not root.is_dir():
            raise ReportError(f"--dataset_root {root}: not a directory; pass the release folder "
                              "the runs were evaluated on")
        try:
            for split in splits:
                files += _metadata_files(root, split)
        except InputError as exc:
            raise ReportError(exc.one_line()) from None
    else:
        found = [_recorded_metadata(run.summary) for run in runs]
        found = [f for f in found if f is not None]
        if not found:
            return None
        root = found[0][0]
        bridges = [root / d / f"metadata_{s}.jsonl" for s in splits for d in BRIDGE_METADATA_DIRS]
        files = list(dict.fromkeys([*(path for r, path in found if r == root),
                                    *(p for p in bridges if p.is_file())]))
    rows: dict[str, Mapping[str, Any]] = {}
    for path in files:
        for row in _rows_of(path, wanted):
            rows.setdefault(str(row.get("item_id")), row)
    return Release(root, rows)
