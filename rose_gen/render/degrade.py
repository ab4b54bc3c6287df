"""Rendering under a difficulty preset: second identity, per-cell jitter, image degradation.

Used by :func:`rose_gen.render.compose.render_scene` for scenes whose ``extra["preset"]`` asks for
any of these (see :mod:`rose_gen.scene.presets`); standard scenes never come here.

- Each distinct tile (majority, target, second target) is rendered once by the source.
- Jitter: every cell draws, from the scene's recorded jitter seed, a scale in
  ``[min_scale, 1]`` and an offset of up to ``max_offset * cell`` pixels in x and y, in
  one vectorised draw. The scaled tile (bilinear, cached per distinct size) is pasted at
  the cell centre plus the offset on the tile's background colour, clipped to the cell
  less its frame margin (:func:`rose_gen.render.compose.tile_margin`), which stays clear.
- Degradation: the finished base image is downscaled by the recorded factor and scaled
  back (bilinear), then JPEG round-tripped at the recorded quality (Pillow, 4:2:0). The
  cue is drawn after that, so the highlight stays exactly on the T4 rectangle.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from PIL import Image

from rose_gen.core.schema import SceneSpec
from rose_gen.render.compose import (
    RenderedScene,
    RenderSettings,
    apply_cue,
    cue_rectangle,
    encode_png,
    scene_cue_color,
    scene_tiles,
    tile_background,
    tile_margin,
)
from rose_gen.sources.base import VisualSource


def cell_index(rows: int, cols: int, scene: SceneSpec, second_cells: list) -> np.ndarray:
    """(rows, cols) tile index per cell: 0 majority, 1 target, 2 second target."""
    index = np.zeros((rows, cols), dtype=np.int64)
    for r, c in scene.target_cells:
        index[r - 1, c - 1] = 1
    for r, c in second_cells:
        index[int(r) - 1, int(c) - 1] = 2
    return index


def jitter_draws(seed: int, n_cells: int, cell: int, max_offset: float, min_scale: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (row-major): scaled size in px, x offset, y offset (one vectorised draw each)."""
    rng = np.random.default_rng(int(seed))
    scale = rng.uniform(min_scale, 1.0, size=n_cells)
    limit = int(round(max_offset * cell))
    dx = rng.integers(-limit, limit + 1, size=n_cells)
    dy = rng.integers(-limit, limit + 1, size=n_cells)
    size = np.clip(np.rint(scale * cell).astype(np.int64), 1, cell)
    return size, dx, dy


