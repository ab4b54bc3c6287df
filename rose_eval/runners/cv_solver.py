"""The ``cv`` baseline: solve a ROSE item from its image and prompt text alone.

1. Grid. Cells are square, borderless and near-identical, so the image is periodic with
   the cell size. Every cell size that divides both sides (within plausible grid sizes)
   is tried: cut the image into tiles, take the per-pixel median tile, and score the
   candidate by the median tile's typical distance. The smallest cell size whose score
   is near the best wins (multiples of the true cell are periodic too).
2. Exceptions. After a slight blur, each tile's distance to the majority (median) tile is
   the largest locally pooled difference, which ignores JPEG noise and blur but keeps a
   small edit. Exceptions are the tiles above the widest gap in the sorted distances,
   provided that gap stands clear of the robust noise level (median + MAD).
3. Region. Read from the prompt sentence (whole grid, rows, columns, rectangle,
   exclusion). For "the highlighted region" the outline is found on the image: grid
   lines along which a thin band differs from the majority everywhere; the outline's
   pixels are then left out of the exception test. Detection is colour-agnostic (a
   difference from the majority tile, never a colour match), so it finds a frame or tint
   in any colour the generator picks (``render.cue_color=auto`` chooses per scene).
4. Answer. Formal string in the mode the sentence asks for.

Only numpy/scipy/PIL; per-tile work is vectorised over all tiles at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter

from rose_eval.formal import formal_answer
from rose_eval.runners.cv_grid import (
    Grid,
    cell_tiles,
    find_grid,
    majority_sample,
    median_tile,
    tile_difference_map,
    work_tiles,
)
from rose_eval.runners.cv_highlight import edge_band, find_highlight, untint_highlight
from rose_eval.runners.cv_prompt import CVError, Span, TaskText, parse_task
from rose_eval.runners.image_reading import CachedReader

NOISE_MAD_FACTOR = 6.0


MIN_EXCEPTION_DISTANCE = 12.0  # pooled 0-255 difference a real exception clears


def tile_distances(diff: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows, cols) tolerant distance of each tile to the majority: max of the pooled difference."""
    pool = max(3, grid.cell // 12)
    pooled = uniform_filter(diff, size=pool, mode="nearest")
    return cell_tiles(pooled, grid).max(axis=(1, 2)).reshape(grid.rows, grid.cols)


def exception_mask(dist: np.ndarray) -> np.ndarray:
    """Cells standing clear of the rest: above the widest gap, and above the noise level."""
    flat = np.sort(dist.ravel())[::-1]
    n = flat.size
    median = float(np.median(flat))
    mad = float(np.median(np.abs(flat - median))) * 1.4826
    noise = median + max(NOISE_MAD_FACTOR * mad, MIN_EXCEPTION_DISTANCE)
    top = flat[: max(1, n // 2) + 1]
    gaps = top[:-1] - top[1:]
    eligible = top[:-1] > noise
    if not eligible.any():
        return np.zeros_like(dist, dtype=bool)
    k = int(np.argmax(np.where(eligible, gaps, -np.inf))) + 1
    threshold = (flat[k - 1] + flat[k]) / 2.0
    return dist > threshold


@dataclass(frozen=True)
class Reading:
    """What the solver saw: grid, exception cells and the region it answered on."""

    grid: Grid
    exceptions: np.ndarray  # (rows, cols) bool
    region: np.ndarray  # (rows, cols) bool
    task: TaskText


@dataclass(frozen=True)
class ImageReading:
    """What an image shows: its grid, its exception cells and the highlighted cells (if asked)."""

    grid: Grid
    exceptions: np.ndarray  # (rows, cols) bool
    highlight: Span | None


def read_image(rgb: np.ndarray, highlighted: bool) -> ImageReading:
    """Grid and exceptions of an image; with ``highlighted``, also the cue's rectangle."""
    grid = find_grid(rgb)
    tiles, work = work_tiles(rgb, grid)
    diff = tile_difference_map(tiles, median_tile(tiles, majority_sample(grid.rows * grid.cols)))
    span = None
    if highlighted:
        try:
            span, outline = find_highlight(diff, work)
            diff = np.where(outline, 0.0, diff)
        except CVError:  # no outline: a tinted (MASK) highlight?
            span, tiles = untint_highlight(tiles, work)
            diff = tile_difference_map(tiles, median_tile(tiles, majority_sample(grid.rows * grid.cols)))
            diff = np.where(edge_band(span, work, max(2, work.cell // 12), diff.shape), 0.0, diff)
    return ImageReading(grid=grid, exceptions=exception_mask(tile_distances(diff, work)), highlight=span)


def answer_region(task: TaskText, image: ImageReading) -> np.ndarray:
    """(rows, cols) cells the task asks about."""
    grid = image.grid
    region = np.ones((grid.rows, grid.cols), dtype=bool)
    if image.highlight is not None:
        region &= image.highlight.mask(grid.rows, grid.cols)
    if task.include is not None:
        region &= task.include.mask(grid.rows, grid.cols)
    if task.exclude is not None:
        region &= ~task.exclude.mask(grid.rows, grid.cols)
    return region


def read_item(rgb: np.ndarray, prompt: str) -> Reading:
    """Analyse an image array for the task in ``prompt``."""
    task = parse_task(prompt)
    image = read_image(rgb, task.highlighted)
    return Reading(grid=image.grid, exceptions=image.exceptions, region=answer_region(task, image), task=task)


read_image_file: CachedReader[ImageReading] = CachedReader(read_image)
"""``read_image_file(path, highlighted)``: :func:`read_image` of a file, read once per file."""


def solve_image(image_path: Path | str, prompt: str) -> str:
    """The formal answer for one item from its image file and prompt text."""
    task = parse_task(prompt)
    image = read_image_file(image_path, task.highlighted)
    rows, cols = np.nonzero(image.exceptions & answer_region(task, image))
    cells = [(int(r) + 1, int(c) + 1) for r, c in zip(rows, cols, strict=True)]
    return formal_answer(task.mode, cells, count=len(cells))
