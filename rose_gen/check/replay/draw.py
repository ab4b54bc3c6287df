"""Drawing a replayed scene: base image (and cue image when a T4 row names the rectangle)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PIL import Image

from rose_gen.assets.visibility import is_visible, tile_difference
from rose_gen.check.replay.assets import Substitution
from rose_gen.check.replay.inputs import ReplayOptions
from rose_gen.core.schema import CUE_TEMPLATE, SceneSpec, base_image_record, cue_image_record
from rose_gen.render.compose import (
    CUE_OVERLAYS,
    compose_grid,
    composed_tiles,
    encode_png,
    render_grid_images,
    tile_array,
)
from rose_gen.sources import SOURCES, AssetPair

DEFAULT_CUE = "OUTLINE_BOX"
# A cell counts as visibly different when its luminance differs (rose_gen.assets.visibility) or,
# for colour-only changes that luminance misses (an orange vs a blue diamond), when at least
# COLOUR_MIN_FRACTION of its pixels move by more than COLOUR_LEVEL in some RGB channel.
COLOUR_LEVEL = 48
COLOUR_MIN_FRACTION = 0.01


@dataclass(frozen=True)
class RenderedReplay:
    """One scene's images by release path, its status and the tile visibility measured."""

    images: dict[str, bytes]
    status: str
    visible: bool | None = None


def visibly_differs(a: Image.Image | np.ndarray, b: Image.Image | np.ndarray) -> bool:
    """Luminance visibility of :mod:`rose_gen.assets.visibility`, or a clear colour change."""
    if is_visible(tile_difference(a, b)):
        return True
    ra = np.asarray(a.convert("RGB") if isinstance(a, Image.Image) else a, dtype=np.int16)
    rb = np.asarray(b.convert("RGB") if isinstance(b, Image.Image) else b, dtype=np.int16)
    return float(np.mean(np.abs(ra - rb).max(axis=-1) > COLOUR_LEVEL)) >= COLOUR_MIN_FRACTION


def cue_style(scene: SceneSpec) -> tuple[str, Substitution | None]:
    """The overlay we draw for the scene's cue_type (ours when v0.1 names one we lack)."""
    if scene.cue_type in CUE_OVERLAYS:
        return scene.cue_type, None
    return DEFAULT_CUE, Substitution("cue style", scene.cue_type, DEFAULT_CUE, "stand_in",
                                     f"cue_type {scene.cue_type!r} is not one of our overlays "
                                     f"({', '.join(CUE_OVERLAYS.names())})")


def render_replay(scene: SceneSpec, pair: AssetPair, options: ReplayOptions,
                  cue_color: tuple[int, int, int] | None = None) -> RenderedReplay:
    """Base image (and cue image when the T4 rectangle is known) drawn by the scene's source.

    ``cue_color``: the colour the released cue image recorded (``image_cue_color``), else the option's.
    """
    source = SOURCES.get(scene.source)
    # Composed as rose-gen composes a scene: tiles that reach into the frame margin are inset.
    maj_arr, tgt_arr = composed_tiles(source, [(pair, "majority", "majority tile"), (pair, "target", "target tile")],
                                      scene.cell_size)
    majority, target = Image.fromarray(maj_arr), Image.fromarray(tgt_arr)
    visible = visibly_differs(majority, target)
    base_rec = base_image_record(scene)
    if CUE_TEMPLATE in scene.regions:
        p = scene.regions[CUE_TEMPLATE].params
        rect = (int(p["r1"]), int(p["r2"]), int(p["c1"]), int(p["c2"]))
        cue_settings = options.cue if cue_color is None else replace(options.cue, color=cue_color)
        base, cue = render_grid_images(majority, target, rows=scene.rows, cols=scene.cols,
                                       cell_size=scene.cell_size, target_cells=scene.target_cells,
                                       cue_rect=rect, cue_type=cue_style(scene)[0], cue=cue_settings)
        images = {base_rec.path: encode_png(base, options.png_compress_level, options.png_encoder),
                  cue_image_record(scene).path: encode_png(cue, options.png_compress_level, options.png_encoder)}
        return RenderedReplay(images, "rendered", visible)
    maj = tile_array(majority, scene.cell_size, "majority tile")
    tgt = tile_array(target, scene.cell_size, "target tile")
    base = compose_grid(maj, tgt, scene.rows, scene.cols, scene.target_cells)
    return RenderedReplay({base_rec.path: encode_png(base, options.png_compress_level, options.png_encoder)},
                          "rendered_base_only (no T4 row names the cue rectangle)", visible)
