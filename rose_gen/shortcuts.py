"""Shortcut measures: how an exception cell could be found without a careful look.

Pure functions over RGB cell arrays (uint8, ``(h, w, 3)``), cut from a release's own
images; :mod:`rose_gen.audit` applies them to every exception cell against its scene's
majority. Each measure answers one question a cheating model could ask:

- *art size*: is the exception's drawing bigger or smaller? The art box is the bounding
  box of the cell's ink (pixels whose largest channel differs from the cell background by
  more than :data:`INK_LEVEL`); the ratio is exception area / majority area.
- *pop-out*: is it visible at a glance from a blurred thumbnail? The cell is cut into
  3 x 3 blocks; it pops out when some block's mean colour moves by CIELAB
  ΔE76 > :data:`POP_OUT_DE`.
- *off-palette*: is the change drawn in a colour the majority does not have? Of the
  changed pixels (ΔE > :data:`CHANGE_DE` against the majority cell), the share whose
  colour lies farther than :data:`PALETTE_DE` from every colour of the majority cell;
  "mostly off-palette" is a share above one half.
- *colour-only*: do the two drawings share one silhouette (ink masks with
  intersection-over-union at least :data:`SILHOUETTE_IOU`) and differ only in colour?
- *composite*: is a tile several objects? Its ink falls in at least two separated parts
  (8-connected) of at least :data:`PART_SHARE` of the ink each.
- *brightness*: how much does the mean CIELAB lightness L* of the cell move?
- *position*: are exceptions placed evenly over the grid? (:func:`position_bias`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from rose_gen.visibility import lab, packed, unpacked

INK_LEVEL = 24  # 0-255: a pixel is ink when some channel differs from the background by more
POP_OUT_DE = 12.0  # ΔE76 of a block's mean colour that is visible at a glance
CHANGE_DE = 10.0  # ΔE76 at which a pixel counts as changed
PALETTE_DE = 10.0  # ΔE76 within which a colour counts as one of the majority's colours
SILHOUETTE_IOU = 0.95  # ink masks at least this similar share one silhouette
PART_SHARE = 0.10  # a separated part is sizeable from this share of the tile's ink
BLOCKS = 3  # pop-out blocks per side
ZONES = 3  # position zones per side of the grid


def background_colour(cell: np.ndarray) -> np.ndarray:
    """The cell's background: the per-channel median of its one-pixel border."""
    border = np.concatenate([cell[0], cell[-1], cell[:, 0], cell[:, -1]])
    return np.median(border, axis=0)


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


def block_bounds(n: int, blocks: int = BLOCKS) -> list[tuple[int, int]]:
    """``blocks`` contiguous index ranges covering 0..n (as equal as rounding allows)."""
    edges = np.rint(np.linspace(0, n, blocks + 1)).astype(int)
    return list(zip(edges[:-1], edges[1:], strict=True))


def block_lab(cell: np.ndarray, blocks: int = BLOCKS) -> np.ndarray:
    """``(blocks, blocks, 3)`` CIELAB of each block's mean sRGB colour."""
    ys, xs = block_bounds(cell.shape[0], blocks), block_bounds(cell.shape[1], blocks)
    means = np.array([[cell[y0:y1, x0:x1].reshape(-1, 3).mean(axis=0) for x0, x1 in xs] for y0, y1 in ys])
    return lab(np.rint(means).astype(np.uint8))


def pop_out_delta(a: np.ndarray, b: np.ndarray) -> float:
    """Largest ΔE76 between the 3 x 3 block mean colours of two same-size cells."""
    return float(np.sqrt(((block_lab(a) - block_lab(b)) ** 2).sum(axis=-1)).max())


def delta_e(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel CIELAB ΔE76 of two same-size cells."""
    return np.sqrt(((lab(a) - lab(b)) ** 2).sum(axis=-1))


def off_palette_share(majority: np.ndarray, exception: np.ndarray, changed: np.ndarray) -> float:
    """Share of the ``changed`` pixels of ``exception`` whose colour is absent from ``majority``.

    Absent: farther than PALETTE_DE (CIELAB) from every distinct colour of the majority cell.
    0.0 when nothing changed.
    """
    if not changed.any():
        return 0.0
    from scipy.spatial import cKDTree  # imported here: the generator's workers never need it

    palette = unpacked(np.unique(packed(majority).ravel()))
    shown, inverse = np.unique(packed(exception[changed]).ravel(), return_inverse=True)
    dist, _ = cKDTree(lab(palette)).query(lab(unpacked(shown)), k=1)
    far = dist > PALETTE_DE
    return float(far[inverse.ravel()].mean())


def silhouette_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two ink masks (1.0 when both are empty)."""
    union = int((a | b).sum())
    return float((a & b).sum()) / union if union else 1.0


def sizeable_parts(mask: np.ndarray, min_share: float = PART_SHARE) -> int:
    """Number of 8-connected parts of ``mask`` holding at least ``min_share`` of its pixels."""
    total = int(mask.sum())
    if total == 0:
        return 0
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
    sizes = np.bincount(labels.ravel(), minlength=n + 1)[1:]
    return int((sizes >= min_share * total).sum())


def mean_lightness(cell: np.ndarray) -> float:
    """Mean CIELAB L* of a cell."""
    return float(lab(cell)[..., 0].mean())


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

    @property
    def pops_out(self) -> bool:
        return self.pop_out_de > POP_OUT_DE

    @property
    def mostly_off_palette(self) -> bool:
        return self.off_palette_share > 0.5

    @property
    def colour_only(self) -> bool:
        return self.silhouette_iou >= SILHOUETTE_IOU and self.changed_share > 0

    def to_json(self) -> dict[str, float | int | None]:
        ratio = None if self.art_area_ratio is None else round(self.art_area_ratio, 4)
        return {"art_area_ratio": ratio, "pop_out_de": round(self.pop_out_de, 3),
                "changed_share": round(self.changed_share, 5), "off_palette_share": round(self.off_palette_share, 4),
                "silhouette_iou": round(self.silhouette_iou, 4), "lightness_shift": round(self.lightness_shift, 3),
                "parts": self.parts}


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
    area = art_box_area(ink_ex)
    return ExceptionShortcuts(
        art_area_ratio=area / majority_area if majority_area > 0 else None,
        pop_out_de=pop_out_delta(majority, exception),
        changed_share=float(changed.mean()),
        off_palette_share=off_palette_share(majority, exception, changed),
        silhouette_iou=silhouette_iou(ink_ex, ink_maj),
        lightness_shift=float(lab_ex[..., 0].mean() - lab_maj[..., 0].mean()),
        parts=sizeable_parts(ink_ex),
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
