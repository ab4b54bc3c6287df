"""Release audit: what a release's pairs look like, read back from its rows and images.

Per subset:

- ``similarity``: the distribution (min, p10, median, p90, max) of the sources' own pair
  similarity where rows carry it (``similarity``), the rule's similarity tiers, and the
  *measured* similarity of every exception cell to its scene's majority (SSIM and changed
  fraction of :func:`rose_gen.assets.visibility.tile_difference`), so subsets without a numeric
  similarity are comparable too.
- ``distinct``: pairs, characters, faces, vendors and sprites used; ``reused``: scenes
  minus distinct pairs.
- ``flagged``: every exception cell that :func:`rose_gen.assets.visibility.scene_visibility`
  calls invisible (luminance and chroma, against the median majority cell and against
  sampled majority cells aligned within the preset's jitter range): the very check the
  generator applies to every drawn scene, so it must be zero for every preset.
  ``majority_spread`` (sampled majority cells against the median) is the noise floor
  the exception differences should be read against.
- ``imperceptible``: every exception cell that fails the perceptibility rule
  (:func:`rose_gen.assets.perceptibility.judge_scene`: it must stand out from the scene's
  own majority-to-majority variation by the rule's margin), the second rule the generator
  applies to every drawn scene, so it too must be zero for every preset;
  ``perceptibility_ratio`` gives the distribution of the exceptions' ratios.
- ``majority_mismatch``: scenes whose majority cells are not pixel-identical;
  ``exception_cells_mismatch``: scenes where the cells that differ from the majority are
  not exactly the rows' ``target_cells``. Only a ``standard`` release promises identical
  majorities (presets with jitter or degradation do not), so these run on standard scenes.
- ``shortcuts`` (:mod:`rose_gen.assets.shortcuts`): how an exception could be found without a
  careful look (art-box size, pop-out, off-palette edits, colour-only pairs, composite
  tiles, lightness shift), per subset and per vendor direction (``by_direction``), and
  where the exceptions lie (``position``). ``standard_limits_broken`` lists the documented
  limits (:data:`rose_gen.assets.shortcuts.STANDARD_LIMITS`) the standard scenes exceed.

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
from rose_gen.assets import perceptibility
from rose_gen.assets import shortcuts as sc
from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.visibility import aligned, scene_visibility
from rose_gen.check.guessability import guessability
from rose_gen.render.compose import tile_margin
from rose_gen.render.degrade import placements_of
from rose_gen.scene.presets import ROW_FIELD

AUDIT_FILE = "audit.json"


def default_audit_path(root: Path) -> Path:
    """Where ``rose-audit`` writes its record by default: beside the release, never inside it
    (a release's files are exactly those its export_summary lists, so rose-verify stays green)."""
    return root.parent / f"{root.name}.{AUDIT_FILE}"
SCENE_TEMPLATE = "T1_COUNT_GLOBAL"  # its image is the scene's base image
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
    visible: bool  # visible against the median majority cell and against every sampled one
    nearest_changed_fraction: float = 0.0
    chroma_changed_fraction: float = 0.0  # the smaller of the two comparisons
    perceptible: bool = True  # stands out from the majority's own variation (perceptibility rule)
    perceptibility_ratio: float | None = None  # distance / majority noise (None: identical majority cells)


@dataclass
class SceneAudit:
    """One scene's measurements."""

    scene_id: str
    subset: str
    preset: str
    cells: list[CellCheck] = field(default_factory=list)
    majority_identical: bool | None = None  # None: not checked (not a standard scene)
    majority_spread: list[float] = field(default_factory=list)  # sampled majority cells vs the median
    exceptions_match: bool | None = None  # standard: the cells that differ are exactly target_cells
    shortcuts: sc.SceneShortcuts | None = None


def audit_scene(image: np.ndarray, row: Mapping[str, Any]) -> SceneAudit:
    """Measure every exception cell of one scene against its majority.

    Visibility: :func:`rose_gen.assets.visibility.scene_visibility` (the generator's own check),
    with the row's recorded jitter undone. Shortcuts (:mod:`rose_gen.assets.shortcuts`): on those
    same cells, against the nearest sampled majority cell.
    """
    rows, cols, cell = int(row["rows"]), int(row["cols"]), int(row["cell_size"])
    record = row.get(ROW_FIELD)
    jitter = record.get("jitter") if isinstance(record, Mapping) else None
    placements = placements_of(rows, cols, cell, jitter)
    seen = scene_visibility(image, rows, cols, cell, row["target_cells"], placements=placements)
    judged = {c.cell: c for c in perceptibility.judge_scene(image, rows, cols, cell, row["target_cells"],
                                                            placements).cells}
    cells = seen.cells_seen  # under jitter: every cell mapped back onto the whole cell
    mask = np.zeros((rows, cols), dtype=bool)
    for r, c in row["target_cells"]:
        mask[int(r) - 1, int(c) - 1] = True
    majority_cells = cells[~mask]
    preset = preset_name(row)
    audit = SceneAudit(scene_id=row["scene_id"], subset=row["rose_subset"], preset=preset)
    if preset == "standard":
        audit.majority_identical = bool((majority_cells == majority_cells[:1]).all())
        differing = ~(cells == majority_cells[:1]).all(axis=(2, 3, 4))
        audit.exceptions_match = bool((differing == mask).all())
    audit.majority_spread = [round(d.changed_fraction, 6) for d in seen.spread]
    background = sc.background_colour(seen.reference)
    majority_area = float(np.median([sc.art_box_area(sc.ink_mask(m, background)) for m in seen.sample]))
    stretched = row.get("asset_resize_mode") == "stretch"  # pixel sprites, inset by the frame margin
    margin = tile_margin(cell)
    # Pool sprites only: an edited copy (PixelEdit) may be cut in two by its edit; its original may not.
    edited_side = {"original": "exception", "edited": "majority"}.get(str(row.get("majority_variant")), "")
    if stretched:
        composite = edited_side != "majority" and sc.whole_object_failure(seen.reference, margin, background) is not None
    else:
        composite = pixel_pool.sizeable_parts(sc.ink_mask(seen.reference, background)) >= 2
    seconds = {tuple(int(v) for v in c) for c in second_cells(row)}
    shortcuts, first = [], None
    for got in seen.cells:
        r, c = got.cell
        med, near = got.against_median, got.against_nearest
        rule = judged[got.cell]
        audit.cells.append(CellCheck(row["scene_id"], got.cell, round(med.changed_fraction, 6), round(med.ssim, 6),
                                     got.visible, round(near.changed_fraction, 6),
                                     round(min(med.chroma_changed_fraction, near.chroma_changed_fraction), 6),
                                     rule.perceptible, rule.ratio if np.isfinite(rule.ratio) else None))
        measured = sc.exception_shortcuts(*aligned(seen.sample[got.nearest], cells[r - 1, c - 1], got.nearest_shift),
                                          majority_area, background)
        shortcuts.append(measured)
        if first is None and got.cell not in seconds:
            first = measured
        if not stretched:
            composite = composite or measured.parts >= 2
        elif edited_side != "exception":
            composite = composite or sc.whole_object_failure(cells[r - 1, c - 1], margin, background) is not None
    audit.shortcuts = sc.SceneShortcuts(
        scene_id=row["scene_id"], direction=direction(row), cells=tuple(shortcuts), first_identity=first,
        composite=composite)
    return audit


def second_cells(row: Mapping[str, Any]) -> list[Sequence[int]]:
    """The cells of a second exception identity (presets), else none."""
    record = row.get(ROW_FIELD)
    return list(record.get("second_target_cells") or []) if isinstance(record, Mapping) else []


def direction(row: Mapping[str, Any]) -> str:
    """The scene's vendor direction: ``majority->target`` styles (EmojiStyle), the one vendor
    of an emoji pair drawn in one style (EmojiContent), else ``""``."""
    if row.get("majority_style") and row.get("target_style"):
        return f"{row['majority_style']}->{row['target_style']}"
    if row.get("background_path") and row.get("target_path") and not row.get("sprite_source"):
        return _vendor(str(row["background_path"]))
    return ""


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
    scenes = [a.shortcuts for a in audits if a.shortcuts is not None]
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
        "preset_knobs": preset_knobs(scene_rows),
        "reused": len(scene_rows) - len(pairs),
        "max_pair_uses": max(pairs.values(), default=0),
        "flagged": len(flagged),
        "imperceptible": sum(1 for c in cells if not c.perceptible),
        "imperceptible_scenes": len({c.scene_id for c in cells if not c.perceptible}),
        "imperceptible_cells": [{"scene_id": c.scene_id, "cell": list(c.cell), "ratio": c.perceptibility_ratio}
                                for c in cells if not c.perceptible],
        "perceptibility_ratio": quantiles(c.perceptibility_ratio for c in cells if c.perceptibility_ratio is not None),
        "perceptibility_margin": perceptibility.MARGIN,
        "flagged_cells": [{"scene_id": c.scene_id, "cell": list(c.cell), "changed_fraction": c.changed_fraction,
                           "ssim": c.ssim, "nearest_changed_fraction": c.nearest_changed_fraction,
                           "chroma_changed_fraction": c.chroma_changed_fraction}
                          for c in flagged],
        "majority_checked_scenes": len(checked),
        "majority_mismatch": sorted(a.scene_id for a in checked if not a.majority_identical),
        "exception_cells_mismatch": sorted(a.scene_id for a in checked if a.exceptions_match is False),
        "shortcuts": sc.summarise(scenes),
        "by_direction": {d: sc.summarise([s for s in scenes if s.direction == d])
                         for d in sorted({s.direction for s in scenes if s.direction})},
        "position": sc.position_bias((int(r["rows"]), int(r["cols"]), r["target_cells"]) for r in scene_rows),
    }


