"""The ``robust`` baseline: a solvability reference that tolerates the presets' jitter and degradation.

It reads only the image and the prompt, like ``cv``, and differs where ``cv`` is brittle:

1. Grid from periodicity (:mod:`rose_eval.runners.robust_grid`): autocorrelation at every
   candidate cell size, so per-cell jitter and JPEG do not move the cell size.
2. Cells at a working size (``cv_grid.work_tiles``: box-downsampled, slightly blurred) for
   the placement search; the final distance read there and at full resolution, and the
   reading whose cut separates more clearly kept.
   The background colour is the median of the cells' frame bands (the margin along a
   cell's edges that never holds content). A cue outline lies in that band and is found
   there (``cv_highlight.find_highlight`` on the band pixels alone), then painted back to
   the background at full size before the cells are read; a tint is undone by
   ``cv_highlight.untint_highlight``.
3. Descriptor: the majority template is the per-pixel median of all cells; every cell is
   matched to it at the content size and offset (the preset's per-cell jitter) that fit
   best, and the template is re-taken from the aligned majority-like cells. Large cells
   are searched at the working size, then the template is re-taken at full size and every
   placement refined there within the scaling's rounding (an edit of a source pixel or two
   is halved and blurred into resampling noise at the working size).
4. Distance: the largest locally pooled colour difference from the template at the best
   placement, each pixel matched to the closest pixel within ``TOLERANCE_PX`` both ways
   (a resampled edge's sub-pixel phase costs nothing; a small edit stays; JPEG noise is
   pooled away).
5. Separation without the count (:func:`separate`): a floor from the scene's own robust
   centre and spread, then the lowest clear gap above it, so two exception identities at
   different distances both count (thresholds tuned on dev splits only).
6. Answer: the prompt's region and mode (``cv_prompt.parse_task``), the formal string.

Hot loops are numpy over all cells at once (bilinear crop-resize by gathers, shifts by slices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter

from rose_eval.formal import formal_answer
from rose_eval.runners.cv_grid import BLUR_TRUNCATE, Grid, blur_sigma, work_tiles
from rose_eval.runners.cv_highlight import edge_band, find_highlight, untint_highlight
from rose_eval.runners.cv_prompt import CVError, Span, TaskText, parse_task
from rose_eval.runners.image_reading import CachedReader
from rose_eval.runners.robust_grid import locate_grid

MIN_SCALE = 0.85  # jitter searched: content scaled MIN_SCALE..1 (extreme preset: 0.85) ...
MAX_OFFSET = 0.08  # ... and moved by up to this share of the cell (extreme: 0.08)
TOLERANCE_PX = 1  # final distance: a pixel matches the closest pixel this near (sub-pixel phase)
POOL_MIN_PX = 3  # local pooling of the difference map (px at the working size), at least
TEMPLATE_ROUNDS = 1  # re-takes of the majority template from aligned majority cells
MIN_TEMPLATE_CELLS = 5  # ... from at least this many cells
# Separation (tuned on dev splits of standard/hard/extreme releases; see bench/bench_robust.py).
GAP_MAD_FACTOR = 3.0  # the floor: centre + this many robust spreads (MAD) ...
MIN_SEPARATION = 7.0  # ... and at least this pooled 0-255 difference above the centre
GAP_SHARE = 0.7  # a clear gap: at least this share of the widest gap above the floor ...
JUMP_MAD_FACTOR, JUMP_RATIO = 4.0, 2.0  # ... or this many spreads wide and a jump by this factor
FRAME_FRACTION, FRAME_MIN_PX, FRAME_MAX_PX = 0.05, 2, 5  # the renderer's clear frame band per cell


@dataclass(frozen=True)
class RobustReading:
    """What the robust solver saw in one image."""

    grid: Grid
    distance: np.ndarray  # (rows, cols)
    exceptions: np.ndarray  # (rows, cols) bool
    highlight: Span | None


def frame_px(cell: int) -> int:
    """Width of the band along a cell's edges that never holds content (at ``cell`` px)."""
    return max(FRAME_MIN_PX, min(FRAME_MAX_PX, int(round(cell * FRAME_FRACTION))))


