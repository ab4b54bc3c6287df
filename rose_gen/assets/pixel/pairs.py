"""Choosing ROSE-PixelContent pairs: related sprites that differ in shape, not only in colour.

A candidate is two sprites of one family (atlas neighbours of similar silhouette and
palette, or members of one procedural family) whose similarity lies in the band and
whose 120 px tiles differ visibly. Among candidates, each sprite joins at most
:data:`MAX_PAIRS_PER_SPRITE` pairs, taken greedily in this order of preference:

1. not a palette swap (:func:`rose_gen.assets.pixel.metrics.colour_only` on the sprites drawn on
   the cell background): the same silhouette recoloured is found by colour alone;
2. does not pop out (:func:`rose_gen.assets.pixel.metrics.block_delta_e` at 120 px at most
   :data:`rose_gen.assets.pixel.metrics.POP_OUT_DELTA_E`);
3. similar palettes and different shapes: palette overlap minus silhouette IoU, highest
   first;
4. the candidate order given (atlas order), for ties.

Palette swaps are kept in the manifest, flagged ``colour_only``; the source leaves them
out unless its ``colour_only_pairs`` option asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import POP_OUT_DELTA_E, block_delta_e, colour_only
from rose_gen.assets.visibility import tile_difference

MAX_PAIRS_PER_SPRITE = 2


@dataclass(frozen=True)
class PairMeasures:
    """What a candidate pair measures (see the module docstring)."""

    silhouette_iou: float
    palette_overlap: float
    colour_only: bool
    block_delta_e: float
    changed_fraction: float
    ssim: float
    visible: bool


def measure_pair(a: np.ndarray, b: np.ndarray) -> PairMeasures:
    """Silhouette IoU, palette overlap, palette-swap test, pop-out and visibility of two sprites."""
    ma, mb = px_sprite.solid_mask(a), px_sprite.solid_mask(b)
    union = int((ma | mb).sum())
    iou = float((ma & mb).sum()) / union if union else 1.0
    overlap = float(np.minimum(px_sprite.palette_histogram(a), px_sprite.palette_histogram(b)).sum())
    small_a, small_b = (np.asarray(px_sprite.render_sprite(s, px_sprite.TILE)) for s in (a, b))
    swap = colour_only(small_a, small_b, px_sprite.BACKGROUND)
    ta, tb = px_sprite.render_sprite(a, px_sprite.MIN_CELL_SIZE), px_sprite.render_sprite(b, px_sprite.MIN_CELL_SIZE)
    diff = tile_difference(ta, tb)
    return PairMeasures(round(iou, 6), round(overlap, 6), swap, round(block_delta_e(np.asarray(ta), np.asarray(tb)), 3),
                        round(diff.changed_fraction, 6), round(diff.ssim, 6), px_sprite.clears_visibility(diff, px_sprite.EDIT_MARGIN))


def content_pairs(sprites: Sequence[px.LibrarySprite], candidates: Iterable[tuple[int, int, float]],
                  band: tuple[float, float] = px.CONTENT_BAND) -> list[dict[str, Any]]:
    """Related-but-distinct pairs of ``sprites`` chosen from ``(i, j, similarity)`` candidates."""
    scored = []
    for rank, (i, j, sim) in enumerate(candidates):
        a, b = sprites[i], sprites[j]
        if not band[0] <= sim <= band[1] or a.entry["family"] != b.entry["family"]:
            continue
        m = measure_pair(a.pixels, b.pixels)
        if not m.visible:
            continue
        preference = (m.colour_only, m.block_delta_e > POP_OUT_DELTA_E,
                      -round(m.palette_overlap - m.silhouette_iou, 6), rank)
        scored.append((preference, i, j, sim, m))
    scored.sort(key=lambda t: t[0])
    used: dict[int, int] = {}
    pairs = []
    for _, i, j, sim, m in scored:
        if used.get(i, 0) >= MAX_PAIRS_PER_SPRITE or used.get(j, 0) >= MAX_PAIRS_PER_SPRITE:
            continue
        used[i], used[j] = used.get(i, 0) + 1, used.get(j, 0) + 1
        a, b = sprites[i], sprites[j]
        ida, idb = sorted((a.entry["id"], b.entry["id"]))
        pairs.append({"a": ida, "b": idb, "family": a.entry["family"], "source": a.entry["source"],
                      "similarity": sim, "changed_fraction": m.changed_fraction, "ssim": m.ssim,
                      "silhouette_iou": m.silhouette_iou, "palette_overlap": m.palette_overlap,
                      "colour_only": m.colour_only, "block_delta_e": m.block_delta_e})
    return pairs
