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

import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter, uniform_filter

MIN_CELL_PX = 12
MIN_LINES, MAX_LINES = 3, 40
GRID_SCORE_FLOOR = 0.05  # share of the image's contrast added before taking logs of scores
GRID_MIN_LOG_GAP = math.log(3.0)  # periodic vs not: scores apart by more than this factor
GRID_SUBPERIOD_RATIO = 2.0  # a false period's shift score exceeds the best by more
GRID_SHIFT_CONTRAST = 0.1  # ... and exceeds this share of the image's contrast
NOISE_MAD_FACTOR = 6.0
MIN_EXCEPTION_DISTANCE = 12.0  # pooled 0-255 difference a real exception clears
WORK_CELL_PX = 48  # cells of 96 px and more are box-downsampled to about this size
MAJORITY_SAMPLE = 61  # tiles whose per-pixel median is the majority tile
TINT_LEVEL = 20.0  # median 0-255 difference of a tinted cell from the majority
TINT_MIN_STRENGTH = 0.08  # a tint blends at least this much of its colour in
TINT_MAX_RESIDUAL = 0.35  # a tinted tile's blend-fit residual, relative to its change
TINT_MIN_CHANGE = 4.0  # mean 0-255 change of a tinted (or excepted) tile
OUTLINE_LEVEL = 60.0  # 0-255 difference of an outline pixel from the majority
MIN_OUTLINE_COVER = 0.6  # share of a rectangle side the outline must cover
OUTLINE_LINE_COVER = 0.7  # a pixel line along a side belongs to the frame above this cover


class CVError(ValueError):
    """The image or prompt cannot be read as a ROSE item."""


@dataclass(frozen=True)
class Grid:
    rows: int
    cols: int
    cell: int


@dataclass(frozen=True)
class Span:
    """Inclusive 1-based row and column bounds; None = unbounded."""

    rows: tuple[int, int] | None = None
    cols: tuple[int, int] | None = None

    def mask(self, n_rows: int, n_cols: int) -> np.ndarray:
        r = np.arange(1, n_rows + 1)[:, None]
        c = np.arange(1, n_cols + 1)[None, :]
        ok = np.ones((n_rows, n_cols), dtype=bool)
        if self.rows is not None:
            ok &= (r >= self.rows[0]) & (r <= self.rows[1])
        if self.cols is not None:
            ok &= (c >= self.cols[0]) & (c <= self.cols[1])
        return ok


@dataclass(frozen=True)
class TaskText:
    """What the prompt sentence asks: answer mode, the region, and an exclusion."""

    mode: str  # COUNT | CLICK | CLICK_COUNT
    include: Span | None  # None = whole grid (or the highlight when highlighted)
    exclude: Span | None
    highlighted: bool


# ---------------------------------------------------------------------------- prompt

_RECT = re.compile(r"from row ([0-9]+) column ([0-9]+) to row ([0-9]+) column ([0-9]+)", re.I)
_ROWS = re.compile(r"\brows ([0-9]+) to ([0-9]+)", re.I)
_ROW = re.compile(r"\brow ([0-9]+)", re.I)
_COLS = re.compile(r"\bcolumns ([0-9]+) to ([0-9]+)", re.I)
_COL = re.compile(r"\bcolumn ([0-9]+)", re.I)
_EXCLUDING = re.compile(r"excluding (.*?)(?:, then|\.|$)", re.I)


def parse_span(text: str) -> Span | None:
    """The first region phrase in ``text`` as a Span (None when it names none)."""
    if m := _RECT.search(text):
        r1, c1, r2, c2 = (int(x) for x in m.groups())
        return Span(rows=(r1, r2), cols=(c1, c2))
    if m := _ROWS.search(text):
        return Span(rows=(int(m[1]), int(m[2])))
    if m := _COLS.search(text):
        return Span(cols=(int(m[1]), int(m[2])))
    if m := _ROW.search(text):
        return Span(rows=(int(m[1]), int(m[1])))
    if m := _COL.search(text):
        return Span(cols=(int(m[1]), int(m[1])))
    return None


