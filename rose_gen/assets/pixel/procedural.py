"""Procedural sprites: seeded families of related 32 px creatures (no artwork needed).

A family shares a body plan and palette; its members differ in shape. Everything derives
from the seed recorded in the manifest, so the pixels are reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import ndimage

from rose_gen.assets.pixel.sprite import TILE, PixelAssetError, canonical, pixel_sha256
from rose_gen.core.rng import seed_sequence


def _hsv_to_rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    i = int(h * 6) % 6
    f = h * 6 - int(h * 6)
    p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
    r, g, b = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i]
    return int(round(r * 255)), int(round(g * 255)), int(round(b * 255))


def _palette(rng: np.random.Generator) -> np.ndarray:
    """Outline, shadow, mid, light, accent (RGB rows)."""
    hue = float(rng.uniform(0, 1))
    sat = float(rng.uniform(0.45, 0.85))
    accent_hue = (hue + float(rng.uniform(0.35, 0.65))) % 1.0
    return np.array([
        _hsv_to_rgb(hue, min(1.0, sat + 0.1), 0.16),
        _hsv_to_rgb(hue, sat, 0.45),
        _hsv_to_rgb(hue, sat, 0.70),
        _hsv_to_rgb(hue, sat * 0.55, 0.95),
        _hsv_to_rgb(accent_hue, 0.9, 0.95),
    ], dtype=np.uint8)


def _smooth(mask: np.ndarray, steps: int = 2) -> np.ndarray:
    for _ in range(steps):
        n = ndimage.convolve(mask.astype(np.int8), np.ones((3, 3), dtype=np.int8), mode="constant")
        mask = n >= 5
    return mask


def _paint(body: np.ndarray, palette: np.ndarray, accent: np.ndarray) -> np.ndarray:
    """Outline, shading (light from the top left) and accent pixels on a body mask."""
    size = body.shape[0]
    out = np.zeros((size, size, 4), dtype=np.uint8)
    cross = ndimage.generate_binary_structure(2, 1)
    outline = ndimage.binary_dilation(body, structure=cross) & ~body
    up_left = np.zeros_like(body)
    up_left[1:, 1:] = ~body[:-1, :-1]
    up_left[0, :] = True
    up_left[:, 0] = True
    down_right = np.zeros_like(body)
    down_right[:-1, :-1] = ~body[1:, 1:]
    down_right[-1, :] = True
    down_right[:, -1] = True
    shade = np.full(body.shape, 2)
    shade[body & down_right] = 1
    shade[body & up_left & ~down_right] = 3
    out[body, :3] = palette[shade[body]]
    out[body & accent, :3] = palette[4]
    out[body, 3] = 255
    out[outline, :3] = palette[0]
    out[outline, 3] = 255
    return out


def procedural_family(seed: int, family: int, members: int = 4, size: int = TILE) -> list[np.ndarray]:
    """``members`` related sprites of one procedural family (deterministic for seed, family).

    Members share palette, symmetry and most of the silhouette; each member re-draws a
    share of the silhouette noise and may move its accent.
    """
    base_rng = np.random.Generator(np.random.PCG64(seed_sequence(seed, "pixel-procedural", "family", family)))
    palette = _palette(base_rng)
    height, half = size - 6, (size - 6) // 2
    base_noise = base_rng.uniform(0, 1, size=(height, half))
    accent_base = base_rng.uniform(0, 1, size=(height, half)) < 0.06
    sprites = []
    for m in range(members):
        rng = np.random.Generator(np.random.PCG64(seed_sequence(seed, "pixel-procedural", f"member-{family}", m)))
        noise = base_noise.copy()
        if m:
            redraw = rng.uniform(0, 1, size=noise.shape) < 0.22
            noise[redraw] = rng.uniform(0, 1, size=int(redraw.sum()))
        yy, xx = np.mgrid[0:height, 0:half]
        r = np.sqrt(((yy - (height - 1) / 2) / (height / 2)) ** 2 + ((xx - half + 0.5) / half) ** 2)
        half_mask = _smooth(noise > (r * 1.05 - 0.15))
        accent = accent_base if m % 2 == 0 else np.roll(accent_base, int(rng.integers(1, 4)), axis=0)
        body = np.zeros((size, size), dtype=bool)
        acc = np.zeros((size, size), dtype=bool)
        full = np.concatenate([half_mask, half_mask[:, ::-1]], axis=1)
        full_acc = np.concatenate([accent, accent[:, ::-1]], axis=1)
        body[3:3 + height, 3:3 + 2 * half] = full
        acc[3:3 + height, 3:3 + 2 * half] = full_acc
        lab, k = ndimage.label(body)
        if k > 1:  # keep the largest connected part so the sprite is one object
            sizes = ndimage.sum(body, lab, range(1, k + 1))
            body = lab == (int(np.argmax(sizes)) + 1)
        sprites.append(canonical(_paint(body, palette, acc)))
    return sprites


def procedural_sprite_pixels(entry: Mapping[str, Any], seed: int) -> np.ndarray:
    """The canvas of a procedural sprite manifest entry, refused unless its sha256 matches."""
    pixels = procedural_family(seed, int(entry["family_index"]), int(entry["members"]))[int(entry["member"])]
    got = pixel_sha256(pixels)
    if got != entry["sha256"]:
        raise PixelAssetError(
            f"sprite {entry['id']}: procedural generator gives {got[:12]}…, manifest has {entry['sha256'][:12]}…; "
            "numpy's generator changed or the manifest is stale: regenerate it with assets_manifest/build/build_pixel.py")
    return pixels
