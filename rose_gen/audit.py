"""Release audit: what a release's pairs look like, read back from its rows and images.

Per subset:

- ``similarity``: the distribution (min, p10, median, p90, max) of the sources' own pair
  similarity where rows carry it (``similarity``), the rule's similarity tiers, and the
  *measured* similarity of every exception cell to its scene's majority (SSIM and changed
  fraction of :func:`rose_gen.visibility.tile_difference`), so subsets without a numeric
  similarity are comparable too.
- ``distinct``: pairs, characters, faces, vendors and sprites used; ``reused``: scenes
  minus distinct pairs.
- ``flagged``: every exception cell at or below the visibility threshold against its
  scene's majority (:func:`rose_gen.visibility.is_visible` fails against the median
  majority cell, or against the most similar of ``NEAREST_SAMPLE`` evenly spread majority
  cells, each aligned to the exception by the best integer shift within the preset's
  jitter range: under jitter the median is blurred, the nearest aligned copy is not). Must be zero for a
  ``standard`` release. ``majority_spread`` (sampled majority cells against the median)
  is the noise floor the exception differences should be read against.
- ``majority_mismatch``: scenes whose majority cells are not pixel-identical. Only a
  ``standard`` release promises identical majorities (presets with jitter or degradation
  do not), so the check runs on standard scenes only.

Cells are cut from each scene's base image (the T1 row's image); the majority reference
is the per-pixel median of the scene's majority cells. Pure functions over arrays, I/O
only in :func:`audit_release`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_eval.jsonl import iter_jsonl_objects
from rose_eval.vocab import SPLITS, ordered_subsets
from rose_gen.presets import ROW_FIELD
from rose_gen.visibility import is_visible, luminance, tile_difference

AUDIT_FILE = "audit.json"


def default_audit_path(root: Path) -> Path:
    """Where ``rose-audit`` writes its record by default: beside the release, never inside it
    (a release's files are exactly those its export_summary lists, so rose-verify stays green)."""
    return root.parent / f"{root.name}.{AUDIT_FILE}"
SCENE_TEMPLATE = "T1_COUNT_GLOBAL"  # its image is the scene's base image
NEAREST_SAMPLE = 8  # majority cells (evenly spread) each exception is also compared with
PAIR_KEYS = ("undirected_pair_key", "pair_key", "unicode_key")
CHAR_FIELDS = ("background_char", "target_char")
SPRITE_FIELDS = ("background_sprite", "target_sprite")
VENDOR_FIELDS = ("majority_style", "target_style")
PATH_FIELDS = ("background_path", "target_path")


class AuditError(RuntimeError):
    """The release cannot be audited (one-line message: what, where, how to fix)."""


@dataclass(frozen=True)
class CellCheck:
    """One exception cell measured against its scene's majority."""

    scene_id: str
    cell: tuple[int, int]
    changed_fraction: float
    ssim: float
    visible: bool  # visible against the median majority cell and against the nearest sampled one
    nearest_changed_fraction: float = 0.0


@dataclass
class SceneAudit:
    """One scene's measurements."""

    scene_id: str
    subset: str
    preset: str
    cells: list[CellCheck] = field(default_factory=list)
    majority_identical: bool | None = None  # None: not checked (not a standard scene)
    majority_spread: list[float] = field(default_factory=list)  # sampled majority cells vs the median


def cut_cells(image: np.ndarray, rows: int, cols: int, cell: int) -> np.ndarray:
    """(rows, cols, cell, cell, 3) view of a grid image."""
    if image.shape[0] != rows * cell or image.shape[1] != cols * cell:
        raise ValueError(f"image is {image.shape[1]}x{image.shape[0]}, rows say {cols * cell}x{rows * cell}")
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def audit_scene(image: np.ndarray, row: Mapping[str, Any]) -> SceneAudit:
    """Measure every exception cell of one scene against the median majority cell."""
    rows, cols, cell = int(row["rows"]), int(row["cols"]), int(row["cell_size"])
    cells = cut_cells(image, rows, cols, cell)
    mask = np.zeros((rows, cols), dtype=bool)
    for r, c in row["target_cells"]:
        mask[int(r) - 1, int(c) - 1] = True
    majority_cells = cells[~mask]
    reference = np.median(majority_cells, axis=0).round().astype(np.uint8)
    preset = preset_name(row)
    audit = SceneAudit(scene_id=row["scene_id"], subset=row["rose_subset"], preset=preset)
    if preset == "standard":
        audit.majority_identical = bool((majority_cells == majority_cells[:1]).all())
    picks = np.linspace(0, len(majority_cells) - 1, min(NEAREST_SAMPLE, len(majority_cells))).round().astype(int)
    sample = majority_cells[np.unique(picks)]
    audit.majority_spread = [round(tile_difference(reference, m).changed_fraction, 6) for m in sample]
    for r, c in row["target_cells"]:
        tile = cells[int(r) - 1, int(c) - 1]
        diff = tile_difference(reference, tile)
        shift = jitter_shift_px(row)
        nearest = min((tile_difference(*aligned(m, tile, shift)) for m in sample), key=lambda d: d.changed_fraction)
        audit.cells.append(CellCheck(row["scene_id"], (int(r), int(c)), round(diff.changed_fraction, 6),
                                     round(diff.ssim, 6), is_visible(diff) and is_visible(nearest),
                                     round(nearest.changed_fraction, 6)))
    return audit


def jitter_shift_px(row: Mapping[str, Any]) -> int:
    """Largest per-cell content shift (px) the row's preset record allows (0 without jitter)."""
    record = row.get(ROW_FIELD)
    jitter = record.get("jitter") if isinstance(record, Mapping) else None
    if not jitter or not jitter.get("max_offset"):
        return 0
    return int(round(float(jitter["max_offset"]) * int(row["cell_size"]))) * 2


def aligned(a: np.ndarray, b: np.ndarray, max_shift: int) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` cropped to their overlap at the integer shift (|dx|, |dy| <= max_shift)
    that minimises their mean absolute luminance difference; unchanged when ``max_shift`` is 0.

    Jittered cells are shifted copies; comparing them unaligned measures the jitter, not
    the content. (Scale jitter is not undone; it stays in the noise floor.)
    """
    if max_shift <= 0:
        return a, b
    la, lb = luminance(a), luminance(b)
    n = la.shape[0]
    best, best_cost = (0, 0), np.inf
    for dy in range(-max_shift, max_shift + 1):
        for dx in range(-max_shift, max_shift + 1):
            pa = la[max(dy, 0):n + min(dy, 0), max(dx, 0):n + min(dx, 0)]
            pb = lb[max(-dy, 0):n + min(-dy, 0), max(-dx, 0):n + min(-dx, 0)]
            cost = float(np.abs(pa - pb).mean())
            if cost < best_cost:
                best, best_cost = (dy, dx), cost
    dy, dx = best
    return (a[max(dy, 0):n + min(dy, 0), max(dx, 0):n + min(dx, 0)],
            b[max(-dy, 0):n + min(-dy, 0), max(-dx, 0):n + min(-dx, 0)])


def preset_name(row: Mapping[str, Any]) -> str:
    """The row's difficulty preset (rows without the record are standard)."""
    record = row.get(ROW_FIELD)
    return str(record.get("name", "standard")) if isinstance(record, Mapping) else "standard"


def quantiles(values: Iterable[float]) -> dict[str, float] | None:
    """min, p10, median, p90, max (rounded), or None for no values."""
    arr = np.asarray([float(v) for v in values], dtype=float)
    if arr.size == 0:
        return None
    qs = np.quantile(arr, [0.0, 0.1, 0.5, 0.9, 1.0])
    return {k: round(float(v), 4) for k, v in zip(("min", "p10", "median", "p90", "max"), qs, strict=True)}


def _pair_key(row: Mapping[str, Any]) -> str:
    for key in PAIR_KEYS:
        if row.get(key):
            return str(row[key])
    return "|".join(sorted(str(row.get(k, "")) for k in ("background_char", "target_char")))


def _vendor(path: str) -> str:
    head = path.split("/")[0]
    return head.split("_")[0] if head != "usr" else Path(path.split("#")[0]).stem.split("Color")[0].lower()


def subset_summary(scene_rows: Sequence[Mapping[str, Any]], audits: Sequence[SceneAudit]) -> dict[str, Any]:
    """The audit record of one subset from its scenes' T1 rows and measurements."""
    pairs = Counter(_pair_key(r) for r in scene_rows)
    chars = {r[k] for r in scene_rows for k in CHAR_FIELDS if r.get(k)}
    faces = {r["font_name"] for r in scene_rows if r.get("font_name")}
    vendors = {r[k] for r in scene_rows for k in VENDOR_FIELDS if r.get(k)}
    vendors |= {_vendor(r[k]) for r in scene_rows for k in PATH_FIELDS if r.get(k) and not r.get("majority_style")}
    sprites = {r[k] for r in scene_rows for k in SPRITE_FIELDS if r.get(k)}
    sprites |= {r["pair_key"] for r in scene_rows if r.get("sprite_source") and not r.get("background_sprite")}
    seconds = [str(r[ROW_FIELD]["second_target"]) for r in scene_rows
               if isinstance(r.get(ROW_FIELD), Mapping) and r[ROW_FIELD].get("second_target")]
    cells = [c for a in audits for c in a.cells]
    flagged = [c for c in cells if not c.visible]
    checked = [a for a in audits if a.majority_identical is not None]
    tiers = Counter(str((r.get("difficulty_inputs") or {}).get("similarity_tier", "unknown")) for r in scene_rows)
    presets = Counter(a.preset for a in audits)
    return {
        "scenes": len(scene_rows),
        "presets": dict(sorted(presets.items())),
        "exceptions": len(cells),
        "similarity": {
            "source": quantiles(r["similarity"] for r in scene_rows if isinstance(r.get("similarity"), (int, float))),
            "tiers": dict(sorted(tiers.items())),
            "measured_ssim": quantiles(c.ssim for c in cells),
            "measured_changed_fraction": quantiles(c.changed_fraction for c in cells),
            "nearest_majority_changed_fraction": quantiles(c.nearest_changed_fraction for c in cells),
            "majority_spread_changed_fraction": quantiles(v for a in audits for v in a.majority_spread),
        },
        "distinct": {"pairs": len(pairs), "chars": len(chars), "faces": len(faces), "vendors": len(vendors),
                     "sprites": len(sprites)},
        "second_identity_scenes": len(seconds),
        "reused": len(scene_rows) - len(pairs),
        "max_pair_uses": max(pairs.values(), default=0),
        "flagged": len(flagged),
        "flagged_cells": [{"scene_id": c.scene_id, "cell": list(c.cell), "changed_fraction": c.changed_fraction,
                           "ssim": c.ssim, "nearest_changed_fraction": c.nearest_changed_fraction}
                          for c in flagged],
        "majority_checked_scenes": len(checked),
        "majority_mismatch": sorted(a.scene_id for a in checked if not a.majority_identical),
    }


def read_release_rows(root: Path) -> list[dict[str, Any]]:
    """Every main task row of a release folder (dev, then test); AuditError (one line) when there are none."""
    rows: list[dict[str, Any]] = []
    found = False
    for split in SPLITS:
        path = root / f"metadata_{split}.jsonl"
        if not path.is_file():
            continue
        found = True
        rows += [row for _, row in iter_jsonl_objects(path, AuditError, "regenerate the release")]
    if not found:
        raise AuditError(f"{root}: no metadata_dev.jsonl or metadata_test.jsonl; pass a release folder")
    return rows


_NEEDED = ("scene_id", "rose_subset", "image", "rows", "cols", "cell_size", "target_cells")


def scene_rows_of(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per scene (its T1 row), in release order; raises AuditError on missing fields."""
    out = []
    for row in rows:
        if row.get("task_template") != SCENE_TEMPLATE:
            continue
        missing = [k for k in _NEEDED if k not in row]
        if missing:
            raise AuditError(f"row {row.get('item_id', '?')}: missing field(s) {', '.join(missing)}; "
                             "not a ROSE release row")
        out.append(row)
    return out


def audit_release(root: Path) -> dict[str, Any]:
    """Audit the release at ``root``: the JSON-safe record written to ``audit.json``."""
    root = Path(root)
    if not root.is_dir():
        raise AuditError(f"{root} is not a directory; pass a release folder")
    scenes = scene_rows_of(read_release_rows(root))
    if not scenes:
        raise AuditError(f"{root}: no {SCENE_TEMPLATE} rows; nothing to audit")
    by_subset: dict[str, list[Mapping[str, Any]]] = {}
    audits: dict[str, list[SceneAudit]] = {}
    for row in scenes:
        path = root / row["image"]
        try:
            with Image.open(path) as im:
                image = np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as exc:
            raise AuditError(f"{path}: cannot read the scene image ({exc}); re-export the release") from None
        try:
            scene = audit_scene(image, row)
        except ValueError as exc:
            raise AuditError(f"{path}: {exc}") from None
        by_subset.setdefault(row["rose_subset"], []).append(row)
        audits.setdefault(row["rose_subset"], []).append(scene)
    order = ordered_subsets(by_subset)
    subsets = {s: subset_summary(by_subset[s], audits[s]) for s in order}
    standard_flagged = sum(1 for s in order for a in audits[s] if a.preset == "standard"
                           for c in a.cells if not c.visible)
    mismatched = sum(len(v["majority_mismatch"]) for v in subsets.values())
    return {
        "release": root.name,
        "scenes": len(scenes),
        "subsets": subsets,
        "standard_flagged": standard_flagged,
        "standard_majority_mismatch": mismatched,
        "ok": standard_flagged == 0 and mismatched == 0,
    }


def audit_table(record: Mapping[str, Any]) -> str:
    """A plain-text table of an audit record (one line per subset)."""
    head = (f"{'subset':<20} {'preset':<9} {'scenes':>6} {'pairs':>5} {'reused':>6} {'exc':>4} "
            f"{'flagged':>7} {'min chg':>8} {'min near':>8} {'maj p90':>8} {'max ssim':>8} {'src sim p50':>11}")
    lines = [head, "-" * len(head)]
    for name, s in record["subsets"].items():
        chg = s["similarity"]["measured_changed_fraction"] or {}
        ssim = s["similarity"]["measured_ssim"] or {}
        src = s["similarity"]["source"] or {}
        near = s["similarity"]["nearest_majority_changed_fraction"] or {}
        spread = s["similarity"]["majority_spread_changed_fraction"] or {}
        preset = ",".join(s["presets"])
        lines.append(f"{name:<20} {preset:<9} {s['scenes']:>6} {s['distinct']['pairs']:>5} {s['reused']:>6} "
                     f"{s['exceptions']:>4} {s['flagged']:>7} {chg.get('min', float('nan')):>8.4f} "
                     f"{near.get('min', float('nan')):>8.4f} {spread.get('p90', float('nan')):>8.4f} "
                     f"{ssim.get('max', float('nan')):>8.4f} "
                     f"{src['median'] if src else '-':>11}")
    return "\n".join(lines)
