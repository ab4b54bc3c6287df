"""Sprite arrays: the 32 px RGBA sprite, its checks, masks, similarity, drawing into a cell, and
whether an edit of it is visible.

Every sprite source (atlas slicing, CDDA, procedural, user folders) reduces to RGBA ``uint8``
arrays handled here.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from rose_gen.assets.visibility import (
    DEFAULT_THRESHOLDS,
    TileDifference,
    is_visible,
    tile_difference,
)
from rose_gen.core.errors import AssetError

TILE = 32

SOLID_ALPHA = 128  # a pixel counts as part of the sprite from this alpha up

MIN_SOLID_PIXELS = 100  # ~10% of a 32x32 tile: anything smaller is "near-empty"

MIN_SIDE = 8

MIN_COLOURS = 4

BACKGROUND = (208, 208, 208)  # neutral cell background (luma ~0.82)

MIN_CELL_SIZE = 120  # smallest PixelEdit / PixelContent cell in v0.1


class PixelAssetError(AssetError):
    """A sprite sheet or user image is missing, unreadable or invalid (one-line message)."""


@dataclass(frozen=True)
class Sprite:
    """One sprite: where it comes from and the sha256 of its canonical pixels."""

    sprite_id: str  # e.g. "crawl-main-0123", "proc-f007-m2", "user-knight.png"
    source: str  # "crawl" | "procedural" | "user"
    sheet: str  # atlas stem, "procedural", or the user folder name
    x: int  # offset of the piece in the sheet (0 for generated sprites)
    y: int
    w: int  # size of the piece in the sheet (before centring on the canvas)
    h: int
    sha256: str  # of canonical RGBA canvas bytes, see :func:`pixel_sha256`
    licence: str
    family: str
    solid_pixels: int


def canonical(rgba: np.ndarray) -> np.ndarray:
    """RGBA copy with the colour of fully transparent pixels cleared (hash-stable)."""
    out = np.ascontiguousarray(rgba, dtype=np.uint8).copy()
    out[out[..., 3] == 0] = 0
    return out


def pixel_sha256(rgba: np.ndarray) -> str:
    """sha256 over shape and canonical RGBA bytes."""
    arr = canonical(rgba)
    digest = hashlib.sha256(f"{arr.shape[0]}x{arr.shape[1]}:".encode())
    digest.update(arr.tobytes())
    return digest.hexdigest()


def load_rgba(path: Path) -> np.ndarray:
    """Load an image file as an RGBA uint8 array; a bad file is one clear line."""
    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGBA"), dtype=np.uint8).copy()
    except FileNotFoundError:
        raise PixelAssetError(f"{path}: file not found") from None
    except OSError as exc:
        raise PixelAssetError(f"{path}: not a readable image ({exc})") from None


def is_substantial(rgba: np.ndarray) -> bool:
    """True when a piece is a real sprite, not a near-empty fragment or a flat blob."""
    solid = rgba[..., 3] >= SOLID_ALPHA
    if int(solid.sum()) < MIN_SOLID_PIXELS:
        return False
    ys, xs = np.nonzero(solid)
    if ys.max() - ys.min() + 1 < MIN_SIDE or xs.max() - xs.min() + 1 < MIN_SIDE:
        return False
    colours, counts = np.unique(rgba[solid][:, :3], axis=0, return_counts=True)
    return int((counts >= 4).sum()) >= MIN_COLOURS


def centre_on_canvas(piece: np.ndarray, size: int = TILE) -> np.ndarray:
    """Place an RGBA piece (at most ``size`` on each side) in the middle of a blank canvas."""
    h, w = piece.shape[:2]
    canvas = np.zeros((size, size, 4), dtype=np.uint8)
    y0, x0 = (size - h) // 2, (size - w) // 2
    canvas[y0:y0 + h, x0:x0 + w] = piece
    return canvas


def solid_mask(rgba: np.ndarray) -> np.ndarray:
    """Pixels that belong to the sprite (alpha at least SOLID_ALPHA)."""
    return rgba[..., 3] >= SOLID_ALPHA


def palette_histogram(rgba: np.ndarray, levels: int = 4) -> np.ndarray:
    """Normalised colour histogram of the solid pixels (``levels`` per channel)."""
    rgb = rgba[solid_mask(rgba)][:, :3].astype(np.int64) * levels // 256
    idx = (rgb[:, 0] * levels + rgb[:, 1]) * levels + rgb[:, 2]
    hist = np.bincount(idx, minlength=levels**3).astype(np.float64)
    return hist / max(hist.sum(), 1.0)


def sprite_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Similarity in [0, 1]: mean of silhouette IoU and palette histogram intersection."""
    ma, mb = solid_mask(a), solid_mask(b)
    union = int((ma | mb).sum())
    iou = float((ma & mb).sum()) / union if union else 1.0
    pal = float(np.minimum(palette_histogram(a), palette_histogram(b)).sum())
    return round(0.5 * iou + 0.5 * pal, 6)


