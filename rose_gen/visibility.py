"""Perceptual visibility of the difference between two tiles at the scene's cell size.

"Some pixel differs" is not enough: a benchmark exception must be visible to a careful
human. We compare the two tiles as a person would at that size: luminance, lightly
blurred (sub-pixel noise and anti-aliasing fade), and report two numbers:

- ``changed_fraction``: share of the tile whose blurred luminance differs by more than
  ``level`` (0-1 scale);
- ``ssim``: structural similarity of the blurred luminance images.

Sources and the release audit share this one measure (thresholds live in config).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter
from skimage.metrics import structural_similarity

# Rec. 601 luma weights.
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float64)


@dataclass(frozen=True)
class TileDifference:
    """How different two tiles look; see the module docstring."""

    changed_fraction: float
    ssim: float


def luminance(tile: Image.Image | np.ndarray) -> np.ndarray:
    """Float luminance in [0, 1] of an RGB(A) image or array (alpha composited on white)."""
    arr = np.asarray(tile.convert("RGBA") if isinstance(tile, Image.Image) else tile, dtype=np.float64)
    if arr.ndim == 2:
        return arr / 255.0
    rgb = arr[..., :3]
    if arr.shape[-1] == 4:
        alpha = arr[..., 3:4] / 255.0
        rgb = rgb * alpha + 255.0 * (1.0 - alpha)
    return (rgb @ _LUMA) / 255.0


def tile_difference(a: Image.Image | np.ndarray, b: Image.Image | np.ndarray, *, sigma: float = 1.0,
                    level: float = 0.1) -> TileDifference:
    """Compare two same-size tiles; see the module docstring for the two measures."""
    la, lb = luminance(a), luminance(b)
    if la.shape != lb.shape:
        raise ValueError(f"tiles differ in size: {la.shape} vs {lb.shape}")
    ba, bb = gaussian_filter(la, sigma), gaussian_filter(lb, sigma)
    changed = float(np.mean(np.abs(ba - bb) > level))
    win = min(7, min(la.shape) // 2 * 2 - 1)
    ssim = float(structural_similarity(ba, bb, data_range=1.0, win_size=win)) if win >= 3 else 1.0
    return TileDifference(changed_fraction=changed, ssim=ssim)


def is_visible(diff: TileDifference, *, min_changed_fraction: float = 0.005, max_ssim: float = 0.995) -> bool:
    """True when the difference clears both thresholds (defaults suit 42-156 px cells)."""
    return diff.changed_fraction >= min_changed_fraction and diff.ssim <= max_ssim
