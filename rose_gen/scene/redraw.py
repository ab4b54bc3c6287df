"""Exceptions visible where they are drawn: a planned scene whose exception is not is redrawn.

A pool's pairs were verified once, at one reference size. A scene draws them at its own
cell size, and a difficulty preset then shrinks, jitters and degrades them, so after
planning every scene is checked as it will be rendered: :func:`check_drawn` renders
the scene's base image (or, for a plain grid, its distinct tiles, which is the same
thing), and judges every exception cell with :func:`rose_gen.assets.visibility.scene_visibility`,
the measure ``rose-audit`` applies to the release (with the recorded jitter undone and the
thresholds raised to the scene's own noise floor).

A scene that fails is redrawn with another pair (:func:`redraw_index`): first from the
part of the preset's band that no scene of the subset uses (a scene-specific permutation
of it, so the subset's other pairs are not reused), then, after :data:`BAND_DRAWS`
draws, from the same part of the whole pool (less similar pairs, more visible). Under a
preset that jitters or degrades, the last :data:`SOFTENING` draws take the first draws'
pairs again and soften the jitter and degradation step by step, down to none (recorded on the
rows as ``difficulty_preset.softened``; the generator says so on stderr and ``rose-audit``
counts them), since some sources' exceptions (a small PixelEdit edit) survive no pair at
the preset's full degradation. At most
:data:`MAX_DRAWS` draws are made; each rejected one is recorded on the scene's rows
(:data:`ROW_FIELD`), and a scene with no visible draw stops planning with one line.
Every draw comes from ``scene_rng(seed, subset, k, "redraw")``, so a scene is still
planned alone and identically for any worker count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rose_gen.assets import perceptibility
from rose_gen.assets.visibility import Thresholds, scene_visibility, tile_difference, why_invisible
from rose_gen.core.rng import scene_rng
from rose_gen.core.schema import SceneSpec
from rose_gen.sources.base import VisualSource

ROW_FIELD = "visibility_redraws"  # row column listing the draws a scene rejected (absent: none)
MAX_DRAWS = 16  # the first draw and up to 15 replacements
BAND_DRAWS = 8  # draws from the preset's band before the whole pool is used
# Under a preset that jitters or degrades, the last draws take the first draws' pairs again and soften
# the jitter and degradation by these factors (1: as the preset says, 0: none), so a scene whose
# exceptions no pair makes perceptible at the preset's full strength is still made, and says so.
SOFTENING: tuple[float, ...] = (0.75, 0.5, 0.25, 0.0, 0.0, 0.0)


def softening(draw: int, softenable: bool) -> tuple[float, int]:
    """(the strength of the jitter and degradation, 1 = the preset's own; the pair draw) of draw
    ``draw``. Softened draws take the pairs of draws 0, 1, 2, ... again."""
    first = MAX_DRAWS - len(SOFTENING)
    if softenable and draw >= first:
        return SOFTENING[draw - first], draw - first
    return 1.0, draw


@dataclass(frozen=True, eq=False)
class DrawnCheck:
    """A scene judged as rendered: why some exception is invisible (empty: all visible), and the
    pixels it was judged on, which the renderer reuses instead of drawing them again.

    ``tiles`` are the scene's distinct tiles as composed (:func:`rose_gen.render.compose.scene_tiles`);
    ``base`` is the whole base image when the preset jitters or degrades it, else None.
    """

    reasons: tuple[str, ...]
    tiles: tuple[np.ndarray, ...]
    base: np.ndarray | None = None


def check_drawn(scene: SceneSpec, source: VisualSource, thresholds: Thresholds | None = None, *,
                perceptible: bool = True) -> DrawnCheck:
    """Judge every exception of ``scene`` as it will be rendered; ``reasons`` holds one line per
    invisible or imperceptible cell, empty when all pass.

    Two rules, both on the pixels as drawn: the visibility measure
    (:func:`rose_gen.assets.visibility.scene_visibility`, absolute thresholds) and, unless
    ``perceptible`` is False, the perceptibility rule
    (:func:`rose_gen.assets.perceptibility.judge_scene`: every exception stands out from the
    majority cells' own variation by :data:`rose_gen.assets.perceptibility.MARGIN`). On a
    plain grid the majority cells are one tile, with no variation to stand out from, so the
    visibility measure alone decides there (the rule would pass any drawn difference).

    Scenes with jitter or degradation are rendered whole and judged like a release image
    (the recorded jitter draws undone, :func:`rose_gen.render.degrade.scene_placements`); on a
    plain grid every cell of a role is the same tile, so each distinct exception tile is
    compared with the majority tile (what :func:`scene_visibility` computes there).
    """
    from rose_gen.render.compose import scene_tiles
    from rose_gen.render.degrade import needs_preset_render, preset_base_image, scene_placements

    tiles = tuple(scene_tiles(scene, source))
    record = scene.extra.get("preset") or {}
    if needs_preset_render(scene) and (record.get("jitter") or record.get("degrade")):
        image = preset_base_image(scene, source, tiles=tiles)
        placements = scene_placements(scene)
        seen = scene_visibility(image, scene.rows, scene.cols, scene.cell_size, scene.target_cells,
                                thresholds=thresholds, placements=placements)
        reasons = seen.reasons()
        if perceptible and not reasons:  # an invisible exception already rejects the draw
            judged = perceptibility.judge_scene(image, scene.rows, scene.cols, scene.cell_size, scene.target_cells,
                                                placements)
            reasons += [f"imperceptible {why}" for why in judged.reasons()]
        return DrawnCheck(tuple(reasons), tiles, image)
    reasons = []
    for i, tile in enumerate(tiles[1:], start=1):
        why = why_invisible(tile_difference(tiles[0], tile), thresholds)
        if why:
            reasons.append(f"{'target' if i == 1 else 'second target'} tile: {why}")
    return DrawnCheck(tuple(reasons), tiles)


def redraw_index(seed: int, subset: str, k: int, draw: int, pool_size: int, n_scenes: int) -> int:
    """Pool position (into the subset's pair order) of replacement ``draw`` (1, 2, ...) of scene k.

    Candidates are the positions no scene of the subset takes (``n_scenes`` onwards), or
    every position when the pool has no such spare part, in a permutation drawn for the
    scene; later draws walk further along it.
    """
    spare = list(range(n_scenes, pool_size)) if pool_size > n_scenes else list(range(pool_size))
    perm = scene_rng(seed, subset, k, "redraw").permutation(len(spare))
    return spare[int(perm[(draw - 1) % len(spare)])]


SHOWN_REASONS = 2  # invisible cells named in a rejection record; the rest are counted


def rejection(scene: SceneSpec, draw: int, reasons: Sequence[str]) -> dict[str, Any]:
    """The row record of one rejected draw: which pair, and why (the first cells that failed)."""
    why = "; ".join(reasons[:SHOWN_REASONS])
    if len(reasons) > SHOWN_REASONS:
        why += f"; and {len(reasons) - SHOWN_REASONS} more cell(s)"
    return {"draw": draw, "pair_key": scene.pair.pair_key, "majority": scene.pair.majority,
            "target": scene.pair.target, "reason": why}