def parse_task(prompt: str) -> TaskText:
    """Read mode and region from the task sentence (prompt_local or the whole prompt)."""
    # Use the last paragraph: the shared preamble lists every answer format.
    sentence = prompt.strip().split("\n")[-1]
    lower = sentence.lower()
    if "submit(" in lower or "then submit" in lower:
        mode = "CLICK_COUNT"
    elif "count(" in lower or lower.startswith("count"):
        mode = "COUNT"
    elif "click" in lower:
        mode = "CLICK"
    else:
        raise CVError(f"cannot tell the answer mode from the prompt: {sentence[:120]!r}")
    excluding = _EXCLUDING.search(sentence)
    exclude = parse_span(excluding[1]) if excluding else None
    if excluding and exclude is None:
        raise CVError(f"cannot read the excluded region from: {excluding[1][:120]!r}")
    highlighted = "highlighted" in lower
    include = None if (highlighted or excluding or "whole grid" in lower) else parse_span(sentence)
    return TaskText(mode=mode, include=include, exclude=exclude, highlighted=highlighted)


# ---------------------------------------------------------------------------- image


def load_rgb(path: Path | str) -> np.ndarray:
    """Float32 RGB array (0-255), alpha composited on white."""
    with Image.open(path) as source:
        if source.mode == "RGB":
            return np.asarray(source, dtype=np.float32)
        image = source.convert("RGBA")
    arr = np.asarray(image, dtype=np.float32)
    alpha = arr[..., 3:4] / 255.0
    return arr[..., :3] * alpha + 255.0 * (1.0 - alpha)


def _tiles(arr: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows*cols, cell, cell, ...) view-copy of the image cut into cells (row-major)."""
    c = grid.cell
    shape = (grid.rows, c, grid.cols, c) + arr.shape[2:]
    t = arr[: grid.rows * c, : grid.cols * c].reshape(shape).swapaxes(1, 2)
    return t.reshape((grid.rows * grid.cols, c, c) + arr.shape[2:])


def _median_tile_score(lum: np.ndarray, grid: Grid) -> float:
    step = max(1, grid.cell // 24)  # a strided subset of each tile's pixels is enough here
    tiles = _tiles(lum, grid)[:, ::step, ::step].reshape(grid.rows * grid.cols, -1)
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


def _majority_sample(n: int) -> np.ndarray:
    """Indices of at most MAJORITY_SAMPLE tiles spread evenly over the grid (median input)."""
    return np.unique(np.linspace(0, n - 1, min(n, MAJORITY_SAMPLE)).round().astype(int))


def work_tiles(rgb: np.ndarray, grid: Grid) -> tuple[np.ndarray, Grid]:
    """Slightly blurred tiles in image layout (rows, y, cols, x, 3) and the grid they describe.

    Large cells are box-downsampled first (to about 48-95 px) for speed.
    """
    factor = max(1, grid.cell // WORK_CELL_PX)
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
    sigma = max(1.0, c / 48.0)
    return gaussian_filter(pooled, sigma=(0, sigma, 0, sigma, 0), mode="nearest", truncate=2.5), Grid(grid.rows, grid.cols, c)


def _median_tile(tiles: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Per-pixel median (c, c, 3) over the tiles at flat cell indices ``cells``."""
    cols = tiles.shape[2]
    return np.median(tiles[cells // cols, :, cells % cols], axis=0)


def tile_difference_map(tiles: np.ndarray, majority: np.ndarray) -> np.ndarray:
    """(H, W) largest channel difference of every pixel from the majority tile."""
    diff = np.abs(tiles - majority[None, :, None])
    diff = np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])
    rows, c, cols = diff.shape[:3]
    return diff.reshape(rows * c, cols * c)


def difference_map(rgb: np.ndarray, grid: Grid) -> tuple[np.ndarray, Grid]:
    """Per-pixel difference from the majority tile (see :func:`work_tiles`) and its grid."""
    tiles, work = work_tiles(rgb, grid)
    majority = _median_tile(tiles, _majority_sample(grid.rows * grid.cols))
    return tile_difference_map(tiles, majority), work


