"""Perceptual visibility of the difference between two tiles, and of a scene's exceptions.

"Some pixel differs" is not enough: a benchmark exception must be visible to a careful
human. We compare two tiles as a person would at the size they are drawn, lightly
blurred (sub-pixel noise and anti-aliasing fade), with three numbers:

- ``changed_fraction``: share of the tile whose blurred luminance differs by more than
  ``level`` (0-1 scale);
- ``ssim``: structural similarity of the blurred luminance images;
- ``chroma_changed_fraction``: share of the tile whose blurred CIELAB chroma (a*, b*)
  moves by more than ``chroma_level`` (a colour change at equal lightness).

A difference is visible (:func:`is_visible`) when its luminance clears both luminance
thresholds, or its chroma clears the chroma threshold (:class:`Thresholds`).

:func:`scene_visibility` applies the measure to the exception cells of a rendered grid
image, each against the scene's median majority cell and against the nearest of a few
sampled majority cells (aligned within the jitter range). The generator checks every
drawn scene with it at the scene's own cell size, after the preset's jitter and
degradation, and ``rose-audit`` reads releases with it: one measure, one threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter
from skimage.color import rgb2lab
from skimage.metrics import structural_similarity

# Rec. 601 luma weights.
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float64)
CHROMA_LEVEL = 12.0  # CIELAB a*b* distance of a clearly different colour
CHROMA_SIGMA_FACTOR = 2.0  # chroma is blurred this many times more than luminance (see look())
NEAREST_SAMPLE = 8  # majority cells (evenly spread) each exception is also compared with
FLOOR_STEP = 1e-6  # an exception must exceed the noise floor, not merely equal it


@dataclass(frozen=True)
class Thresholds:
    """When a :class:`TileDifference` counts as visible (defaults suit 27-156 px cells)."""

    min_changed_fraction: float = 0.005
    max_ssim: float = 0.995
    min_chroma_fraction: float = 0.005

    def scaled(self, margin: float) -> Thresholds:
        """Every threshold made ``margin`` times stricter (SSIM: its distance from 1)."""
        return Thresholds(min_changed_fraction=self.min_changed_fraction * margin,
                          max_ssim=1.0 - (1.0 - self.max_ssim) * margin,
                          min_chroma_fraction=self.min_chroma_fraction * margin)

    def with_options(self, options: dict[str, float] | None) -> Thresholds:
        """These thresholds with the given fields replaced (unknown keys: ValueError)."""
        opts = dict(options or {})
        unknown = sorted(set(opts) - set(self.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown visibility threshold(s) {unknown}; known: {sorted(self.__dataclass_fields__)}")
        return replace(self, **{k: float(v) for k, v in opts.items()})


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(frozen=True)
class TileDifference:
    """How different two tiles look; see the module docstring."""

    changed_fraction: float
    ssim: float
    chroma_changed_fraction: float = 0.0


def _rgb_on_white(tile: Image.Image | np.ndarray) -> np.ndarray:
    arr = np.asarray(tile.convert("RGBA") if isinstance(tile, Image.Image) else tile, dtype=np.float64)
    if arr.ndim == 2:
        return np.repeat(arr[..., None], 3, axis=-1)
    rgb = arr[..., :3]
    if arr.shape[-1] == 4:
        alpha = arr[..., 3:4] / 255.0
        rgb = rgb * alpha + 255.0 * (1.0 - alpha)
    return rgb


def packed(pixels: np.ndarray) -> np.ndarray:
    """uint8 RGB pixels ``(..., 3)`` as one uint32 per pixel (for fast unique colours)."""
    arr = np.asarray(pixels, dtype=np.uint8).astype(np.uint32)
    return (arr[..., 0] << 16) | (arr[..., 1] << 8) | arr[..., 2]


def unpacked(codes: np.ndarray) -> np.ndarray:
    """Inverse of :func:`packed`: ``(n,)`` uint32 codes -> ``(n, 3)`` uint8 RGB."""
    return np.stack([(codes >> 16) & 255, (codes >> 8) & 255, codes & 255], axis=-1).astype(np.uint8)


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an array, flattened: ``np.unique(values)``, by sorting (several
    times faster than NumPy's hashing for the 10^4-10^5 colour codes of a tile pair)."""
    flat = np.sort(values, axis=None)
    if flat.size == 0:
        return flat
    keep = np.empty(flat.size, dtype=bool)
    keep[0] = True
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    return flat[keep]


