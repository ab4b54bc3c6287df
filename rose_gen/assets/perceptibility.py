"""Perceptibility: does every exception stand out from the scene's own majority-to-majority variation?

:mod:`rose_gen.assets.visibility` asks whether an exception differs from the majority by
*absolute* thresholds (a share of changed pixels, an SSIM, a chroma share). Under a
difficulty preset that is not enough: every majority cell is jittered, resampled, blurred
by the downscale and broken into JPEG blocks, so the majority cells differ among
themselves, and an exception whose own edit the degradation erased still clears a 0.5 %
changed-pixel threshold on the degradation noise alone. What a person needs is that the
exception stands out *against that variation*. This module measures it on the rendered
image, at the drawn size:

1. Every cell is brought into one frame (the recorded jitter undone,
   :func:`rose_gen.assets.visibility.unplaced`), converted to CIELAB and blurred
   (:data:`SIGMA` px: sub-pixel noise and single JPEG pixels fade, as at a normal look).
2. The reference is the per-pixel median of the majority cells.
3. A cell's *distance* (:func:`cell_distances`) is the CIELAB difference to the reference,
   pooled over a spot of about a sixth of the cell (Gaussian, :data:`SPOT`) and read at the
   most different spot; each pixel is compared with the closest pixel within
   :data:`TOLERANCE` px, both ways, so resampling rounding of a contour costs nothing. It is in ΔE units: how different the most different part of the cell looks.
4. The *noise* is the majority cells' own distances: their :data:`NOISE_QUANTILE` quantile
   (the most different majority cells, short of outliers), never below :data:`NOISE_FLOOR`.
5. An exception is *perceptible* when its distance is at least :data:`MARGIN` times the
   noise (:func:`judge_scene`). The margin was calibrated by looking (README, "Difficulty
   presets"): scenes where a careful look at full size missed exceptions fail it.

On a plain grid (``standard``, ``easy``) every majority cell is the same tile: there is no
variation to stand out from, the noise is 0 and any exception drawn differently passes
(whether it is big enough to see is the visibility measure's absolute thresholds). Wherever
the majority cells vary at all, the noise is at least :data:`NOISE_FLOOR`.
Pure functions over arrays; numpy and scipy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter

from rose_gen.assets.visibility import Placement, cut_cells, lab, unplaced

SIGMA = 1.0  # px: the blur every cell is seen through (drawn size)
SPOT = 1.0 / 6.0  # Gaussian sigma of the pooled spot, as a share of the cell ... (times 0.5, see _spot_sigma)
TOLERANCE = 1  # px: a contour displaced this far (resampling rounding after the jitter is undone) costs nothing
NOISE_QUANTILE = 0.9  # the majority's high quantile read as the scene's noise
NOISE_FLOOR = 1.0  # ΔE: the noise of a scene whose majority cells are identical (about a just-noticeable difference)
MARGIN = 2.5  # an exception must be this many times the noise (calibrated by looking; README)


@dataclass(frozen=True)
class CellPerceptibility:
    """One exception cell: its distance to the majority reference and its ratio to the noise."""

    cell: tuple[int, int]
    distance: float
    ratio: float
    perceptible: bool


@dataclass(frozen=True)
class ScenePerceptibility:
    """A scene judged by the rule: the noise scale, the margin applied and every exception's verdict."""

    noise: float
    margin: float
    majority: tuple[float, ...]  # every majority cell's distance (row-major)
    cells: tuple[CellPerceptibility, ...]

    @property
    def perceptible(self) -> bool:
        return all(c.perceptible for c in self.cells)

    def reasons(self) -> list[str]:
        """One line per exception that fails: where, its distance, the noise and the margin."""
        return [f"cell R{c.cell[0]}C{c.cell[1]}: stands out {c.ratio:.2f}x the majority's own variation "
                f"(distance {c.distance:.2f} dE, noise {self.noise:.2f} dE; needs {self.margin:g}x)"
                for c in self.cells if not c.perceptible]


def _spot_sigma(cell: int) -> float:
    return max(1.0, 0.5 * SPOT * cell)


def _looks(cells: np.ndarray) -> np.ndarray:
    """(n, cell, cell, 3) uint8 RGB cells -> their blurred CIELAB, float32."""
    out = lab(cells).astype(np.float32)
    return gaussian_filter(out, (0, SIGMA, SIGMA, 0))


def _squared_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared CIELAB distance of channel-first planes (3, ...), summed channel by channel: the
    same float32 sums numpy's reduction over a trailing axis of 3 makes, ~4x faster."""
    d2 = a[0] - b[0]
    d2 *= d2
    for ch in (1, 2):
        part = a[ch] - b[ch]
        part *= part
        d2 += part
    return d2