def background_colour(tiles: np.ndarray, band: int) -> np.ndarray:
    """(3,) median colour of every cell's frame band (tiles in layout (rows, y, cols, x, 3))."""
    c = tiles.shape[1]
    edge = np.zeros(c, dtype=bool)
    edge[:band] = edge[c - band :] = True
    ring = edge[:, None] | edge[None, :]
    pixels = tiles.transpose(0, 2, 1, 3, 4)[:, :, ring]  # (rows, cols, n_ring, 3)
    return np.median(pixels.reshape(-1, 3), axis=0)


def resize_square(image: np.ndarray, size: int) -> np.ndarray:
    """(3, size, size) bilinear resample of a channel-first square image (3, c, c), pixel-centre aligned."""
    c = image.shape[1]
    if size == c:
        return image
    pos = np.clip((np.arange(size) + 0.5) * (c / size) - 0.5, 0.0, c - 1.0)
    low = np.minimum(np.floor(pos).astype(np.int64), c - 2)
    w = (pos - low).astype(np.float32)
    rows = image[:, low] * (1 - w)[None, :, None] + image[:, low + 1] * w[None, :, None]
    return rows[:, :, low] * (1 - w)[None, None, :] + rows[:, :, low + 1] * w[None, None, :]


def placed(template: np.ndarray, background: np.ndarray, size: int, dy: int, dx: int) -> np.ndarray:
    """The template scaled to ``size`` px and pasted at the cell centre moved by (dy, dx), as the
    renderer's jitter places a cell's content; (3, c, c)."""
    c = template.shape[1]
    scaled = resize_square(template, size)
    canvas = np.empty_like(template)
    canvas[...] = background[:, None, None]
    top, left = (c - size) // 2 + dy, (c - size) // 2 + dx
    y0, x0, y1, x1 = max(top, 0), max(left, 0), min(top + size, c), min(left + size, c)
    canvas[:, y0:y1, x0:x1] = scaled[:, y0 - top : y1 - top, x0 - left : x1 - left]
    return canvas


@dataclass(frozen=True)
class Placement:
    """Best jitter hypothesis per cell: content size and offset, and the distance there."""

    size: np.ndarray  # (K,) int
    dy: np.ndarray  # (K,) int
    dx: np.ndarray  # (K,) int
    distance: np.ndarray  # (K,) float


