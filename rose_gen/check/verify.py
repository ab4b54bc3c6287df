"""Release self-check: files against their recorded sha256, rows against a re-derivation from
the recorded config, invariants every row must satisfy, image sizes, and (optionally)
re-rendered images against the recorded hashes.

Every problem is one line. When re-derived rows or re-rendered images differ, the report
says why when it can: the sources' asset checksums changed, or the renderer/library
versions did (both are recorded in ``export_summary.json``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_eval.formal import formal_answer
from rose_eval.jsonl import iter_jsonl_objects
from rose_eval.vocab import SPLITS
from rose_gen.release.export import BRIDGE_DIRS
from rose_gen.release.folder import (
    SUMMARY_FILE,
    ReleaseError,
    read_summary,
    release_files,
    sha256_path,
)

RERENDER_MODES: tuple[str, ...] = ("none", "sample", "all")
@dataclass
class VerifyReport:
    """What a verification found: problems (one line each) and what was checked."""

    problems: list[str] = field(default_factory=list)
    files: int = 0
    rows: int = 0
    images: int = 0
    rerendered: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


# -- invariants (independent of the generator's row code) ----------------------------------


def region_cells(region_type: str, params: Mapping[str, Any], rows: int, cols: int) -> np.ndarray:
    """Boolean (rows, cols) mask of a region; raises ValueError for an unknown shape."""
    mask = np.zeros((rows, cols), dtype=bool)
    if region_type == "GLOBAL":
        mask[:] = True
    elif region_type == "ROW_RANGE":
        mask[params["r1"] - 1:params["r2"], :] = True
    elif region_type == "COL_RANGE":
        mask[:, params["c1"] - 1:params["c2"]] = True
    elif region_type in ("RECTANGLE", "VISUAL_REGION"):
        mask[params["r1"] - 1:params["r2"], params["c1"] - 1:params["c2"]] = True
    elif region_type == "EXCLUSION":
        mask = ~region_cells(params["exclude_type"], params["exclude_params"], rows, cols)
    else:
        raise ValueError(f"unknown region_type {region_type!r}")
    return mask


def _label(r: int, c: int) -> str:
    return f"R{r},C{c}"


def row_problems(row: Mapping[str, Any]) -> list[str]:
    """Invariant violations of one task row (empty when consistent)."""
    out: list[str] = []
    rows, cols, cell = row["rows"], row["cols"], row["cell_size"]
    targets = [tuple(t) for t in row["target_cells"]]
    if any(not (1 <= r <= rows and 1 <= c <= cols) for r, c in targets) or len(set(targets)) != len(targets):
        return ["target_cells lie outside the grid or repeat"]
    if 2 * len(targets) >= rows * cols:
        out.append("exceptions are not a minority of the cells")
    target_mask = np.zeros((rows, cols), dtype=bool)
    for r, c in targets:
        target_mask[r - 1, c - 1] = True
    try:
        inside = region_cells(row["region_type"], row["region_params"], rows, cols)
    except (KeyError, TypeError, ValueError) as exc:
        return [f"region {row['region_type']} {row['region_params']} is malformed ({exc})"]
    all_labels = [_label(int(r) + 1, int(c) + 1) for r, c in zip(*np.nonzero(target_mask), strict=True)]
    gt_cells = [(int(r) + 1, int(c) + 1) for r, c in zip(*np.nonzero(target_mask & inside), strict=True)]
    gt = [_label(r, c) for r, c in gt_cells]
    checks = {
        "all_target_cells": (row["all_target_cells"], all_labels),
        "region_target_cells": (row["region_target_cells"], gt),
        "ground_truth_clicks": (row["ground_truth_clicks"], gt),
        "ground_truth_count": (row["ground_truth_count"], len(gt)),
        "region_target_count": (row["region_target_count"], len(gt)),
        "global_target_count": (row["global_target_count"], len(all_labels)),
        "region_cell_count": (row["region_cell_count"], int(inside.sum())),
        "region_non_target_count": (row["region_non_target_count"], int(inside.sum()) - len(gt)),
        "num_out_region_targets": (row["num_out_region_targets"], len(all_labels) - len(gt)),
        "region_ratio": (row["region_ratio"], round(int(inside.sum()) / (rows * cols), 6)),
        "ground_truth_formal_answer": (row["ground_truth_formal_answer"], formal_answer(row["task_mode"], gt_cells, count=len(gt_cells))),
        "answer": (row["answer"], row["ground_truth_formal_answer"]),
        "prompt": (row["prompt"], row["prompt_global"] + "\n" + row["prompt_local"]),
        "image_width": (row["image_width"], cols * cell),
        "image_height": (row["image_height"], rows * cell),
        "image": (row["image"], f"images/{row['rose_subset']}/{row['image_id']}.png"),
    }
    for name, (got, want) in checks.items():
        if got != want:
            out.append(f"{name} is {got!r}, expected {want!r}")
    case = row["region_case"]
    got_case = "zero" if not gt else "all" if len(gt) == len(all_labels) else "partial"
    label = case.split("_")[1] if case.startswith("fallback_") else case
    if label != got_case:
        out.append(f"region_case {case!r} but the region holds {len(gt)} of {len(all_labels)} targets ({got_case})")
    return out


# -- verification ------------------------------------------------------------------------


class _UnreadableRows(ValueError):
    """A metadata file of the release cannot be read as JSONL objects."""


def _jsonl(path: Path, report: VerifyReport) -> list[dict[str, Any]]:
    """The file's rows; a fault (bad bytes, bad JSON, a non-object line) is one problem, and
    the file then counts as holding no rows (so the row checks report it too, without crashing)."""
    if not path.is_file():
        return []
    try:
        return [row for _, row in iter_jsonl_objects(path, _UnreadableRows, "re-export the release")]
    except _UnreadableRows as exc:
        report.problems.append(str(exc))
        return []


def _check_files(root: Path, summary: Mapping[str, Any], report: VerifyReport) -> None:
    recorded: Mapping[str, str] = summary.get("files", {})
    present = set(release_files(root))
    for rel in sorted(recorded):
        if rel not in present:
            report.problems.append(f"{rel}: listed in {SUMMARY_FILE} but missing")
        elif sha256_path(root / rel) != recorded[rel]:
            report.problems.append(f"{rel}: sha256 differs from {SUMMARY_FILE} (the file changed after export)")
    for rel in sorted(present - set(recorded)):
        report.problems.append(f"{rel}: not listed in {SUMMARY_FILE}")
    report.files = len(recorded)


def _check_rows(root: Path, report: VerifyReport) -> dict[str, list[dict[str, Any]]]:
    main: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        name = f"metadata_{split}.jsonl"
        main[split] = _jsonl(root / name, report)
        files = [(name, main[split])] + [
            (f"{folder}/metadata_{split}.jsonl", _jsonl(root / folder / f"metadata_{split}.jsonl", report))
            for folder in BRIDGE_DIRS.values()]
        for fname, rows in files:
            for n, row in enumerate(rows, 1):
                if row.get("split") != split:
                    report.problems.append(f"{fname} line {n} ({row.get('item_id')}): split is {row.get('split')!r}")
                try:
                    found = row_problems(row)
                except (KeyError, TypeError) as exc:
                    found = [f"missing or mistyped field {exc}"]
                report.problems += [f"{fname} line {n} ({row.get('item_id')}): {p}" for p in found]
            report.rows += len(rows)
    return main


def _check_images(root: Path, main: Mapping[str, list[dict[str, Any]]], report: VerifyReport) -> None:
    seen: dict[str, tuple[int, int]] = {}
    for rows in main.values():
        for row in rows:
            seen.setdefault(row["image"], (row["image_width"], row["image_height"]))
    for rel, size in sorted(seen.items()):
        path = root / rel
        if not path.is_file():
            report.problems.append(f"{rel}: image named by rows is missing")
            continue
        try:
            with Image.open(path) as im:
                got = im.size
                fmt = im.format
        except OSError as exc:
            report.problems.append(f"{rel}: not a readable image ({exc})")
            continue
        if fmt != "PNG" or got != size:
            report.problems.append(f"{rel}: {fmt} {got[0]}x{got[1]}, rows say PNG {size[0]}x{size[1]}")
    report.images = len(seen)


def _changes(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    return [f"{k} {recorded.get(k)} -> {current.get(k)}" for k in sorted(set(recorded) | set(current))
            if recorded.get(k) != current.get(k)]


def explain(summary: Mapping[str, Any], uses: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """Why regenerated bytes may differ: changed asset checksums, changed versions, or neither."""
    from rose_gen.release.provenance import library_versions, source_assets

    current_assets = source_assets(uses)
    names = sorted(current_assets)
    recorded_assets = summary.get("assets", {})
    changed = []
    for name in names:
        before, now = recorded_assets.get(name, {}), current_assets.get(name, {})
        diff = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if diff:
            changed.append(f"{name}: {len(diff)} asset file(s) differ, e.g. {diff[0]}")
    if changed:
        return "asset checksums changed (" + "; ".join(changed) + ")"
    versions = _changes(summary.get("versions", {}), library_versions())
    if versions:
        return "renderer/library versions changed (" + ", ".join(versions) + ")"
    return "assets and versions are as recorded, so the generator is not reproducible here (please report)"


def _rederive(root: Path, summary: Mapping[str, Any], main: Mapping[str, list[dict[str, Any]]],
              report: VerifyReport, rerender: str) -> None:
    from rose_eval.registry import RegistryError
    from rose_gen.release.config import ConfigError, config_from_recorded
    from rose_gen.release.pipeline import PluginError, plan_release, process_scene, scene_rows
    from rose_gen.release.provenance import source_uses
    from rose_gen.scene.plan import PlanError
    from rose_gen.sources import AssetError

    try:
        config = config_from_recorded(dict(summary.get("config", {})))
        scenes = plan_release(config)
    except (ConfigError, PlanError, PluginError, RegistryError, AssetError) as exc:
        report.problems.append(f"cannot re-derive the release from its recorded config: {exc}")
        return
    sources = source_uses(config.plans, {s.source for s in scenes})
    want_main: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    want_bridges: dict[str, dict[str, list[dict[str, Any]]]] = {t: {s: [] for s in SPLITS} for t in BRIDGE_DIRS}
    for scene in scenes:
        rows = scene_rows(scene, config.render.cue)
        want_main[scene.split] += rows.main
        for template, brows in rows.bridges.items():
            want_bridges[template][scene.split] += brows
    mismatched = 0
    for split in SPLITS:
        pairs = [(f"metadata_{split}.jsonl", main[split], want_main[split])]
        if config.export.bridges:
            pairs += [(f"{folder}/metadata_{split}.jsonl", _jsonl(root / folder / f"metadata_{split}.jsonl", report),
                       want_bridges[t][split]) for t, folder in BRIDGE_DIRS.items()]
        for fname, got, want in pairs:
            if len(got) != len(want):
                report.problems.append(f"{fname}: {len(got)} rows, the recorded config gives {len(want)}")
                mismatched += 1
                continue
            for n, (g, w) in enumerate(zip(got, want, strict=True), 1):
                if g != w:
                    keys = sorted(k for k in set(g) | set(w) if g.get(k) != w.get(k))
                    report.problems.append(f"{fname} line {n} ({g.get('item_id')}): differs from the re-derived "
                                           f"row in {', '.join(keys[:5])}")
                    mismatched += 1
                    break
    if mismatched:
        report.problems.append(f"re-derived rows differ: {explain(summary, sources)}")
    if rerender == "none":
        return
    picked = scenes if rerender == "all" else _sample(scenes)
    recorded = summary.get("files", {})
    bad = 0
    for scene in picked:
        result = process_scene(scene, config.render)
        for rel, data in result.images.items():
            if recorded.get(rel) != _sha(data):
                report.problems.append(f"{rel}: re-rendered image differs from the recorded sha256")
                bad += 1
        report.rerendered += 1
    if bad:
        report.problems.append(f"re-rendered images differ: {explain(summary, sources)}")


def _sample(scenes: Sequence[Any]) -> list[Any]:
    """First and last scene of every subset."""
    by_subset: dict[str, list[Any]] = {}
    for s in scenes:
        by_subset.setdefault(s.subset, []).append(s)
    return [group[i] for group in by_subset.values() for i in sorted({0, len(group) - 1})]


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def verify_release(root: Path, *, rerender: str = "sample", rederive: bool = True) -> VerifyReport:
    """Check a release; the report lists every problem found (one line each)."""
    if rerender not in RERENDER_MODES:
        raise ValueError(f"rerender must be one of {', '.join(RERENDER_MODES)}")
    root = Path(root)
    if not root.is_dir():
        raise ReleaseError(f"{root} is not a directory")
    summary = read_summary(root)
    if summary is None:
        raise ReleaseError(f"{root} has no {SUMMARY_FILE}; it is not a ROSE release")
    report = VerifyReport()
    _check_files(root, summary, report)
    main = _check_rows(root, report)
    _check_images(root, main, report)
    _check_parquet(root, main, report)
    if rederive:
        _rederive(root, summary, main, report, rerender)
    return report


def _check_parquet(root: Path, main: Mapping[str, list[dict[str, Any]]], report: VerifyReport) -> None:
    import pyarrow.parquet as pq

    for split in SPLITS:  # data/<split>.parquet, or Hugging Face-style data/<split>-00000-of-0000n.parquet files
        paths = sorted((root / "data").glob(f"{split}-*-of-*.parquet")) or [root / "data" / f"{split}.parquet"]
        if not paths[0].is_file():
            continue
        ids = [i for path in paths for i in pq.read_table(path, columns=["item_id"]).column("item_id").to_pylist()]
        if ids != [r["item_id"] for r in main[split]]:
            names = ", ".join(p.relative_to(root).as_posix() for p in paths)
            report.problems.append(f"{names}: item ids differ from metadata_{split}.jsonl")


def iter_lines(report: VerifyReport, limit: int = 50) -> Iterator[str]:
    """Problem lines, at most ``limit`` and a count of the rest."""
    yield from report.problems[:limit]
    if len(report.problems) > limit:
        yield f"... and {len(report.problems) - limit} more problems"