def tolerant_differences(cells: np.ndarray, reference: np.ndarray, tol: int) -> np.ndarray:
    """(n, h, w): per pixel of every cell (cells (n, h, w, 3), reference (h, w, 3), CIELAB), the
    larger of two tolerant distances: from the cell's pixel to the closest reference pixel
    within ``tol`` px, and from the reference's pixel to the closest cell pixel (edge-padded
    both ways), so a contour displaced by resampling rounding costs nothing.

    Each (cell, reference) pixel pair at a shift of ``tol`` px or less is a term of both
    directions (|c(q) - r(q + d)| is the other direction's term at q + d, shift -d), so every
    pair is computed once. Edge padding adds no pair: the edge pixel that stands in for a
    neighbour off the edge is one a smaller shift reaches anyway. The square root is taken
    once, at the end (it is monotone, so the minimum commutes with it).
    """
    n, h, w, _ = cells.shape
    cell = np.ascontiguousarray(np.moveaxis(cells, -1, 0), dtype=np.float32)  # (3, n, h, w)
    ref = np.ascontiguousarray(np.moveaxis(reference, -1, 0), dtype=np.float32)  # (3, h, w)
    to_ref = np.full((n, h, w), np.inf, dtype=np.float32)  # cell pixel -> nearest reference pixel
    from_ref = np.full((n, h, w), np.inf, dtype=np.float32)  # reference pixel -> nearest cell pixel
    for dy in range(-tol, tol + 1):
        for dx in range(-tol, tol + 1):
            # Cell pixels q whose neighbour q + (dy, dx) is inside the reference, and those neighbours.
            qy, qx = slice(max(0, -dy), h - max(0, dy)), slice(max(0, -dx), w - max(0, dx))
            ry, rx = slice(max(0, dy), h + min(0, dy)), slice(max(0, dx), w + min(0, dx))
            both = _squared_distance(cell[:, :, qy, qx], ref[:, ry, rx])
            np.minimum(to_ref[:, qy, qx], both, out=to_ref[:, qy, qx])
            np.minimum(from_ref[:, ry, rx], both, out=from_ref[:, ry, rx])
    return np.maximum(np.sqrt(to_ref, out=to_ref), np.sqrt(from_ref, out=from_ref))


def cell_distances(looks: np.ndarray, reference: np.ndarray, tol: int = TOLERANCE) -> np.ndarray:
    """Each cell's distance to ``reference``: ΔE at its most different pooled spot.

    ``looks``: (n, h, w, 3) blurred CIELAB cells; ``reference``: (h, w, 3). The per-pixel
    difference tolerates a displacement of ``tol`` px both ways (what the cell shows that the
    reference lacks nearby, and what the reference shows that the cell lacks), then is
    pooled over a spot (:data:`SPOT`) and read at its maximum.
    """
    n, h, w, _ = looks.shape
    diff = tolerant_differences(looks, reference, tol)
    pooled = gaussian_filter(diff, (0, _spot_sigma(h), _spot_sigma(h)), mode="nearest")
    return pooled.reshape(n, -1).max(axis=1)


def prepared_cells(image: np.ndarray, rows: int, cols: int, cell: int,
                   placements: Sequence[Placement] | None = None) -> np.ndarray:
    """(rows * cols, cell, cell, 3) uint8 cells, row-major, with the recorded jitter undone."""
    cells = cut_cells(image, rows, cols, cell).reshape(rows * cols, cell, cell, 3)
    if placements is None:
        return np.ascontiguousarray(cells)
    if len(placements) != rows * cols:
        raise ValueError(f"{len(placements)} cell placements for a {rows}x{cols} grid")
    return np.stack([unplaced(cells[i], p) for i, p in enumerate(placements)])


def judge_scene(image: np.ndarray, rows: int, cols: int, cell: int, target_cells: Sequence[Sequence[int]],
                placements: Sequence[Placement] | None = None, margin: float = MARGIN) -> ScenePerceptibility:
    """Judge every exception of a rendered grid image against the majority's own variation (module docstring)."""
    cells = prepared_cells(image, rows, cols, cell, placements)
    targets = [(int(r), int(c)) for r, c in target_cells]
    mask = np.zeros(rows * cols, dtype=bool)
    for r, c in targets:
        mask[(r - 1) * cols + (c - 1)] = True
    looks = _looks(cells)
    reference = np.median(looks[~mask], axis=0)
    dist = cell_distances(looks, reference)
    majority = dist[~mask]
    identical = bool((cells[~mask] == cells[~mask][:1]).all()) if majority.size else True
    noise = 0.0 if identical else max(NOISE_FLOOR, float(np.quantile(majority, NOISE_QUANTILE)))
    out = []
    for r, c in targets:
        d = float(dist[(r - 1) * cols + (c - 1)])
        ratio = d / noise if noise else (float("inf") if d > 0 else 0.0)
        out.append(CellPerceptibility((r, c), round(d, 4), round(ratio, 4), d > 0 and d >= margin * noise))
    return ScenePerceptibility(noise=round(noise, 4), margin=float(margin),
                               majority=tuple(round(float(v), 4) for v in majority), cells=tuple(out))