@lru_cache(maxsize=8)  # a few fixed palettes
def colours_lab(colours: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """CIELAB of a fixed list of sRGB colours, ``(n, 3)``, read-only (cached: a palette is converted once)."""
    table = rgb2lab(np.asarray(colours, dtype=np.uint8)[None])[0]
    table.flags.writeable = False
    return table


def lab(pixels: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of uint8 sRGB pixels of any leading shape (``(..., 3)``).

    Converted once per distinct colour (tiles hold few), the same values as converting every pixel.
    """
    arr = np.asarray(pixels, dtype=np.uint8)
    table, index = _lab_table(arr)
    return table[index].reshape(arr.shape[:-1] + (3,))


def _lab_table(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(CIELAB of each distinct colour of uint8 ``arr``, (K, 3); each pixel's row in it, flat)."""
    colours, index = np.unique(packed(arr).ravel(), return_inverse=True)
    return rgb2lab(unpacked(colours)[None])[0], index.ravel()


def _is_rgb8(tile: object) -> bool:
    return isinstance(tile, np.ndarray) and tile.dtype == np.uint8 and tile.ndim >= 1 and tile.shape[-1] == 3


def border_colour(cell: np.ndarray) -> np.ndarray:
    """A cell's background: the most common colour of its one-pixel border (uint8 RGB; ties to
    the lowest colour). A mode, not a per-channel median, so it is a colour the cell really shows."""
    border = np.concatenate([cell[0], cell[-1], cell[:, 0], cell[:, -1]]).astype(np.uint8)
    codes, counts = np.unique(packed(border), return_counts=True)
    return unpacked(codes[np.argmax(counts)][None])[0]


def luminance(tile: Image.Image | np.ndarray) -> np.ndarray:
    """Float luminance in [0, 1] of an RGB(A) image or array (alpha composited on white)."""
    return (_rgb_on_white(tile) @ _LUMA) / 255.0


def chroma(tile: Image.Image | np.ndarray) -> np.ndarray:
    """CIELAB (a*, b*) of an RGB(A) image or array, ``(h, w, 2)`` (alpha composited on white)."""
    if _is_rgb8(tile):  # uint8 RGB: whole sRGB values already
        table, index = _lab_table(tile)
        return table[:, 1:][index].reshape(tile.shape[:-1] + (2,))
    rgb = _rgb_on_white(tile)
    if np.array_equal(rgb, np.rint(rgb)):  # whole sRGB values: convert each distinct colour once
        return lab(np.clip(rgb, 0, 255).astype(np.uint8))[..., 1:]
    return rgb2lab(np.clip(rgb / 255.0, 0.0, 1.0))[..., 1:]


@dataclass(frozen=True)
class CellLook:
    """A tile as the measure sees it: blurred luminance ``(h, w)`` and blurred chroma ``(h, w, 2)``."""

    luminance: np.ndarray
    chroma: np.ndarray


def look(tile: Image.Image | np.ndarray, sigma: float = 1.0, chroma_sigma: float | None = None) -> CellLook:
    """The blurred luminance and chroma of a tile (computed once, compared many times).

    Chroma is blurred twice as much as luminance by default (``chroma_sigma``): the eye
    resolves colour at about half the detail of lightness, which is also why JPEG keeps
    chroma at half resolution, so its block noise must not read as a colour change.
    """
    rgb = _rgb_on_white(tile)
    lum = gaussian_filter((rgb @ _LUMA) / 255.0, sigma)
    cs = CHROMA_SIGMA_FACTOR * sigma if chroma_sigma is None else chroma_sigma
    if _is_rgb8(tile) and tile.ndim == 3:  # a* and b* blurred as two contiguous planes: the same numbers, faster
        table, index = _lab_table(tile)
        planes = np.ascontiguousarray(table[:, 1:].T)[:, index].reshape((2,) + tile.shape[:2])
        ab = np.stack([gaussian_filter(plane, cs) for plane in planes], axis=-1)
    else:
        ab = gaussian_filter(chroma(rgb), (cs, cs, 0))
    return CellLook(luminance=lum, chroma=ab)


def _overlap(n: int, d: int) -> tuple[slice, slice]:
    """Slices of two length-``n`` axes where position ``i`` of the first meets ``i + d`` of the second."""
    return slice(max(-d, 0), n - max(d, 0)), slice(max(d, 0), n + min(d, 0))


def compare(a: CellLook, b: CellLook, shift: tuple[int, int] = (0, 0), *, level: float = 0.1,
            chroma_level: float = CHROMA_LEVEL) -> TileDifference:
    """The difference of two looks on their overlap, ``b``'s content displaced by ``shift`` (dy, dx) px."""
    if a.luminance.shape != b.luminance.shape:
        raise ValueError(f"tiles differ in size: {a.luminance.shape} vs {b.luminance.shape}")
    (ya, yb), (xa, xb) = _overlap(a.luminance.shape[0], shift[0]), _overlap(a.luminance.shape[1], shift[1])
    la, lb = a.luminance[ya, xa], b.luminance[yb, xb]
    changed = float(np.mean(np.abs(la - lb) > level))
    win = min(7, min(la.shape) // 2 * 2 - 1)
    ssim = float(structural_similarity(la, lb, data_range=1.0, win_size=win)) if win >= 3 else 1.0
    d = a.chroma[ya, xa] - b.chroma[yb, xb]
    moved = float(np.mean(np.hypot(d[..., 0], d[..., 1]) > chroma_level))
    return TileDifference(changed_fraction=changed, ssim=ssim, chroma_changed_fraction=moved)


def tile_difference(a: Image.Image | np.ndarray, b: Image.Image | np.ndarray, *, sigma: float = 1.0,
                    level: float = 0.1, chroma_level: float = CHROMA_LEVEL) -> TileDifference:
    """Compare two same-size tiles; see the module docstring for the three measures."""
    return compare(look(a, sigma), look(b, sigma), level=level, chroma_level=chroma_level)


def is_visible(diff: TileDifference, thresholds: Thresholds | None = None, *,
               min_changed_fraction: float | None = None, max_ssim: float | None = None,
               min_chroma_fraction: float | None = None) -> bool:
    """True when the luminance clears both luminance thresholds or the chroma clears its own.

    Thresholds come from ``thresholds`` (default :data:`DEFAULT_THRESHOLDS`); the keyword
    arguments override single fields.
    """
    t = thresholds or DEFAULT_THRESHOLDS
    lum_min = t.min_changed_fraction if min_changed_fraction is None else min_changed_fraction
    ssim_max = t.max_ssim if max_ssim is None else max_ssim
    chroma_min = t.min_chroma_fraction if min_chroma_fraction is None else min_chroma_fraction
    luminance_visible = diff.changed_fraction >= lum_min and diff.ssim <= ssim_max
    return luminance_visible or diff.chroma_changed_fraction >= chroma_min


def why_invisible(diff: TileDifference, thresholds: Thresholds | None = None) -> str:
    """One phrase saying which thresholds ``diff`` misses ('' when it is visible)."""
    t = thresholds or DEFAULT_THRESHOLDS
    if is_visible(diff, t):
        return ""
    return (f"luminance changed {diff.changed_fraction:.4f} (needs {t.min_changed_fraction:g}) / SSIM "
            f"{diff.ssim:.4f} (needs <= {t.max_ssim:g}), chroma changed {diff.chroma_changed_fraction:.4f} "
            f"(needs {t.min_chroma_fraction:g})")


# -- a scene's exception cells ---------------------------------------------------------------


def cut_cells(image: np.ndarray, rows: int, cols: int, cell: int) -> np.ndarray:
    """(rows, cols, cell, cell, 3) view of a grid image."""
    if image.shape[0] != rows * cell or image.shape[1] != cols * cell:
        raise ValueError(f"image is {image.shape[1]}x{image.shape[0]}, rows say {cols * cell}x{rows * cell}")
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def best_offset(cell: CellLook, reference: CellLook, max_shift: int) -> tuple[int, int]:
    """The displacement (dy, dx) of ``cell``'s content against ``reference``, each within
    ``max_shift`` px: the shift with the smallest mean absolute blurred-luminance difference
    on the overlap (ties: the smaller shift, then row-major order). (0, 0) when ``max_shift`` is 0."""
    if max_shift <= 0:
        return (0, 0)
    n, m = reference.luminance.shape
    best, best_cost = (0, 0), np.inf
    for dy, dx in sorted(((dy, dx) for dy in range(-max_shift, max_shift + 1)
                          for dx in range(-max_shift, max_shift + 1)), key=lambda d: (abs(d[0]) + abs(d[1]), d)):
        (ya, yb), (xa, xb) = _overlap(n, dy), _overlap(m, dx)
        cost = float(np.abs(reference.luminance[ya, xa] - cell.luminance[yb, xb]).mean())
        if cost < best_cost:
            best, best_cost = (dy, dx), cost
    return best


def aligned(a: np.ndarray, b: np.ndarray, shift: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` (same size) cropped to their overlap, ``b``'s content displaced by ``shift`` (dy, dx)."""
    (ya, yb), (xa, xb) = _overlap(a.shape[0], shift[0]), _overlap(a.shape[1], shift[1])
    return a[ya, xa], b[yb, xb]


@dataclass(frozen=True)
class CellVisibility:
    """One exception cell against its scene's majority (see :func:`scene_visibility`)."""

    cell: tuple[int, int]
    against_median: TileDifference
    against_nearest: TileDifference
    nearest: int  # index into the sampled majority cells of the one it differs from least
    nearest_shift: tuple[int, int]  # the exception's displacement against that cell (dy, dx)
    visible: bool


@dataclass(frozen=True)
class SceneVisibility:
    """A scene's majority reference, sampled majority cells and every exception cell's verdict."""

    reference: np.ndarray  # per-pixel median of the majority cells
    sample: np.ndarray  # (n, cell, cell, 3) evenly spread majority cells
    cells: tuple[CellVisibility, ...]
    spread: tuple[TileDifference, ...] = ()  # each sampled majority cell against the median: the noise floor
    cells_seen: np.ndarray | None = None  # (rows, cols, cell, cell, 3): the cells compared (unplaced under jitter)
    thresholds: Thresholds = DEFAULT_THRESHOLDS  # the thresholds applied: the defaults raised to the noise floor

    @property
    def visible(self) -> bool:
        return all(c.visible for c in self.cells)

    def reasons(self) -> list[str]:
        """One line per invisible exception cell: where, and which thresholds it misses."""
        out = []
        for c in self.cells:
            if not c.visible:
                t = self.thresholds
                worst = c.against_median if not is_visible(c.against_median, t) else c.against_nearest
                out.append(f"cell R{c.cell[0]}C{c.cell[1]}: {why_invisible(worst, t)}")
        return out


Placement = tuple[int, int, int]  # (size, top, left): content drawn as a size-px square at (top, left)


def unplaced(cell: np.ndarray, placement: Placement) -> np.ndarray:
    """A cell's content mapped back onto the whole cell: the ``size`` square drawn at
    (``top``, ``left``) is cut out (what lies outside the cell is the cell's background) and
    resized (bilinear) to the cell. The inverse of a jitter's scale and shift, up to resampling."""
    size, top, left = (int(v) for v in placement)
    n = cell.shape[0]
    if (size, top, left) == (n, 0, 0):
        return cell
    square = np.empty((size, size, 3), dtype=np.uint8)
    square[...] = border_colour(cell)
    y0, x0, y1, x1 = max(top, 0), max(left, 0), min(top + size, n), min(left + size, n)
    square[y0 - top:y1 - top, x0 - left:x1 - left] = cell[y0:y1, x0:x1]
    return np.asarray(Image.fromarray(square).resize((n, n), Image.Resampling.BILINEAR))


def majority_sample(majority_cells: np.ndarray, n: int = NEAREST_SAMPLE) -> np.ndarray:
    """``n`` evenly spread majority cells (all of them when there are fewer)."""
    picks = np.linspace(0, len(majority_cells) - 1, min(n, len(majority_cells))).round().astype(int)
    return majority_cells[np.unique(picks)]


def noise_floor(looks: Sequence[CellLook], thresholds: Thresholds | None = None) -> Thresholds:
    """``thresholds`` raised to a scene's own noise: how far each sampled majority cell stands
    from its nearest sibling, at the worst. An exception must stand farther from its nearest
    majority cell than that (identical cells leave the thresholds unchanged)."""
    t = thresholds or DEFAULT_THRESHOLDS
    k = len(looks)
    if k < 2:
        return t
    near_changed, near_ssim, near_chroma = [1.0] * k, [-1.0] * k, [1.0] * k
    for i in range(k):
        for j in range(i + 1, k):
            d = compare(looks[i], looks[j])
            for a in (i, j):
                near_changed[a] = min(near_changed[a], d.changed_fraction)
                near_ssim[a] = max(near_ssim[a], d.ssim)
                near_chroma[a] = min(near_chroma[a], d.chroma_changed_fraction)
    floor_changed, floor_ssim, floor_chroma = max(near_changed), min(near_ssim), max(near_chroma)
    return Thresholds(
        min_changed_fraction=max(t.min_changed_fraction, floor_changed + FLOOR_STEP if floor_changed > 0 else 0.0),
        max_ssim=min(t.max_ssim, floor_ssim - FLOOR_STEP if floor_ssim < 1.0 else 1.0),
        min_chroma_fraction=max(t.min_chroma_fraction, floor_chroma + FLOOR_STEP if floor_chroma > 0 else 0.0))


def scene_visibility(image: np.ndarray, rows: int, cols: int, cell: int, target_cells: Sequence[Sequence[int]],
                     max_offset: int = 0, thresholds: Thresholds | None = None,
                     placements: Sequence[Placement] | None = None) -> SceneVisibility:
    """Judge every exception cell of a grid image against the scene's majority cells.

    An exception is visible when it clears the thresholds against the per-pixel median of
    the majority cells *and* against each of :data:`NEAREST_SAMPLE` evenly spread majority
    cells, where the thresholds are ``thresholds`` raised to the scene's own noise floor
    (:func:`noise_floor`: it must stand farther from its nearest majority cell than any
    sampled majority cell stands from its nearest sibling). Under jitter the cells are first
    brought into one frame: with ``placements`` (per cell, row-major, where its content was
    drawn: the recorded jitter draws) every cell is mapped back onto the whole cell
    (:func:`unplaced`), undoing scale and shift; without them, ``max_offset`` > 0 aligns
    every compared cell with the median (:func:`best_offset`, shift only). ``nearest``
    names the sampled cell the exception differs from least.
    """
    cells = cut_cells(image, rows, cols, cell)
    if placements is not None:
        if len(placements) != rows * cols:
            raise ValueError(f"{len(placements)} cell placements for a {rows}x{cols} grid")
        flat = [unplaced(cells[i // cols, i % cols], p) for i, p in enumerate(placements)]
        cells = np.stack(flat).reshape(rows, cols, cell, cell, 3)
        max_offset = 0
    mask = np.zeros((rows, cols), dtype=bool)
    for r, c in target_cells:
        mask[int(r) - 1, int(c) - 1] = True
    majority_cells = cells[~mask]
    reference = np.median(majority_cells, axis=0).round().astype(np.uint8)
    sample = majority_sample(majority_cells)
    ref_look = look(reference)
    sample_looks = [look(m) for m in sample]
    same = all(np.array_equal(sample[0], m) for m in sample[1:])
    floor = (thresholds or DEFAULT_THRESHOLDS) if same or max_offset > 0 else noise_floor(sample_looks, thresholds)
    sample_offsets = [best_offset(m, ref_look, max_offset) for m in sample_looks]
    out = []
    for r, c in target_cells:
        tile = look(cells[int(r) - 1, int(c) - 1])
        off = best_offset(tile, ref_look, max_offset)
        median_diff = compare(ref_look, tile)
        shifts = [(off[0] - o[0], off[1] - o[1]) for o in sample_offsets]
        diffs = [compare(m, tile, d) for m, d in zip(sample_looks, shifts, strict=True)]
        near = int(np.argmin([d.changed_fraction + d.chroma_changed_fraction for d in diffs]))
        visible = is_visible(median_diff, floor) and all(is_visible(d, floor) for d in diffs)
        out.append(CellVisibility((int(r), int(c)), median_diff, diffs[near], near, shifts[near], visible))
    spread = tuple(compare(ref_look, m) for m in sample_looks)
    return SceneVisibility(reference=reference, sample=sample, cells=tuple(out), spread=spread, cells_seen=cells,
                           thresholds=floor)