def _tile_medians(diff: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows, cols) median pixel difference of each tile."""
    tiles = diff.reshape(grid.rows, grid.cell, grid.cols, grid.cell).swapaxes(1, 2)
    return np.median(tiles.reshape(grid.rows, grid.cols, -1), axis=2)


@dataclass(frozen=True)
class BlendFit:
    """Per tile: tile ~= gain * majority + offset (shared gain, offset per channel)."""

    gain: np.ndarray  # (rows, cols)
    offset: np.ndarray  # (rows, cols, 3)
    residual: np.ndarray  # (rows, cols) mean absolute residual
    change: np.ndarray  # (rows, cols) mean absolute difference from the majority


def fit_blend(tiles: np.ndarray, majority: np.ndarray) -> BlendFit:
    """Least-squares fit of every tile as a blend of the majority tile toward a flat colour.

    A tint toward colour C with strength a gives gain 1 - a and offset a * C with a small
    residual; an exception's different content leaves a large residual.
    """
    m = majority - majority.mean(axis=(0, 1))  # (c, c, 3) centred per channel
    t_mean = tiles.mean(axis=(1, 3), keepdims=True)  # (rows, 1, cols, 1, 3)
    t = tiles - t_mean
    gain = np.einsum("rycxz,yxz->rc", t, m) / max(float((m * m).sum()), 1e-6)
    offset = t_mean[:, 0, :, 0, :] - gain[..., None] * majority.mean(axis=(0, 1))
    fitted = gain[:, None, :, None, None] * majority[None, :, None] + offset[:, None, :, None, :]
    residual = np.abs(tiles - fitted).mean(axis=(1, 3, 4))
    change = np.abs(tiles - majority[None, :, None]).mean(axis=(1, 3, 4))
    return BlendFit(gain=gain, offset=offset, residual=residual, change=change)


def _tinted(fit: BlendFit, low: bool) -> np.ndarray:
    good = (fit.residual < TINT_MAX_RESIDUAL * fit.change) & (fit.change > TINT_MIN_CHANGE)
    return good & ((fit.gain < 1.0 - TINT_MIN_STRENGTH) if low else (fit.gain > 1.0 / (1.0 - TINT_MIN_STRENGTH)))


def untint_highlight(tiles: np.ndarray, work: Grid) -> tuple[Span, np.ndarray]:
    """Find a MASK-style highlight (a tinted rectangle of cells) and undo the tint.

    Every tile is fitted as a blend of the majority tile toward a flat colour
    (:func:`fit_blend`). Tinted cells fit well with a gain below 1; exceptions do not
    fit. When the tint covers most sampled tiles the median "majority" is itself tinted:
    the plain cells then fit with a gain above 1, and the majority is re-taken from them.
    The region is the bounding box of the tinted cells, which must be filled by tinted
    or clearly changed (tinted exception) cells; the fitted blend is then inverted there.
    """
    n = work.rows * work.cols
    majority = _median_tile(tiles, _majority_sample(n))
    fit = fit_blend(tiles, majority)
    plain = _tinted(fit, low=False)
    if plain.sum() > _tinted(fit, low=True).sum():
        majority = _median_tile(tiles, np.flatnonzero(plain.ravel()))
        fit = fit_blend(tiles, majority)
    tinted = _tinted(fit, low=True)
    if not tinted.any():
        raise CVError("no highlighted region found on the cue image (neither an outline nor a tint)")
    rows, cols = np.nonzero(tinted)
    span = Span(rows=(int(rows.min()) + 1, int(rows.max()) + 1), cols=(int(cols.min()) + 1, int(cols.max()) + 1))
    inside = span.mask(work.rows, work.cols)
    if not (tinted | (fit.change > TINT_MIN_CHANGE))[inside].all():
        raise CVError("the tinted cells on the cue image do not form a rectangle")
    gain = float(np.median(fit.gain[tinted]))
    offset = np.median(fit.offset[tinted], axis=0)  # (3,)
    out = tiles.copy()
    rows_in = slice(span.rows[0] - 1, span.rows[1])
    cols_in = slice(span.cols[0] - 1, span.cols[1])
    out[rows_in, :, cols_in] = (tiles[rows_in, :, cols_in] - offset) / max(gain, 0.2)
    return span, out


def _edge_band(span: Span, grid: Grid, width: int, shape: tuple[int, ...]) -> np.ndarray:
    """Pixels within ``width`` of the rectangle's edges (where blur and JPEG smear a tint)."""
    c = grid.cell
    y0, y1 = (span.rows[0] - 1) * c, span.rows[1] * c
    x0, x1 = (span.cols[0] - 1) * c, span.cols[1] * c
    band = np.zeros(shape[:2], dtype=bool)
    for y in (y0, y1):
        band[max(0, y - width): y + width, max(0, x0 - width): x1 + width] = True
    for x in (x0, x1):
        band[max(0, y0 - width): y1 + width, max(0, x - width): x + width] = True
    return band


