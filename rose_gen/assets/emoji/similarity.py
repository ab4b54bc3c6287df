"""Comparing emoji tiles: ink thumbnails and their cosine similarity (pair mining), and the
visibility rule a pair of tiles must pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from rose_gen.assets.emoji.artwork import ink_fraction

THUMB_SIDE = 32

THUMB_SIGMA = 1.5


def thumbnail(tile: Image.Image) -> np.ndarray:
    """Ink thumbnail of a tile: 1 - RGB/255, blurred (sigma 1.5 px), area-downsampled to 32x32x3."""
    from scipy.ndimage import gaussian_filter

    ink = 1.0 - np.asarray(tile.convert("RGB"), dtype=np.float64) / 255.0
    ink = gaussian_filter(ink, sigma=(THUMB_SIGMA, THUMB_SIGMA, 0))
    h, w, _ = ink.shape
    fy, fx = h // THUMB_SIDE, w // THUMB_SIDE
    if fy < 1 or fx < 1:
        raise ValueError(f"tile {w}x{h} is smaller than the {THUMB_SIDE} px thumbnail")
    ink = ink[: fy * THUMB_SIDE, : fx * THUMB_SIDE]
    return ink.reshape(THUMB_SIDE, fy, THUMB_SIDE, fx, 3).mean(axis=(1, 3))


def similarity_matrix(thumbs: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity (0-1) of stacked ink thumbnails, one matrix product."""
    flat = thumbs.reshape(len(thumbs), -1)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    unit = flat / np.maximum(norms, 1e-12)
    return np.clip(unit @ unit.T, 0.0, 1.0)


@dataclass(frozen=True)
class VisibilityRule:
    """When two emoji tiles count as visibly different (thresholds of rose_gen.assets.visibility)."""

    cell_size: int = 42
    min_ink: float = 0.02
    min_changed_fraction: float = 0.005
    max_ssim: float = 0.995

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None) -> VisibilityRule:
        """Defaults overridden by ``options`` keys of the same names."""
        opts = dict(options or {})
        unknown = sorted(set(opts) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown visibility option(s) {unknown}; known: {sorted(cls.__dataclass_fields__)}")
        return cls(**opts)


@dataclass(frozen=True)
class PairCheck:
    """Outcome of :func:`check_pair` (the numbers are recorded in the manifests)."""

    ink_a: float
    ink_b: float
    changed_fraction: float
    ssim: float
    visible: bool


def judge(ink_a: float, ink_b: float, changed_fraction: float, ssim: float, rule: VisibilityRule) -> bool:
    """True when both tiles are inked and their difference clears the rule's thresholds."""
    from rose_gen.assets.visibility import TileDifference, is_visible

    diff = TileDifference(changed_fraction=changed_fraction, ssim=ssim)
    return (min(ink_a, ink_b) >= rule.min_ink
            and is_visible(diff, min_changed_fraction=rule.min_changed_fraction, max_ssim=rule.max_ssim))


def check_pair(tile_a: Image.Image, tile_b: Image.Image, rule: VisibilityRule) -> PairCheck:
    """Non-blank and perceptually different at the rule's cell size (rose_gen.assets.visibility)."""
    from rose_gen.assets.visibility import tile_difference

    ink_a, ink_b = ink_fraction(tile_a), ink_fraction(tile_b)
    diff = tile_difference(tile_a, tile_b)
    return PairCheck(ink_a=ink_a, ink_b=ink_b, changed_fraction=diff.changed_fraction, ssim=diff.ssim,
                     visible=judge(ink_a, ink_b, diff.changed_fraction, diff.ssim, rule))
