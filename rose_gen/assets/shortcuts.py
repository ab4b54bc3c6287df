"""Shortcut measures: how an exception cell could be found without a careful look.

Pure functions over RGB cell arrays (uint8, ``(h, w, 3)``), cut from a release's own
images; :mod:`rose_gen.check.audit` applies them to every exception cell against its scene's
majority. Each measure answers one question a cheating model could ask:

- *art size*: is the exception's drawing bigger or smaller? The art box is the bounding
  box of the cell's ink (pixels whose largest channel differs from the cell background by
  more than :data:`INK_LEVEL`); the ratio is exception area / majority area.
- *pop-out*: is it visible at a glance from a blurred thumbnail? The cell is cut into
  3 x 3 blocks; it pops out when some block's mean CIELAB colour moves by
  ΔE76 > 12 (:func:`rose_gen.assets.pixel.metrics.block_delta_e`, the pixel builder's measure).
- *off-palette*: is the change drawn in a colour the majority does not have? Of the
  changed pixels, the share whose colour lies farther than ΔE 10 from every colour of the
  majority cell (:func:`rose_gen.assets.pixel.metrics.off_palette_share`); "mostly off-palette"
  is a share above one half. A pixel counts as changed from ΔE > :data:`CHANGE_DE`, so
  JPEG and resampling noise of the presets is not taken for an edit (on exact pixel art,
  the builder's own figure).
- *colour-only*: do the two drawings share one silhouette and differ by one colour
  mapping (a palette swap, :func:`rose_gen.assets.pixel.metrics.colour_only`, on the changed
  pixels as above)? The ink-mask silhouette IoU is reported beside it.
- *composite*: is a tile several objects? For stretched pixel sprites, the pool's own
  whole-object shape test on the sprite read back from the cell (:func:`whole_object_failure`:
  separated sizeable parts, a seam, a texture); for other tiles, ink in at least two
  separated sizeable parts (:func:`rose_gen.assets.pixel.pool.sizeable_parts`), natural for glyphs
  and many emoji, so only reported.
- *brightness*: how much does the mean CIELAB lightness L* of the cell move?
- *position*: are exceptions placed evenly over the grid? (:func:`position_bias`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rose_gen.assets.pixel import metrics as pm
from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.visibility import border_colour, lab

INK_LEVEL = 24  # 0-255: a pixel is ink when some channel differs from the background by more
CHANGE_DE = 10.0  # ΔE76 at which a pixel counts as changed
ZONES = 3  # position zones per side of the grid


def background_colour(cell: np.ndarray) -> np.ndarray:
    """The cell's background: the most common colour of its border (the renderer's own rule)."""
    return border_colour(cell).astype(np.float64)


def ink_mask(cell: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
    """Pixels whose largest channel differs from ``background`` (default: the cell's) by > INK_LEVEL."""
    bg = background_colour(cell) if background is None else np.asarray(background)
    return (np.abs(cell.astype(np.int16) - bg.astype(np.int16)).max(axis=-1) > INK_LEVEL)


def art_box_area(mask: np.ndarray) -> int:
    """Area in pixels of the bounding box of ``mask`` (0 when nothing is inked)."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return 0
    return int((rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1))


def silhouette_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two ink masks (1.0 when both are empty)."""
    union = int((a | b).sum())
    return float((a & b).sum()) / union if union else 1.0


def whole_object_failure(cell: np.ndarray, margin: int, background: Sequence[int]) -> str | None:
    """Why the stretched sprite drawn in ``cell`` is not one whole object (None: it is), by the
    pixel pool's own shape test (:func:`rose_gen.assets.pixel.pool.shape_rejection`) on the 32 x 32
    source pixels read back from the cell's inner square (``margin`` px frame band left out)."""
    inner = cell[margin:cell.shape[0] - margin, margin:cell.shape[1] - margin]
    grid = pm.sprite_grid(inner)
    drawn = (grid != np.asarray(background, dtype=grid.dtype)).any(axis=-1)
    rgba = np.dstack([grid, np.where(drawn, 255, 0).astype(np.uint8)])
    return pixel_pool.shape_rejection(rgba)


@dataclass(frozen=True)
class ExceptionShortcuts:
    """The shortcut measures of one exception cell against its majority (see the module docstring)."""

    art_area_ratio: float | None  # None: the majority has no ink
    pop_out_de: float
    changed_share: float  # share of the cell's pixels changed (ΔE > CHANGE_DE)
    off_palette_share: float
    silhouette_iou: float
    lightness_shift: float  # mean L*, exception minus majority
    parts: int  # sizeable ink parts of the exception
    palette_swap: bool = False  # one silhouette, changed pixels follow one colour mapping

    @property
    def pops_out(self) -> bool:
        return self.pop_out_de > pm.POP_OUT_DELTA_E

    @property
    def mostly_off_palette(self) -> bool:
        return self.off_palette_share > 0.5

    @property
    def colour_only(self) -> bool:
        return self.palette_swap and self.changed_share > 0

    def to_json(self) -> dict[str, float | int | None]:
        ratio = None if self.art_area_ratio is None else round(self.art_area_ratio, 4)
        return {"art_area_ratio": ratio, "pop_out_de": round(self.pop_out_de, 3),
                "changed_share": round(self.changed_share, 5), "off_palette_share": round(self.off_palette_share, 4),
                "silhouette_iou": round(self.silhouette_iou, 4), "palette_swap": self.palette_swap,
                "lightness_shift": round(self.lightness_shift, 3), "parts": self.parts}


def exception_shortcuts(majority: np.ndarray, exception: np.ndarray, majority_area: float,
                        background: np.ndarray) -> ExceptionShortcuts:
    """Measure one exception cell against one (aligned, same-size) majority cell.

    ``majority_area`` is the majority's art-box area measured on whole cells (jitter moves
    content, so the aligned crops are not used for it); ``background`` the scene's cell
    background colour.
    """
    ink_ex, ink_maj = ink_mask(exception, background), ink_mask(majority, background)
    lab_maj, lab_ex = lab(majority), lab(exception)  # once: ΔE and L* both come from them
    changed = np.sqrt(((lab_maj - lab_ex) ** 2).sum(axis=-1)) > CHANGE_DE
    visible_change = np.where(changed[..., None], exception, majority).astype(np.uint8)
    area = art_box_area(ink_ex)
    bg = tuple(int(round(v)) for v in background)
    return ExceptionShortcuts(
        art_area_ratio=area / majority_area if majority_area > 0 else None,
        pop_out_de=pm.block_delta_e(majority, exception),
        changed_share=float(changed.mean()),
        off_palette_share=pm.off_palette_share(majority, visible_change),
        silhouette_iou=silhouette_iou(ink_ex, ink_maj),
        lightness_shift=float(lab_ex[..., 0].mean() - lab_maj[..., 0].mean()),
        parts=pixel_pool.sizeable_parts(ink_ex),
        palette_swap=bool(changed.any()) and pm.colour_only(majority, visible_change, bg),
    )


# -- where the exceptions are -----------------------------------------------------------


def zone_of(index: int, n: int, zones: int = ZONES) -> int:
    """Zone (0..zones-1) of the 1-based line ``index`` of ``n`` lines, by its centre."""
    return min(zones - 1, int(zones * (index - 0.5) / n))


def position_bias(grids: Iterable[tuple[int, int, Sequence[Sequence[int]]]]) -> dict[str, float | int]:
    """Do exceptions favour some part of the grid? ``grids``: (rows, cols, 1-based target cells).

    Compares where the exceptions are with where they would be if every cell were equally
    likely: the share on the grid's border, and a chi-square test over the 3 x 3 zones
    (expected count of a zone = exceptions x its share of the scene's cells, summed).
    """
    observed = np.zeros((ZONES, ZONES))
    expected = np.zeros((ZONES, ZONES))
    border = border_expected = total = 0.0
    for rows, cols, cells in grids:
        n = len(cells)
        if n == 0:
            continue
        total += n
        zr = np.array([zone_of(r, rows) for r in range(1, rows + 1)])
        zc = np.array([zone_of(c, cols) for c in range(1, cols + 1)])
        counts = np.zeros((ZONES, ZONES))
        np.add.at(counts, (zr[:, None].repeat(cols, 1), zc[None, :].repeat(rows, 0)), 1)
        expected += n * counts / (rows * cols)
        n_border = rows * cols - max(rows - 2, 0) * max(cols - 2, 0)
        border_expected += n * n_border / (rows * cols)
        for r, c in cells:
            observed[zone_of(int(r), rows), zone_of(int(c), cols)] += 1
            border += int(r) in (1, rows) or int(c) in (1, cols)
    if total == 0:
        return {"exceptions": 0}
    from scipy import stats  # imported here: the generator's workers never need it

    keep = expected > 0
    chi2 = float((((observed - expected) ** 2)[keep] / expected[keep]).sum())
    p_value = float(stats.chi2.sf(chi2, int(keep.sum()) - 1))
    ratio = observed[keep] / expected[keep]
    return {"exceptions": int(total), "border_share": round(border / total, 4),
            "border_expected": round(border_expected / total, 4), "zone_chi2": round(chi2, 3),
            "zone_p_value": round(p_value, 6), "zone_ratio_min": round(float(ratio.min()), 3),
            "zone_ratio_max": round(float(ratio.max()), 3)}


# -- summaries and limits ---------------------------------------------------------------

ART_AREA_TOLERANCE = 0.05  # art-box areas within 5 % count as the same size
BRIGHTNESS_STEP = 5.0  # a mean L* shift above this is a brightness cue


@dataclass(frozen=True)
class SceneShortcuts:
    """One scene's exceptions (first identity first) and whether its tiles are composites."""

    scene_id: str
    direction: str  # vendor direction ("twemoji->noto"), "" when the subset has none
    cells: tuple[ExceptionShortcuts, ...]
    first_identity: ExceptionShortcuts | None  # an exception cell of the scene's main pair
    composite: bool  # the majority or an exception tile has several sizeable ink parts


def _share(flags: Sequence[bool]) -> float | None:
    return round(float(np.mean(flags)), 4) if len(flags) else None


def _median(values: Sequence[float]) -> float | None:
    return round(float(np.median(values)), 4) if len(values) else None


def summarise(scenes: Sequence[SceneShortcuts]) -> dict[str, float | int | None]:
    """Per-subset (or per-direction) shortcut figures: shares of exceptions or scenes."""
    cells = [c for s in scenes for c in s.cells]
    ratios = [c.art_area_ratio for c in cells if c.art_area_ratio is not None]
    off_size = [abs(r - 1.0) > ART_AREA_TOLERANCE for r in ratios]
    firsts = [s.first_identity for s in scenes if s.first_identity is not None]
    shifts = [c.lightness_shift for c in cells]
    return {
        "scenes": len(scenes),
        "exceptions": len(cells),
        "changed_share_median": _median([c.changed_share for c in cells]),
        "pop_out": _share([c.pops_out for c in cells]),
        "art_area_ratio_median": _median(ratios),
        "art_area_off_5pct": _share(off_size),
        "art_area_off_15pct": _share([abs(r - 1.0) > 0.15 for r in ratios]),
        "art_area_within_5pct": _share([not f for f in off_size]),
        "mostly_off_palette": _share([c.mostly_off_palette for c in cells]),
        "colour_only_scenes": _share([c.colour_only for c in firsts]),
        "composite_scenes": _share([s.composite for s in scenes]),
        "lightness_shift_median_abs": _median([abs(v) for v in shifts]),
        "lightness_shift_mean": round(float(np.mean(shifts)), 3) if shifts else None,
        "brightness_cue": _share([abs(v) > BRIGHTNESS_STEP for v in shifts]),
    }


@dataclass(frozen=True)
class Limit:
    """A documented ceiling (or floor) on one summary figure of one subset."""

    subset: str
    figure: str
    bound: float
    kind: str  # "max" or "min"

    def broken(self, value: float | None) -> bool:
        if value is None:
            return False
        return value > self.bound if self.kind == "max" else value < self.bound

    def describe(self) -> str:
        return f"{self.subset} {self.figure} {'<=' if self.kind == 'max' else '>='} {self.bound:g}"


#: The limits a standard release must meet (issue 10, "Done means"); ``rose-audit --strict``.
STANDARD_LIMITS: tuple[Limit, ...] = (
    Limit("ROSE-EmojiStyle", "art_area_within_5pct", 0.98, "min"),
    Limit("ROSE-PixelEdit", "mostly_off_palette", 0.05, "max"),
    Limit("ROSE-PixelContent", "colour_only_scenes", 0.10, "max"),
    Limit("ROSE-PixelEdit", "composite_scenes", 0.0, "max"),
    Limit("ROSE-PixelContent", "composite_scenes", 0.0, "max"),
)


def broken_limits(figures: dict[str, dict[str, float | int | None]],
                  limits: Sequence[Limit] = STANDARD_LIMITS) -> list[str]:
    """Descriptions of the limits ``figures`` (subset -> :func:`summarise` record) exceed."""
    out = []
    for limit in limits:
        value = figures.get(limit.subset, {}).get(limit.figure)
        if limit.broken(value):
            out.append(f"{limit.describe()} (got {value})")
    return out