def ink_moments(
    cells: np.ndarray, background: np.ndarray, band: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (cells (3, K, c, c)): ink-mass centroid y, x and spatial spread (rms radius)."""
    c = cells.shape[2]
    mass = np.abs(cells - background[:, None, None, None]).max(axis=0)
    mass[:, :band] = mass[:, c - band :] = 0.0
    mass[:, :, :band] = mass[:, :, c - band :] = 0.0
    total = np.maximum(mass.sum(axis=(1, 2)), 1e-6)
    idx = np.arange(c, dtype=np.float32)
    py, px = mass.sum(axis=2) / total[:, None], mass.sum(axis=1) / total[:, None]
    cy, cx = py @ idx, px @ idx
    spread = np.sqrt(py @ idx**2 - cy**2 + px @ idx**2 - cx**2)
    return cy, cx, spread


def initial_offsets(
    cell_centroids: tuple[np.ndarray, np.ndarray], template_centroid: tuple[float, float], c: int, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """(dy, dx) per cell for content of ``size`` px: the offset that puts the template's ink
    centroid (:func:`ink_moments`), scaled about the cell centre, on the cell's."""
    (cy, cx), (ty, tx) = cell_centroids, template_centroid
    centre, real = (c - 1) / 2.0, size / c
    limit = max_shift(c)
    dy = np.rint(cy - (centre + real * (ty - centre))).astype(np.int64)
    dx = np.rint(cx - (centre + real * (tx - centre))).astype(np.int64)
    return np.clip(dy, -limit, limit), np.clip(dx, -limit, limit)


def min_size(c: int) -> int:
    """Smallest content size searched at cell size ``c``."""
    return max(1, int(np.floor(MIN_SCALE * c)))


def size_range(c: int) -> range:
    """Content sizes searched against a template at cell size ``c``: MIN_SCALE..1/MIN_SCALE of it
    (the template itself may be a scaled-down cell)."""
    return range(min_size(c), int(np.ceil(c / MIN_SCALE)) + 1)


def max_shift(c: int) -> int:
    """Largest content offset searched at cell size ``c`` (px, each axis)."""
    return max(1, int(round(MAX_OFFSET * c)))


def difference_score(diff: np.ndarray, pool: int, out: np.ndarray | None = None) -> np.ndarray:
    """(K,) score of per-pixel differences (K, h, w): the largest locally pooled difference
    (``out``, shaped like ``diff``, receives the pooled map)."""
    k = diff.shape[0]
    pooled = uniform_filter(diff, size=(1, pool, pool), mode="nearest", output=out)
    return pooled.reshape(k, -1).max(axis=1)


FLOOR_MARGIN = 1e-5  # relative: covers the float32 rounding of both poolings (measured: at most ~2e-7)


def pooled_floor(diff: np.ndarray, pool: int) -> np.ndarray:
    """(K,) a lower bound of :func:`difference_score` (diff (K, h, w)), at about a quarter of its
    cost: the largest mean over the ``pool`` x ``pool`` blocks that tile the map from its
    corner (each is one of the windows the pooling averages), less :data:`FLOOR_MARGIN`."""
    k, h, w = diff.shape
    hh, ww = h - h % pool, w - w % pool
    rows = diff[:, :hh].reshape(k, hh // pool, pool, w).sum(axis=2)
    blocks = rows[:, :, :ww].reshape(k, hh // pool, ww // pool, pool).sum(axis=3)
    return blocks.reshape(k, -1).max(axis=1) * ((1.0 - FLOOR_MARGIN) / (pool * pool))


class _Scratch:
    """Buffers one placement search reuses for every hypothesis (its cores' shape (3, K, h, w)):
    each hypothesis then writes into memory already touched instead of allocating ~4 arrays
    of the cores' size (the search runs hundreds of hypotheses per image)."""

    def __init__(self, core: np.ndarray, known: np.ndarray | None = None) -> None:
        self.model = np.empty_like(core)
        self.nearest = np.empty_like(core[0])
        self.pooled = np.empty_like(core[0])
        # The cells with pixels whose difference does not count, and their 0/1 masks (K', h, w);
        # only these few are multiplied, at every hypothesis (None: every pixel counts).
        self.masked = None
        if known is not None:
            cells = np.flatnonzero((known == 0).any(axis=(1, 2)))
            self.masked = (cells, known[cells])


def _hypothesis_scores(
    core: np.ndarray,
    template: np.ndarray,
    background: np.ndarray,
    inner: slice,
    pool: int,
    keys: list[tuple[int, int, int]],
    models: dict[tuple[int, int, int], np.ndarray],
    scratch: _Scratch,
    beat: np.ndarray,
) -> np.ndarray:
    """(K,) score of every cell's core (3, K, h, w) against the template placed at its own
    (size, dy, dx) hypothesis in ``keys``; placed models are cached in ``models``.

    Only a score below ``beat`` (each cell's best so far) changes the search, so a cell whose
    :func:`pooled_floor` already reaches its ``beat`` gets +inf without the pooling: the same
    placements, for about a third of the pooling's cost (most cells at most hypotheses)."""
    distinct = list(dict.fromkeys(keys))
    for key in distinct:
        if key not in models:
            models[key] = placed(template, background, *key)[:, inner, inner]
    # One gather of the few distinct models into every cell's slot (not K Python-level copies).
    slot = {key: i for i, key in enumerate(distinct)}
    which = np.fromiter((slot[key] for key in keys), dtype=np.intp, count=len(keys))
    diff = np.take(np.stack([models[key] for key in distinct], axis=1), which, axis=1, out=scratch.model,
                   mode="clip")  # indices are in range; "raise" would gather through a temporary
    np.subtract(core, diff, out=diff)
    np.abs(diff, out=diff)
    largest = np.maximum(diff[0], diff[1], out=scratch.nearest)
    np.maximum(largest, diff[2], out=largest)
    if scratch.masked is not None:
        cells, mask = scratch.masked
        largest[cells] *= mask
    open_cells = np.flatnonzero(pooled_floor(largest, pool) < beat)
    if open_cells.size == len(keys):
        return difference_score(largest, pool, out=scratch.pooled)
    score = np.full(len(keys), np.inf, dtype=np.float32)
    if open_cells.size:
        score[open_cells] = difference_score(largest[open_cells], pool)
    return score


def _keep_better(best: Placement, score: np.ndarray, h_size, hy, hx) -> Placement:
    better = score < best.distance
    return Placement(np.where(better, h_size, best.size), np.where(better, hy, best.dy),
                     np.where(better, hx, best.dx), np.where(better, score, best.distance))


Hypotheses = list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # (size, dy, dx), each (K,)
Stage = Callable[[Placement], Hypotheses]  # the hypotheses to try around the best so far


def _search(
    core: np.ndarray,
    template: np.ndarray,
    background: np.ndarray,
    inner: slice,
    pool: int,
    best: Placement,
    stages: list[Stage],
    limit: int,
    known: np.ndarray | None = None,
) -> Placement:
    """``best`` improved by every hypothesis (size, dy, dx, each (K,)) that each of ``stages``
    in turn draws around it; models cached per (size, dy, dx) across the whole search."""
    models: dict[tuple[int, int, int], np.ndarray] = {}
    scratch = _Scratch(core, None if known is None else known[:, inner, inner])
    for stage in stages:
        for h_size, hy, hx in stage(best):
            h_size = np.maximum(h_size, 1)
            hy, hx = np.clip(hy, -limit, limit), np.clip(hx, -limit, limit)
            keys = list(zip(h_size.tolist(), hy.tolist(), hx.tolist(), strict=True))
            score = _hypothesis_scores(core, template, background, inner, pool, keys, models, scratch,
                                       best.distance)
            best = _keep_better(best, score, h_size, hy, hx)
    return best


def _offsets_around(span: int) -> Stage:
    """A search stage: every offset within ``span`` px of each cell's best, at its best size."""

    def stage(best: Placement) -> Hypotheses:
        steps = range(-span, span + 1)
        return [(best.size, best.dy + ddy, best.dx + ddx) for ddy in steps for ddx in steps if ddy or ddx]

    return stage


def _sizes_around(span: int) -> Stage:
    """A search stage: every content size within ``span`` px of each cell's best, at its best offset."""

    def stage(best: Placement) -> Hypotheses:
        return [(best.size + ds, best.dy, best.dx) for ds in range(-span, span + 1) if ds]

    return stage


def best_placement(
    cells: np.ndarray,
    template: np.ndarray,
    background: np.ndarray,
    band: int,
    pool: int,
    sizes: range,
    known: np.ndarray | None = None,
) -> Placement:
    """Each cell against the template at every content size, at the centroid-matched offset and
    the eight around it. A full grid: a coordinate search from the centroid offsets, at a
    fifth of the cost, misses placements at hard and loses scenes (bench/robust.md), and so
    does a search over every other size refined beside the best, since the score is not
    smooth in the size (a sharp emoji at 60 px scores 30, 38, 0, 31, 28 at sizes 58 to 62:
    resampling aliases its edges)."""
    k, c = cells.shape[1], cells.shape[2]
    inner = slice(band, c - band)
    core = np.ascontiguousarray(cells[:, :, inner, inner])
    cell_centroids = ink_moments(cells, background, band)[:2]
    template_centroid = tuple(float(v[0]) for v in ink_moments(template[:, None], background, band)[:2])

    def around(size: np.ndarray) -> Hypotheses:
        dy0, dx0 = initial_offsets(cell_centroids, template_centroid, c, size)
        return [(size, dy0 + ddy, dx0 + ddx) for ddy in (0, -1, 1) for ddx in (0, -1, 1)]

    def every_size(best: Placement) -> Hypotheses:
        return [h for size in sizes for h in around(np.full(k, size))]

    start = Placement(np.full(k, c), np.zeros(k, np.int64), np.zeros(k, np.int64), np.full(k, np.inf, np.float32))
    return _search(core, template, background, inner, pool, start, [every_size], max_shift(c), known)


def refined_placement(
    cells: np.ndarray,
    template: np.ndarray,
    background: np.ndarray,
    band: int,
    pool: int,
    coarse: Placement,
    ratio: float,
    known: np.ndarray | None = None,
) -> Placement:
    """Each full-resolution cell against the template around its working-size placement
    ``coarse`` scaled by ``ratio`` (full cell / working cell): the size, then both offsets,
    then the size again, each searched within the rounding that scaling leaves."""
    k, c = cells.shape[1], cells.shape[2]
    inner = slice(band, c - band)
    core = np.ascontiguousarray(cells[:, :, inner, inner])
    span = max(1, int(np.ceil(ratio)) - 1)
    size0 = np.rint(coarse.size * ratio).astype(np.int64)
    dy0, dx0 = (np.rint(v * ratio).astype(np.int64) for v in (coarse.dy, coarse.dx))

    def scaled(best: Placement) -> Hypotheses:
        return [(size0, dy0, dx0)]

    start = Placement(size0, dy0, dx0, np.full(k, np.inf, np.float32))
    stages = [scaled, _sizes_around(span), _offsets_around(span), _sizes_around(span)]
    return _search(core, template, background, inner, pool, start, stages, max_shift(c), known)


@dataclass(frozen=True)
class CellFit:
    """The cells of one image (3, K, c, c) matched to their majority template."""

    cells: np.ndarray
    template: np.ndarray  # (3, c, c)
    background: np.ndarray  # (3,)
    band: int
    pool: int
    found: Placement
    keep: np.ndarray  # (K,) bool: the majority-like cells the template was taken from


def _cells_of(tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Cells (3, K, c, c), background colour, frame band and pooling size of tiles (rows, c, cols, c, 3)."""
    rows, c, cols = tiles.shape[:3]
    band = max(1, frame_px(c))
    cells = np.ascontiguousarray(tiles.transpose(4, 0, 2, 1, 3)).reshape(3, rows * cols, c, c)
    return cells, background_colour(tiles, band), band, max(POOL_MIN_PX, c // 12)


def _template_of(cells: np.ndarray, keep: np.ndarray, dy: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Per-pixel median of the ``keep`` cells, each moved back by its offset."""
    moved = [np.roll(cells[:, i], (-int(dy[i]), -int(dx[i])), axis=(1, 2)) for i in np.flatnonzero(keep)]
    return np.median(np.stack(moved, axis=1), axis=1)


def fit_cells(tiles: np.ndarray, known: np.ndarray | None = None) -> CellFit:
    """Every cell's best jitter placement against the majority template (at the tiles' size).

    The first template is the per-pixel median of all cells (blurred by the jitter); it is
    re-taken from the majority-like cells found at full size, moved back by their offsets.
    """
    cells, background, band, pool = _cells_of(tiles)
    c = cells.shape[2]
    template = np.median(cells, axis=1)  # content at a middling scale: search larger sizes too
    found = best_placement(cells, template, background, band, pool, size_range(c), known)
    keep = np.ones(cells.shape[1], dtype=bool)
    for _ in range(TEMPLATE_ROUNDS):
        # The new template: majority-like cells at the largest content size among them, moved back.
        majority = found.distance <= np.median(found.distance)
        sizes = np.sort(found.size[majority])[::-1]
        top = sizes[min(MIN_TEMPLATE_CELLS, sizes.size) - 1]
        keep = majority & (found.size >= top)
        template = _template_of(cells, keep, found.dy, found.dx)
        found = best_placement(cells, template, background, band, pool, size_range(c), known)
    return CellFit(cells, template, background, band, pool, found, keep)


def cell_distances(
    tiles: np.ndarray, work: Grid, full: np.ndarray | None = None, outline: Span | None = None
) -> np.ndarray:
    """(rows, cols) distance of every cell to the majority: of :func:`cell_readings`, the one
    whose cut separates more clearly (:func:`clearer`)."""
    return clearer(cell_readings(tiles, work, full, outline))


def cell_readings(
    tiles: np.ndarray, work: Grid, full: np.ndarray | None = None, outline: Span | None = None
) -> list[np.ndarray]:
    """(rows, cols) distances of every cell to the majority at its best jitter placement: read at
    the working size and, with ``full``, also at full resolution (working size first).

    The placement is searched on the working-size ``tiles`` (:func:`fit_cells`). With ``full``
    (the same cells at full resolution, layout (rows, C, cols, C, 3), C > c), the distance
    is read there: the template re-taken at full size from the same majority-like cells and
    every placement refined within the scaling's rounding (:func:`refined_placement`), so an
    edit one or two source pixels wide, which the working size halves and blurs into the
    majority's own resampling noise, still counts (hard PixelEdit). The working-size reading
    is kept beside it: at full size a large smooth cell's own resampling and JPEG noise can
    reach a faint exception that the working size's pooling keeps apart (hard PixelContent).
    With a cue ``outline`` (its rectangle), the pixels within its reach are not compared
    (:func:`outline_reach`).
    """
    rows, c, cols = tiles.shape[:3]
    known = outline_reach(outline, rows, cols, c)
    fit = fit_cells(tiles, known)
    coarse = tolerant_distance(fit.cells, fit.template, fit.background, fit.band, fit.pool, fit.found, known)
    if full is None or full.shape[1] == c:
        return [coarse.reshape(rows, cols)]
    cells, background, band, pool = _cells_of(full)
    ratio = full.shape[1] / c
    dy, dx = (np.rint(v * ratio).astype(np.int64) for v in (fit.found.dy, fit.found.dx))
    template = _template_of(cells, fit.keep, dy, dx)
    known = outline_reach(outline, rows, cols, full.shape[1])
    found = refined_placement(cells, template, background, band, pool, fit.found, ratio, known)
    fine = tolerant_distance(cells, template, background, band, pool, found, known)
    return [coarse.reshape(rows, cols), fine.reshape(rows, cols)]


def cut_clarity(dist: np.ndarray) -> float:
    """How clearly :func:`separate` splits ``dist``: the nearest exception's height above the
    scene's centre (the median distance: the reading's own noise level) over the farthest
    majority cell's; scale-free and offset-free, so readings at different sizes compare.
    1.0 when nothing stands out."""
    exceptions = separate(dist)
    if not exceptions.any() or exceptions.all():
        return 1.0
    centre = float(np.median(dist))
    return float((dist[exceptions].min() - centre) / max(float(dist[~exceptions].max()) - centre, 1e-6))


def clearer(readings: list[np.ndarray]) -> np.ndarray:
    """Of several distance readings of the same cells, the one whose cut is clearest
    (:func:`cut_clarity`); the later reading (full resolution) on a tie.

    Preferring, among clear cuts, the reading that finds the most exceptions was tried: it
    fixed a hard PixelContent dev scene (a near second identity only the full size sees) and
    broke a hard PixelEdit test scene (a cluster of majority cells the full size lifts clear
    of the rest), which the two readings' statistics cannot tell apart; see bench/robust.md.
    """
    best = readings[-1]
    for dist in readings[-2::-1]:
        if cut_clarity(dist) > cut_clarity(best):
            best = dist
    return best


def shifted_min(
    diff_of: Callable[[np.ndarray], np.ndarray], image: np.ndarray, tol: int
) -> np.ndarray:
    """Per pixel, the smallest ``diff_of(shifted image)`` over shifts of up to ``tol`` px (edges replicated)."""
    c = image.shape[-1]
    padded = np.pad(image, [(0, 0)] * (image.ndim - 2) + [(tol, tol), (tol, tol)], mode="edge")
    best = None
    for sy in range(2 * tol + 1):
        for sx in range(2 * tol + 1):
            d = diff_of(padded[..., sy : sy + c, sx : sx + c])
            best = d if best is None else np.minimum(best, d)
    return best


def tolerant_distance(
    cells: np.ndarray,
    template: np.ndarray,
    background: np.ndarray,
    band: int,
    pool: int,
    found: Placement,
    known: np.ndarray | None = None,
) -> np.ndarray:
    """(K,) distance at each cell's best placement, every pixel matched to the closest pixel
    within ``TOLERANCE_PX`` both ways (cell to model and model to cell): the sub-pixel
    phase of a resampled high-contrast edge (a flag's stripes) costs nothing, while a stroke
    the exception adds or lacks still does. ``known`` (K, c, c), 0 or 1: pixels whose
    difference counts (:func:`outline_reach`; all of them without it)."""
    c = cells.shape[2]
    inner = slice(band, c - band)
    models = np.stack(
        [
            placed(template, background, int(found.size[i]), int(found.dy[i]), int(found.dx[i]))
            for i in range(cells.shape[1])
        ],
        axis=1,
    )

    def against(fixed: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return lambda moved: np.abs(moved - fixed).max(axis=0)

    one = shifted_min(against(cells), models, TOLERANCE_PX)[:, inner, inner]
    other = shifted_min(against(models), cells, TOLERANCE_PX)[:, inner, inner]
    diff = np.maximum(one, other)
    if known is not None:
        diff *= known[:, inner, inner]
    return difference_score(diff, pool)


def outline_reach(outline: Span | None, rows: int, cols: int, c: int) -> np.ndarray | None:
    """(rows * cols, c, c) 1 where a cell's pixel is out of the cue outline's reach, 0 within it;
    None without an outline.

    The outline is drawn over the frame band just inside the rectangle's edge, after
    degradation, so it hides whatever content the jitter pushed into that band; painting
    the band back to the background (:func:`without_outline`) cuts such a cell's edge, and
    the working size's blur carries the cut inwards. Within the band, the blur's reach and
    the distance's tolerance of it, a border cell's pixels are unknown: not compared.
    """
    if outline is None:
        return None
    (r1, r2), (c1, c2) = outline.rows, outline.cols
    reach = frame_px(c) + int(np.ceil(BLUR_TRUNCATE * blur_sigma(c))) + TOLERANCE_PX
    known = np.ones((rows, cols, c, c), dtype=np.float32)
    known[r1 - 1, c1 - 1 : c2, :reach, :] = 0.0
    known[r2 - 1, c1 - 1 : c2, c - reach :, :] = 0.0
    known[r1 - 1 : r2, c1 - 1, :, :reach] = 0.0
    known[r1 - 1 : r2, c2 - 1, :, c - reach :] = 0.0
    return known.reshape(rows * cols, c, c)


def separate(dist: np.ndarray) -> np.ndarray:
    """Exception cells, without the count: every cell above the cut.

    The scene's robust centre and spread (median and MAD of all distances: the majority is
    most cells) give a floor that an exception clears (``GAP_MAD_FACTOR`` spreads and
    ``MIN_SEPARATION``). A gap in the sorted distances whose upper side is above the floor
    is a *clear* gap when it is at least ``GAP_SHARE`` of the widest such gap, or when it
    is ``JUMP_MAD_FACTOR`` spreads wide and its upper side is ``JUMP_RATIO`` times its lower
    side. The cut is at the *lowest* clear gap: two exception identities (one near the
    majority, one far off) both count, where a cut at the widest gap alone would split
    them; a step inside the majority's own tail is neither wide nor a jump.
    """
    flat = np.sort(dist.ravel())[::-1]
    centre = float(np.median(flat))
    mad = float(np.median(np.abs(flat - centre))) * 1.4826
    floor = centre + max(GAP_MAD_FACTOR * mad, MIN_SEPARATION)
    top = flat[: max(1, flat.size // 2) + 1]
    upper, lower = top[:-1], top[1:]
    above = upper > floor
    if not above.any():
        return np.zeros_like(dist, dtype=bool)
    gaps = np.where(above, upper - lower, -np.inf)
    jump = above & (gaps >= JUMP_MAD_FACTOR * mad) & (upper >= JUMP_RATIO * np.maximum(lower, 1e-6))
    clear = (gaps >= GAP_SHARE * gaps.max()) | jump
    k = int(np.flatnonzero(clear).max()) + 1
    return dist > (flat[k - 1] + flat[k]) / 2.0


def read_robust(rgb: np.ndarray, highlighted: bool) -> RobustReading:
    """Grid, distances, exceptions and (with ``highlighted``) the cue's rectangle of an image."""
    grid = locate_grid(rgb)
    tiles, work = work_tiles(rgb, grid)
    span, outlined, source = None, False, rgb
    if highlighted:
        span, tiles, outlined = find_cue(tiles, work)
        if outlined:
            # The outline lies in the frame band of the rectangle's border cells, drawn crisp
            # after degradation: painted back to the background at full size, before the
            # work tiles' blur can smear it into the cells.
            background = background_colour(tiles, max(1, frame_px(work.cell)))
            source = without_outline(rgb, grid, span, background)
            tiles, work = work_tiles(source, grid)
    full = None
    if work.cell < grid.cell:  # placements found at the working size, distances read at full size
        full, full_grid = work_tiles(source, grid, work_cell=grid.cell)
        if highlighted and not outlined:
            _, full, _ = find_cue(full, full_grid)  # the tint undone at full size too
    dist = cell_distances(tiles, work, full, span if outlined else None)
    return RobustReading(grid=grid, distance=dist, exceptions=separate(dist), highlight=span)


def without_outline(rgb: np.ndarray, grid: Grid, span: Span, background: np.ndarray) -> np.ndarray:
    """A copy of ``rgb`` with the frame band just inside the rectangle's outer edge set to the
    background colour (the renderer's outline is as wide as that band: ``frame_px``)."""
    out = np.array(rgb, copy=True)
    width, c = frame_px(grid.cell), grid.cell
    (r1, r2), (c1, c2) = span.rows, span.cols
    y0, y1, x0, x1 = (r1 - 1) * c, r2 * c, (c1 - 1) * c, c2 * c
    fill = np.rint(background).astype(out.dtype)
    out[y0 : y0 + width, x0:x1] = fill
    out[y1 - width : y1, x0:x1] = fill
    out[y0:y1, x0 : x0 + width] = fill
    out[y0:y1, x1 - width : x1] = fill
    return out


def find_cue(tiles: np.ndarray, work: Grid) -> tuple[Span, np.ndarray, bool]:
    """The highlighted rectangle, the tiles (a tint undone) and whether the cue is an outline
    (in the frame bands) rather than a tint."""
    c = work.cell
    band = max(1, frame_px(c))
    background = background_colour(tiles, band)
    diff = np.abs(tiles - background).max(axis=4)  # (rows, c, cols, c)
    edge = np.zeros(c, dtype=bool)
    edge[:band] = edge[c - band :] = True
    in_band = (edge[:, None, None] | edge[None, None, :])[None]  # (1, c, 1, c)
    diff = np.where(in_band, diff, 0.0).reshape(work.rows * c, work.cols * c)
    try:
        span, outline = find_highlight(diff, work)
    except CVError:
        outline = None
    if outline is not None:
        return span, tiles, True
    span, untinted = untint_highlight(tiles, work)
    # Blur and JPEG smear the tint's edge: restore the frame band there from the background.
    mask = edge_band(span, work, max(2, c // 12), (work.rows * c, work.cols * c))
    flat = untinted.reshape(work.rows * c, work.cols * c, 3)
    flat[mask] = background
    return span, untinted, False


def answer_region(task: TaskText, grid: Grid, highlight: Span | None) -> np.ndarray:
    """(rows, cols) cells the task asks about."""
    region = np.ones((grid.rows, grid.cols), dtype=bool)
    if highlight is not None:
        region &= highlight.mask(grid.rows, grid.cols)
    if task.include is not None:
        region &= task.include.mask(grid.rows, grid.cols)
    if task.exclude is not None:
        region &= ~task.exclude.mask(grid.rows, grid.cols)
    return region


read_robust_file: CachedReader[RobustReading] = CachedReader(read_robust)
"""``read_robust_file(path, highlighted)``: :func:`read_robust` of a file, read once per file."""


def solve_robust(image_path: Path | str, prompt: str) -> str:
    """The formal answer for one item from its image file and prompt text."""
    task = parse_task(prompt)
    reading = read_robust_file(image_path, task.highlighted)
    rows, cols = np.nonzero(
        reading.exceptions & answer_region(task, reading.grid, reading.highlight)
    )
    cells = [(int(r) + 1, int(c) + 1) for r, c in zip(rows, cols, strict=True)]
    return formal_answer(task.mode, cells, count=len(cells))
