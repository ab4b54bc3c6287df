"""The ``cv`` baseline's grid: the cell size found from the image's periodicity, tiles cut at a
working size, the majority (per-pixel median) tile and each tile's difference from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter, uniform_filter

from rose_eval.runners.cv_prompt import CVError

MIN_LINES, MAX_LINES = 3, 40  # rows and columns a grid may have
MIN_CELL_PX = 12


GRID_SCORE_FLOOR = 0.05  # share of the image's contrast added before taking logs of scores


GRID_MIN_LOG_GAP = math.log(3.0)  # periodic vs not: scores apart by more than this factor


GRID_SUBPERIOD_RATIO = 2.0  # a false period's shift score exceeds the best by more


GRID_SHIFT_CONTRAST = 0.1  # ... and exceeds this share of the image's contrast


BLUR_TRUNCATE = 2.5  # work_tiles' Gaussian reaches this many sigmas
WORK_CELL_PX = 48  # cells of 96 px and more are box-downsampled to about this size


MAJORITY_SAMPLE = 61  # tiles whose per-pixel median is the majority tile


@dataclass(frozen=True)
class Grid:
    rows: int
    cols: int
    cell: int


def load_rgb(path: Path | str) -> np.ndarray:
    """Float32 RGB array (0-255), alpha composited on white."""
    with Image.open(path) as source:
        if source.mode == "RGB":
            return np.asarray(source, dtype=np.float32)
        image = source.convert("RGBA")
    arr = np.asarray(image, dtype=np.float32)
    alpha = arr[..., 3:4] / 255.0
    return arr[..., :3] * alpha + 255.0 * (1.0 - alpha)


def cell_tiles(arr: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows*cols, cell, cell, ...) view-copy of the image cut into cells (row-major)."""
    c = grid.cell
    shape = (grid.rows, c, grid.cols, c) + arr.shape[2:]
    t = arr[: grid.rows * c, : grid.cols * c].reshape(shape).swapaxes(1, 2)
    return t.reshape((grid.rows * grid.cols, c, c) + arr.shape[2:])


