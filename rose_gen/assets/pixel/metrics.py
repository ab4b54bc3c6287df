"""Shortcut measures for pixel-art tiles: can an exception be found without a careful look?

Pure functions over RGB(A) ``uint8`` arrays (an exception tile and its majority tile of
one size, or two sprites). The builder uses them to choose edits and pairs; the bench
(``bench/bench_pixel_shortcuts.py``) and the audit read a release with the same
definitions:

- :func:`changed_share`: share of the tile's pixels whose RGB differs at all.
- :func:`block_delta_e`: the largest CIELAB ΔE (CIE76) between the mean Lab colours of
  the two tiles over the nine third-by-third blocks of the cell; the exception *pops
  out* when it exceeds :data:`POP_OUT_DELTA_E` (visible at a glance on a blurred
  thumbnail).
- :func:`off_palette_share`: of the pixels that differ, the share whose new colour is
  farther than :data:`PALETTE_DELTA_E` from every colour of the majority tile (the
  cell background included). An edit is *mostly off-palette* above one half.
- :func:`colour_only`: the two silhouettes coincide (IoU at least
  :data:`SILHOUETTE_IOU`) and at least :data:`MAPPING_SHARE` of the differing pixels
  follow one colour-to-colour mapping, in either direction (two colours may merge into
  one): a palette swap, not a different shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from skimage.color import rgb2lab

POP_OUT_DELTA_E = 12.0
PALETTE_DELTA_E = 10.0
SILHOUETTE_IOU = 0.9
MAPPING_SHARE = 0.9
BLOCKS = 3


def _rgb(tile: np.ndarray) -> np.ndarray:
    arr = np.asarray(tile)
    return arr[..., :3] if arr.ndim == 3 else np.repeat(arr[..., None], 3, axis=2)


def lab_of(rgb: np.ndarray) -> np.ndarray:
    """CIELAB of ``uint8`` RGB values (any leading shape)."""
    arr = np.asarray(rgb, dtype=np.float64).reshape(-1, 1, 3) / 255.0
    return rgb2lab(arr).reshape(np.asarray(rgb).shape[:-1] + (3,))


def changed_mask(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixels whose RGB differs between two same-size tiles."""
    ra, rb = _rgb(a), _rgb(b)
    if ra.shape != rb.shape:
        raise ValueError(f"tiles differ in size: {ra.shape} vs {rb.shape}")
    return (ra != rb).any(axis=-1)


def changed_share(a: np.ndarray, b: np.ndarray) -> float:
    """Share of pixels whose RGB differs."""
    return float(changed_mask(a, b).mean())


def block_delta_e(a: np.ndarray, b: np.ndarray, blocks: int = BLOCKS) -> float:
    """Largest ΔE between the mean Lab colours of corresponding blocks (``blocks`` x ``blocks``)."""
    la, lb = lab_of(_rgb(a)), lab_of(_rgb(b))
    h, w = la.shape[:2]
    ys = np.linspace(0, h, blocks + 1).astype(int)
    xs = np.linspace(0, w, blocks + 1).astype(int)
    worst = 0.0
    for i in range(blocks):
        for j in range(blocks):
            ma = la[ys[i]:ys[i + 1], xs[j]:xs[j + 1]].reshape(-1, 3).mean(axis=0)
            mb = lb[ys[i]:ys[i + 1], xs[j]:xs[j + 1]].reshape(-1, 3).mean(axis=0)
            worst = max(worst, float(np.linalg.norm(ma - mb)))
    return worst


def pops_out(a: np.ndarray, b: np.ndarray, limit: float = POP_OUT_DELTA_E) -> bool:
    """True when some third-by-third block changes its mean colour by more than ``limit``."""
    return block_delta_e(a, b) > limit


def _distinct(rgb: np.ndarray) -> np.ndarray:
    return np.unique(rgb.reshape(-1, 3), axis=0)


def off_palette_share(majority: np.ndarray, exception: np.ndarray, tol: float = PALETTE_DELTA_E) -> float:
    """Share of the changed pixels whose new colour is not within ``tol`` ΔE of a majority colour."""
    ra, rb = _rgb(majority), _rgb(exception)
    changed = changed_mask(ra, rb)
    if not changed.any():
        return 0.0
    palette = lab_of(_distinct(ra))
    new, inverse = np.unique(rb[changed], axis=0, return_inverse=True)
    dist = np.linalg.norm(lab_of(new)[:, None, :] - palette[None, :, :], axis=-1).min(axis=1)
    return float((dist[inverse.ravel()] > tol).mean())


def colour_only_share(a: np.ndarray, b: np.ndarray, background: Sequence[int]) -> tuple[float, float]:
    """(silhouette IoU, share of differing pixels explained by one colour mapping a -> b).

    Silhouettes are the pixels unlike ``background``. The mapping sends each colour of
    ``a`` to the colour ``b`` most often shows on the pixels where both are drawn; pixels
    drawn in only one tile are never explained.
    """
    ra, rb = _rgb(a), _rgb(b)
    bg = np.asarray(background, dtype=ra.dtype).reshape(1, 1, 3)
    sa, sb = (ra != bg).any(axis=-1), (rb != bg).any(axis=-1)
    union = int((sa | sb).sum())
    iou = float((sa & sb).sum()) / union if union else 1.0
    differ = (ra != rb).any(axis=-1) & (sa | sb)
    n_differ = int(differ.sum())
    if n_differ == 0:
        return iou, 1.0
    both = sa & sb
    code_a = (ra[..., 0].astype(np.int64) << 16) | (ra[..., 1].astype(np.int64) << 8) | ra[..., 2]
    code_b = (rb[..., 0].astype(np.int64) << 16) | (rb[..., 1].astype(np.int64) << 8) | rb[..., 2]
    pairs = np.stack([code_a[both], code_b[both]], axis=1)
    uniq, counts = np.unique(pairs, axis=0, return_counts=True)
    order = np.lexsort((-counts, uniq[:, 0]))  # per source colour, the most frequent target first
    uniq = uniq[order]
    first = np.ones(len(uniq), dtype=bool)
    first[1:] = uniq[1:, 0] != uniq[:-1, 0]
    mapping = dict(zip(uniq[first, 0].tolist(), uniq[first, 1].tolist(), strict=True))
    mapped = np.vectorize(lambda c: mapping.get(c, -1), otypes=[np.int64])(code_a[differ & both])
    explained = int((mapped == code_b[differ & both]).sum())
    return iou, explained / n_differ


def colour_only(a: np.ndarray, b: np.ndarray, background: Sequence[int]) -> bool:
    """True when two tiles share one silhouette and differ only by a colour mapping (either way)."""
    iou, share = colour_only_share(a, b, background)
    if iou < SILHOUETTE_IOU:
        return False
    return share >= MAPPING_SHARE or colour_only_share(b, a, background)[1] >= MAPPING_SHARE


def sprite_grid(tile: np.ndarray, size: int = 32) -> np.ndarray:
    """The ``size`` x ``size`` source pixels of a nearest-neighbour stretched tile (one sample each)."""
    arr = np.asarray(tile)
    h, w = arr.shape[:2]
    rows = -(-np.arange(size) * h // size)  # first tile row of every source row
    cols = -(-np.arange(size) * w // size)
    return arr[rows][:, cols]