def tile_distances(diff: np.ndarray, grid: Grid) -> np.ndarray:
    """(rows, cols) tolerant distance of each tile to the majority: max of the pooled difference."""
    pool = max(3, grid.cell // 12)
    pooled = uniform_filter(diff, size=pool, mode="nearest")
    return _tiles(pooled, grid).max(axis=(1, 2)).reshape(grid.rows, grid.cols)


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


# ---------------------------------------------------------------------------- highlight


def _segment_cover(hit: np.ndarray, grid: Grid, band: int) -> tuple[np.ndarray, np.ndarray]:
    """Share of each grid-line segment covered by outline pixels.

    Returns H (rows+1, cols): for horizontal line j and cell column k, the fraction of
    pixel columns of that cell having an outline pixel within ``band`` of y = j*cell;
    and V (cols+1, rows) likewise for vertical lines.
    """
    c = grid.cell
    height, width = hit.shape

    def cover(h: np.ndarray, n_lines: int, n_cells: int) -> np.ndarray:
        out = np.zeros((n_lines, n_cells))
        for j in range(n_lines):
            y0, y1 = max(0, j * c - band), min(h.shape[0], j * c + band + 1)
            any_hit = h[y0:y1].any(axis=0)[: n_cells * c]
            out[j] = any_hit.reshape(n_cells, c).mean(axis=1)
        return out

    return cover(hit, grid.rows + 1, grid.cols), cover(hit.T, grid.cols + 1, grid.rows)


def find_highlight(diff: np.ndarray, grid: Grid) -> tuple[Span, np.ndarray]:
    """The outlined rectangle (cells) and a pixel mask of its outline."""
    band = max(2, grid.cell // 6)
    hit = diff > OUTLINE_LEVEL
    hcov, vcov = _segment_cover(hit, grid, band)
    # Prefix sums along the segment axis give each side's mean cover in O(1).
    hcum = np.concatenate([np.zeros((grid.rows + 1, 1)), np.cumsum(hcov, axis=1)], axis=1)
    vcum = np.concatenate([np.zeros((grid.cols + 1, 1)), np.cumsum(vcov, axis=1)], axis=1)
    r1, r2, c1, c2 = np.meshgrid(np.arange(1, grid.rows + 1), np.arange(1, grid.rows + 1),
                                 np.arange(1, grid.cols + 1), np.arange(1, grid.cols + 1), indexing="ij")
    valid = (r2 >= r1) & (c2 >= c1)
    r1, r2, c1, c2 = r1[valid], r2[valid], c1[valid], c2[valid]
    width, height = (c2 - c1 + 1), (r2 - r1 + 1)
    top = (hcum[r1 - 1, c2] - hcum[r1 - 1, c1 - 1]) / width
    bottom = (hcum[r2, c2] - hcum[r2, c1 - 1]) / width
    left = (vcum[c1 - 1, r2] - vcum[c1 - 1, r1 - 1]) / height
    right = (vcum[c2, r2] - vcum[c2, r1 - 1]) / height
    sides = np.stack([top, bottom, left, right])
    score = sides.min(axis=0) + 1e-3 * sides.mean(axis=0)
    best = int(np.argmax(score))
    if sides[:, best].min() < MIN_OUTLINE_COVER:
        raise CVError("no highlighted region found on the cue image")
    span = Span(rows=(int(r1[best]), int(r2[best])), cols=(int(c1[best]), int(c2[best])))
    # An outline leaves most of each cell alone; a tint (MASK cue) changes all of it.
    if np.mean(_tile_medians(diff, grid)[span.mask(grid.rows, grid.cols)] > TINT_LEVEL) > 0.5:
        raise CVError("the highlight is filled, not an outline")
    # Outline pixels: the lines of each side's band that the outline covers along (nearly)
    # the whole side. Partial lines are content (an edit in the cue colour next to the
    # frame stays visible), so they are kept. Two pixels of margin absorb blur and JPEG.
    c = grid.cell
    y_top, y_bot = (span.rows[0] - 1) * c, span.rows[1] * c
    x_left, x_right = (span.cols[0] - 1) * c, span.cols[1] * c
    outline = np.zeros_like(hit)

    def frame_lines(block: np.ndarray) -> np.ndarray:
        covered = block.mean(axis=1) >= OUTLINE_LINE_COVER
        return uniform_filter(covered.astype(np.float32), size=5) > 0

    for y in (y_top, y_bot):
        y0, y1 = max(0, y - band), min(hit.shape[0], y + band + 1)
        lines = frame_lines(hit[y0:y1, x_left:x_right])
        outline[y0:y1, max(0, x_left - 2): x_right + 2] |= lines[:, None]
    for x in (x_left, x_right):
        x0, x1 = max(0, x - band), min(hit.shape[1], x + band + 1)
        lines = frame_lines(hit[y_top:y_bot, x0:x1].T)
        outline[max(0, y_top - 2): y_bot + 2, x0:x1] |= lines[None, :]
    return span, outline


# ---------------------------------------------------------------------------- answer


def format_answer(mode: str, cells: list[tuple[int, int]]) -> str:
    """The formal answer string for ``mode`` with the clicked cells sorted by (row, col)."""
    if mode == "COUNT":
        return f"COUNT({len(cells)})"
    clicks = "".join(f"CLICK(R{r},C{c}); " for r, c in sorted(cells))
    return clicks + ("DONE" if mode == "CLICK" else f"SUBMIT({len(cells)})")


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
    diff = tile_difference_map(tiles, _median_tile(tiles, _majority_sample(grid.rows * grid.cols)))
    span = None
    if highlighted:
        try:
            span, outline = find_highlight(diff, work)
            diff = np.where(outline, 0.0, diff)
        except CVError:  # no outline: a tinted (MASK) highlight?
            span, tiles = untint_highlight(tiles, work)
            diff = tile_difference_map(tiles, _median_tile(tiles, _majority_sample(grid.rows * grid.cols)))
            diff = np.where(_edge_band(span, work, max(2, work.cell // 12), diff.shape), 0.0, diff)
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


# Base images serve four tasks each: read each (path, highlighted) once, even when
# several worker threads ask for it at the same moment.
_CACHE_LOCK = threading.Lock()
_PATH_LOCKS: dict[tuple[str, int, int, bool], threading.Lock] = {}


@lru_cache(maxsize=256)
def _read_file(path: str, mtime_ns: int, size: int, highlighted: bool) -> ImageReading:
    return read_image(load_rgb(path), highlighted)


def read_image_file(path: Path | str, highlighted: bool) -> ImageReading:
    """:func:`read_image` of a file, cached by path and stat (the result is a few small arrays)."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_mtime_ns, stat.st_size, highlighted)
    with _CACHE_LOCK:
        lock = _PATH_LOCKS.setdefault(key, threading.Lock())
    with lock:
        return _read_file(*key)


def solve_image(image_path: Path | str, prompt: str) -> str:
    """The formal answer for one item from its image file and prompt text."""
    task = parse_task(prompt)
    image = read_image_file(image_path, task.highlighted)
    rows, cols = np.nonzero(image.exceptions & answer_region(task, image))
    return format_answer(task.mode, [(int(r) + 1, int(c) + 1) for r, c in zip(rows, cols, strict=True)])