def _median_tile_score(lum: np.ndarray, grid: Grid) -> float:
    step = max(1, grid.cell // 24)  # a strided subset of each tile's pixels is enough here
    tiles = cell_tiles(lum, grid)[:, ::step, ::step].reshape(grid.rows * grid.cols, -1)
    return float(np.median(np.abs(tiles - np.median(tiles, axis=0)).mean(axis=1)))


def _shift_score(lum: np.ndarray, c: int) -> float:
    rows, cols = lum[::3], lum[:, ::3]  # every third line along the other axis is enough
    return float(np.abs(rows[:, c:] - rows[:, :-c]).mean() + np.abs(cols[c:, :] - cols[:-c, :]).mean())


def find_grid(rgb: np.ndarray) -> Grid:
    """Rows, columns and cell size from the image's periodicity (see the module docstring)."""
    height, width = rgb.shape[:2]
    lum = uniform_filter(rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32), 3)  # damp JPEG noise
    g = math.gcd(height, width)
    candidates = [c for c in range(MIN_CELL_PX, g + 1)
                  if g % c == 0 and MIN_LINES <= height // c <= MAX_LINES and MIN_LINES <= width // c <= MAX_LINES]
    if not candidates:
        raise CVError(f"no square cell size divides the {width}x{height} image into "
                      f"{MIN_LINES}-{MAX_LINES} rows and columns")
    # 1. Median-tile test (robust to the few exception cells and a cue outline): periodic
    #    candidates (the cell and its multiples) score near 0, the rest far above; split
    #    at the widest gap in log score.
    med = np.array([_median_tile_score(lum, Grid(height // c, width // c, c)) for c in candidates])
    order = np.argsort(med)
    # Scores far below the image's contrast all count as "periodic" (a tint or a few
    # exceptions move them a little); the floor keeps log-gaps among them small.
    contrast = float(np.abs(lum - lum.mean()).mean())
    floor = max(0.5, GRID_SCORE_FLOOR * contrast)
    gaps = np.diff(np.log(med[order] + floor))
    cut = int(np.argmax(gaps)) + 1 if len(gaps) and gaps.max() > GRID_MIN_LOG_GAP else len(order)
    periodic = sorted(candidates[i] for i in order[:cut])
    # 2. Shift test against sub-periods: a sparse tile (a thin glyph within a third of the
    #    cell) passes the median test at a third of the cell, but moving the image by
    #    that amount puts ink onto blank everywhere, while a true cell and its multiples
    #    move it onto equal ink (a false period scores near the image's contrast). Take the
    #    smallest periodic cell whose shift score is near the best one or small against
    #    the contrast (JPEG blocks aligned with a multiple of the cell favour the multiple).
    shift = {c: _shift_score(lum, c) for c in periodic}
    limit = max(GRID_SUBPERIOD_RATIO * min(shift.values()) + 1.0, GRID_SHIFT_CONTRAST * contrast)
    cell = next(c for c in periodic if shift[c] <= limit)
    return Grid(height // cell, width // cell, cell)


def majority_sample(n: int) -> np.ndarray:
    """Indices of at most MAJORITY_SAMPLE tiles spread evenly over the grid (median input)."""
    return np.unique(np.linspace(0, n - 1, min(n, MAJORITY_SAMPLE)).round().astype(int))


def work_tiles(rgb: np.ndarray, grid: Grid, work_cell: int = WORK_CELL_PX) -> tuple[np.ndarray, Grid]:
    """Slightly blurred tiles in image layout (rows, y, cols, x, 3) and the grid they describe.

    Large cells are box-downsampled first (to about ``work_cell``-``2 * work_cell - 1`` px) for
    speed; a ``work_cell`` of at least the cell size keeps the full resolution.
    """
    factor = max(1, grid.cell // work_cell)
    c = grid.cell // factor
    # Image layout (rows, y, cols, x, channel): a free view, and free to reshape back.
    view = rgb[: grid.rows * grid.cell, : grid.cols * grid.cell].reshape(grid.rows, grid.cell, grid.cols, grid.cell, 3)
    if factor > 1:  # box average by strided sums
        pooled = np.zeros((grid.rows, c, grid.cols, c, 3), dtype=np.float32)
        for dy in range(factor):
            for dx in range(factor):
                pooled += view[:, dy: c * factor: factor, :, dx: c * factor: factor]
        pooled /= float(factor * factor)
    else:
        pooled = np.ascontiguousarray(view, dtype=np.float32)
    sigma = blur_sigma(c)
    return (gaussian_filter(pooled, sigma=(0, sigma, 0, sigma, 0), mode="nearest", truncate=BLUR_TRUNCATE),
            Grid(grid.rows, grid.cols, c))


def blur_sigma(cell: int) -> float:
    """The Gaussian blur :func:`work_tiles` gives tiles of ``cell`` px (it reaches ``BLUR_TRUNCATE`` sigmas)."""
    return max(1.0, cell / 48.0)


def median_tile(tiles: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Per-pixel median (c, c, 3) over the tiles at flat cell indices ``cells``."""
    cols = tiles.shape[2]
    return np.median(tiles[cells // cols, :, cells % cols], axis=0)


def tile_difference_map(tiles: np.ndarray, majority: np.ndarray) -> np.ndarray:
    """(H, W) largest channel difference of every pixel from the majority tile."""
    diff = np.abs(tiles - majority[None, :, None])
    diff = np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])
    rows, c, cols = diff.shape[:3]
    return diff.reshape(rows * c, cols * c)


def tile_medians(diff: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows, cols) median pixel difference of each tile."""
    tiles = diff.reshape(grid.rows, grid.cell, grid.cols, grid.cell).swapaxes(1, 2)
    return np.median(tiles.reshape(grid.rows, grid.cols, -1), axis=2)