def nearest_index(src: int, dst: int) -> np.ndarray:
    """Source index for every destination pixel of a nearest-neighbour resize."""
    return (np.arange(dst) * src) // dst


def render_sprite(rgba: np.ndarray, cell_size: int, background: Sequence[int] = BACKGROUND) -> Image.Image:
    """Nearest-neighbour 'stretch' of a sprite to a ``cell_size`` square RGB tile on ``background``.

    Each sprite pixel is composited on the background once, then repeated (compositing is
    per pixel, so this equals compositing every cell pixel).
    """
    h, w = rgba.shape[:2]
    src = np.asarray(rgba).astype(np.uint16)
    alpha = src[..., 3:4]
    bg = np.asarray(background, dtype=np.uint16).reshape(1, 1, 3)
    rgb = ((src[..., :3] * alpha + bg * (255 - alpha) + 127) // 255).astype(np.uint8)
    return Image.fromarray(rgb[nearest_index(h, cell_size)][:, nearest_index(w, cell_size)], "RGB")


def edit_difference(a: np.ndarray, b: np.ndarray, cell_size: int = MIN_CELL_SIZE) -> TileDifference:
    """Perceptual difference of two sprites rendered as cells of ``cell_size``."""
    return tile_difference(render_sprite(a, cell_size), render_sprite(b, cell_size))

EDIT_MARGIN = 1.5  # edits and pairs must clear the visibility thresholds with this safety factor


def clears_visibility(diff: TileDifference, margin: float = 1.0) -> bool:
    """:func:`is_visible` with every default threshold made ``margin`` times stricter."""
    return is_visible(diff, DEFAULT_THRESHOLDS.scaled(margin))


def grow_patch(eligible: np.ndarray, anchor: tuple[int, int], size: int) -> np.ndarray:
    """A 4-connected patch of up to ``size`` eligible pixels grown from ``anchor``.

    Pixels join in order of Euclidean distance to the anchor (ties by row, column), and
    only next to pixels already in the patch, so the patch is contiguous by construction.
    """
    h, w = eligible.shape
    ay, ax = anchor
    patch = np.zeros_like(eligible, dtype=bool)
    if not eligible[ay, ax]:
        return patch
    heap = [(0, ay, ax)]
    queued = {(ay, ax)}
    taken = 0
    while heap and taken < size:
        _, y, x = heapq.heappop(heap)
        patch[y, x] = True
        taken += 1
        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
            if 0 <= ny < h and 0 <= nx < w and eligible[ny, nx] and (ny, nx) not in queued:
                queued.add((ny, nx))
                heapq.heappush(heap, ((ny - ay) ** 2 + (nx - ax) ** 2, ny, nx))
    return patch


def encode_mask(mask: np.ndarray) -> str:
    """Compact text form of a boolean mask (row-major bits, base64)."""
    return base64.b64encode(np.packbits(mask.astype(bool), axis=None).tobytes()).decode("ascii")


def decode_mask(text: str, h: int, w: int) -> np.ndarray:
    """Inverse of :func:`encode_mask` for an ``h`` x ``w`` mask."""
    bits = np.unpackbits(np.frombuffer(base64.b64decode(text), dtype=np.uint8))[: h * w]
    return bits.reshape(h, w).astype(bool)