def preset_knobs(scene_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the presets did to a subset's scenes: how many had the similarity band applied, and
    each state of the second identity (``used``, ``unavailable``, ``not_drawn``, ``off``)."""
    records = [r[ROW_FIELD] for r in scene_rows if isinstance(r.get(ROW_FIELD), Mapping)]
    banded = [r for r in records if tuple(r.get("similarity_band", (0.0, 1.0))) != (0.0, 1.0)]
    return {"preset_scenes": len(records), "band_asked": len(banded),
            "band_applied": sum(1 for r in banded if r.get("band_applied")),
            "softened": sum(1 for r in records if "softened" in r),
            "second_identity": dict(sorted(Counter(str(r.get("second_identity", "off")) for r in records).items()))}


def preset_notes(subsets: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per knob a preset asked for and did not apply (band, second identity), per subset."""
    notes = []
    for name, s in subsets.items():
        knobs = s["preset_knobs"]
        if knobs["band_asked"] > knobs["band_applied"]:
            notes.append(f"{name}: similarity band not applied in {knobs['band_asked'] - knobs['band_applied']} "
                         f"of {knobs['band_asked']} scene(s) (the source gives no similarity)")
        unavailable = knobs["second_identity"].get("unavailable", 0)
        if unavailable:
            asked = unavailable + knobs["second_identity"].get("used", 0)
            notes.append(f"{name}: second exception identity unavailable in {unavailable} of {asked} scene(s) "
                         "that drew one (the source has no companion target for the scene's majority)")
        if knobs["softened"]:
            notes.append(f"{name}: jitter and degradation softened in {knobs['softened']} of "
                         f"{knobs['preset_scenes']} scene(s) (difficulty_preset.softened on the rows)")
    return notes


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
    rows = read_release_rows(root)
    scenes = scene_rows_of(rows)
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
    mismatched = sum(len(v["majority_mismatch"]) + len(v["exception_cells_mismatch"]) for v in subsets.values())
    standard_figures = {s: sc.summarise([a.shortcuts for a in audits[s] if a.preset == "standard" and a.shortcuts])
                        for s in order}
    broken = sc.broken_limits({s: f for s, f in standard_figures.items() if f["scenes"]})
    return {
        "release": root.name,
        "scenes": len(scenes),
        "subsets": subsets,
        "standard_flagged": standard_flagged,
        "standard_majority_mismatch": mismatched,
        "standard_limits": [limit.describe() for limit in sc.STANDARD_LIMITS],
        "standard_limits_broken": broken,
        "guessability": guessability(rows),
        "preset_notes": preset_notes(subsets),
        "imperceptible": sum(v["imperceptible"] for v in subsets.values()),
        "ok": standard_flagged == 0 and mismatched == 0,
    }


def audit_table(record: Mapping[str, Any]) -> str:
    """A plain-text table of an audit record (one line per subset)."""
    head = (f"{'subset':<20} {'preset':<9} {'scenes':>6} {'pairs':>5} {'reused':>6} {'exc':>4} "
            f"{'flagged':>7} {'imperc':>6} {'min chg':>8} {'min near':>8} {'maj p90':>8} {'max ssim':>8} {'src sim p50':>11}")
    lines = [head, "-" * len(head)]
    for name, s in record["subsets"].items():
        chg = s["similarity"]["measured_changed_fraction"] or {}
        ssim = s["similarity"]["measured_ssim"] or {}
        src = s["similarity"]["source"] or {}
        near = s["similarity"]["nearest_majority_changed_fraction"] or {}
        spread = s["similarity"]["majority_spread_changed_fraction"] or {}
        preset = ",".join(s["presets"])
        lines.append(f"{name:<20} {preset:<9} {s['scenes']:>6} {s['distinct']['pairs']:>5} {s['reused']:>6} "
                     f"{s['exceptions']:>4} {s['flagged']:>7} {s['imperceptible']:>6} {chg.get('min', float('nan')):>8.4f} "
                     f"{near.get('min', float('nan')):>8.4f} {spread.get('p90', float('nan')):>8.4f} "
                     f"{ssim.get('max', float('nan')):>8.4f} "
                     f"{src['median'] if src else '-':>11}")
    return "\n".join(lines + ["", shortcut_table(record)])


SHORTCUT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("changed", "changed_share_median"), ("pop-out", "pop_out"), ("size>5%", "art_area_off_5pct"),
    ("off-pal", "mostly_off_palette"), ("col-only", "colour_only_scenes"), ("compos", "composite_scenes"),
    ("|dL*|", "lightness_shift_median_abs"), ("dL*>5", "brightness_cue"),
)


def shortcut_table(record: Mapping[str, Any]) -> str:
    """Plain-text table of the shortcut figures per subset and vendor direction."""
    head = f"{'subset / direction':<34} {'exc':>5} " + " ".join(f"{n:>8}" for n, _ in SHORTCUT_COLUMNS) + \
        f" {'border':>11} {'zone p':>8}"
    lines = [head, "-" * len(head)]

    def fmt(v: Any) -> str:
        return f"{v:>8.3f}" if isinstance(v, float) else f"{'-':>8}"

    for name, s in record["subsets"].items():
        pos = s["position"]
        border = f"{pos.get('border_share', 0):.2f}/{pos.get('border_expected', 0):.2f}"
        for label, fig in [(name, s["shortcuts"]), *((f"  {d}", f) for d, f in s["by_direction"].items())]:
            tail = f" {border:>11} {pos.get('zone_p_value', float('nan')):>8.4f}" if label == name else ""
            lines.append(f"{label:<34} {fig['exceptions']:>5} "
                         + " ".join(fmt(fig[k]) for _, k in SHORTCUT_COLUMNS) + tail)
    return "\n".join(lines)