def cell_placements(rows: int, cols: int, cell: int, params: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """Per cell (row-major): where its jittered content is drawn, ``(size, top, left)`` in cell
    pixels (a ``size`` square; parts outside the cell or its frame margin are clipped)."""
    sizes, dxs, dys = jitter_draws(int(params["seed"]), rows * cols, cell, float(params["max_offset"]),
                                   float(params["min_scale"]))
    return [(int(size), (cell - int(size)) // 2 + int(dy), (cell - int(size)) // 2 + int(dx))
            for size, dx, dy in zip(sizes, dxs, dys, strict=True)]


def placements_of(rows: int, cols: int, cell: int, jitter: Mapping[str, Any] | None) -> list[tuple[int, int, int]] | None:
    """The cell placements of a recorded jitter record (``difficulty_preset.jitter`` on rows,
    ``extra["preset"]["jitter"]`` on specs); None when there is no jitter."""
    if not jitter or not (float(jitter.get("max_offset", 0)) > 0 or float(jitter.get("min_scale", 1)) < 1):
        return None
    return cell_placements(rows, cols, cell, jitter)


def scene_placements(scene: SceneSpec) -> list[tuple[int, int, int]] | None:
    """Where each cell's content of ``scene`` is drawn under its preset's jitter (None: no jitter)."""
    return placements_of(scene.rows, scene.cols, scene.cell_size, (scene.extra.get("preset") or {}).get("jitter"))


def jittered_grid(tiles: list[np.ndarray], index: np.ndarray, params: Mapping[str, Any],
                  margin: int = 0) -> np.ndarray:
    """The grid with every cell's tile scaled and shifted by its own draw (see the module docstring).

    Content is clipped to the cell less its ``margin`` px frame band, so the band stays clear
    (:func:`rose_gen.render.compose.tile_margin`).
    """
    rows, cols = index.shape
    cell = tiles[0].shape[0]
    background = tile_background(tiles[0])
    image = np.empty((rows * cell, cols * cell, 3), dtype=np.uint8)
    image[...] = background
    cache: dict[tuple[int, int], np.ndarray] = {}
    for i, (size, top, left) in enumerate(cell_placements(rows, cols, cell, params)):
        r, c = divmod(i, cols)
        key = (int(index[r, c]), size)
        if key not in cache:
            tile = tiles[key[0]]
            cache[key] = tile if size == cell else np.asarray(
                Image.fromarray(tile).resize((size, size), Image.Resampling.BILINEAR))
        scaled = cache[key]
        y0, x0 = max(top, margin), max(left, margin)
        y1, x1 = min(top + size, cell - margin), min(left + size, cell - margin)
        image[r * cell + y0:r * cell + y1, c * cell + x0:c * cell + x1] = \
            scaled[y0 - top:y1 - top, x0 - left:x1 - left]
    return image


def plain_grid(tiles: list[np.ndarray], index: np.ndarray) -> np.ndarray:
    """The grid with each cell's tile pasted unchanged."""
    rows, cols = index.shape
    cell = tiles[0].shape[0]
    stack = np.stack(tiles)[index]  # (rows, cols, cell, cell, 3)
    return np.ascontiguousarray(stack.transpose(0, 2, 1, 3, 4)).reshape(rows * cell, cols * cell, 3)


def degrade_image(image: np.ndarray, downscale: float, jpeg_quality: int) -> np.ndarray:
    """Downscale by ``downscale`` and back (bilinear; 1.0: none), then JPEG at ``jpeg_quality`` (0: none)."""
    out = Image.fromarray(image)
    h, w = image.shape[:2]
    if downscale < 1.0:
        small = (max(1, round(w * downscale)), max(1, round(h * downscale)))
        out = out.resize(small, Image.Resampling.BILINEAR).resize((w, h), Image.Resampling.BILINEAR)
    if jpeg_quality > 0:
        buf = io.BytesIO()
        out.save(buf, format="JPEG", quality=int(jpeg_quality), optimize=False, progressive=False)
        buf.seek(0)
        with Image.open(buf) as jpeg:
            out = jpeg.convert("RGB")
    return np.asarray(out, dtype=np.uint8).copy()


def preset_base_image(scene: SceneSpec, source: VisualSource,
                      tiles: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """The base image (no cue) of a scene rendered under its preset record (``tiles``: the
    scene's tiles when already drawn, :func:`rose_gen.render.compose.scene_tiles`)."""
    record = scene.extra.get("preset", {})
    tiles = list(scene_tiles(scene, source) if tiles is None else tiles)
    second = record.get("second")
    index = cell_index(scene.rows, scene.cols, scene, second["cells"] if second else [])
    margin = tile_margin(scene.cell_size)
    image = jittered_grid(tiles, index, record["jitter"], margin) if record.get("jitter") else plain_grid(tiles, index)
    deg = record.get("degrade")
    if deg:
        image = degrade_image(image, float(deg["downscale"]), int(deg["jpeg_quality"]))
    return image


def render_preset_scene(scene: SceneSpec, source: VisualSource, settings: RenderSettings, *,
                        tiles: Sequence[np.ndarray] | None = None, base: np.ndarray | None = None) -> RenderedScene:
    """Base and cue PNGs of a preset scene (the cue drawn on the finished base image).

    ``tiles`` and ``base``: the scene's tiles and finished base image when the visibility
    check already drew them (:class:`rose_gen.scene.redraw.DrawnCheck`), so nothing is drawn twice.
    """
    if tiles is None:
        tiles = scene_tiles(scene, source)
    if base is None:
        base = preset_base_image(scene, source, tiles=tiles)
    color = scene_cue_color(scene, source, settings.cue, tiles=tiles)  # from the majority and target tiles
    cue = apply_cue(base, cue_rectangle(scene), scene.cell_size, scene.cue_type, replace(settings.cue, color=color))
    level, encoder = settings.png_compress_level, settings.png_encoder
    return RenderedScene(scene_id=scene.scene_id, base_png=encode_png(base, level, encoder),
                         cue_png=encode_png(cue, level, encoder),
                         width=base.shape[1], height=base.shape[0], cue_color=color)


def needs_preset_render(scene: SceneSpec) -> bool:
    """True when a scene's preset record asks for a second identity, jitter or degradation."""
    record = scene.extra.get("preset") or {}
    return bool(record.get("second") or record.get("jitter") or record.get("degrade"))
