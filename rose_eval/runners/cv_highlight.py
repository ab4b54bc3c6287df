"""The ``cv`` baseline's highlighted region on a cue image: an outline (grid lines along which
a thin band differs from the majority) or a tint (a blend of one colour over a rectangle
of cells). Colour-agnostic: a difference from the majority tile, never a colour match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import uniform_filter

from rose_eval.runners.cv_grid import Grid, majority_sample, median_tile, tile_medians
from rose_eval.runners.cv_prompt import CVError, Span

TINT_LEVEL = 20.0  # median 0-255 difference of a tinted cell from the majority


TINT_MIN_STRENGTH = 0.08  # a tint blends at least this much of its colour in


TINT_MAX_RESIDUAL = 0.35  # a tinted tile's blend-fit residual, relative to its change


TINT_MIN_CHANGE = 4.0  # mean 0-255 change of a tinted (or excepted) tile


OUTLINE_LEVEL = 60.0  # 0-255 difference of an outline pixel from the majority


MIN_OUTLINE_COVER = 0.6  # share of a rectangle side the outline must cover


OUTLINE_LINE_COVER = 0.7  # a pixel line along a side belongs to the frame above this cover


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
    majority = median_tile(tiles, majority_sample(n))
    fit = fit_blend(tiles, majority)
    plain = _tinted(fit, low=False)
    if plain.sum() > _tinted(fit, low=True).sum():
        majority = median_tile(tiles, np.flatnonzero(plain.ravel()))
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


def edge_band(span: Span, grid: Grid, width: int, shape: tuple[int, ...]) -> np.ndarray:
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
    if np.mean(tile_medians(diff, grid)[span.mask(grid.rows, grid.cols)] > TINT_LEVEL) > 0.5:
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
