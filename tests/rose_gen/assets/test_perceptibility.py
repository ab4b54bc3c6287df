"""The perceptibility rule: an exception must stand out from the majority cells' own variation."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets import perceptibility as pc
from rose_gen.render.degrade import degrade_image, jittered_grid


def _tiles(cell: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A majority tile (a dark bar), a faint exception (one pale dot) and a clear one (a second bar)."""
    majority = np.full((cell, cell, 3), 235, dtype=np.uint8)
    majority[8:32, 17:23] = 30
    faint = majority.copy()
    faint[10:12, 26:28] = 205
    clear = majority.copy()
    clear[17:23, 6:34] = 30
    return majority, faint, clear


def _grid(tiles: list[np.ndarray], targets: list[tuple[int, int]], rows: int = 6, cols: int = 6,
          jitter: bool = False, degrade: bool = False) -> np.ndarray:
    index = np.zeros((rows, cols), dtype=np.int64)
    for r, c in targets:
        index[r - 1, c - 1] = 1
    params = {"seed": 7, "max_offset": 0.08, "min_scale": 0.85}
    if jitter:
        image = jittered_grid(tiles, index, params)
    else:
        image = np.concatenate([np.concatenate([tiles[index[r, c]] for c in range(cols)], axis=1)
                                for r in range(rows)], axis=0)
    return degrade_image(image, 0.5, 40) if degrade else image


def test_identical_majority_has_no_noise_and_any_drawn_difference_passes() -> None:
    majority, faint, _ = _tiles()
    judged = pc.judge_scene(_grid([majority, faint], [(2, 3), (5, 5)]), 6, 6, 40, [(2, 3), (5, 5)])
    assert judged.noise == 0.0 and judged.perceptible and not judged.reasons()


def test_a_faint_exception_in_a_jittered_degraded_grid_fails_and_a_clear_one_passes() -> None:
    from rose_gen.render.degrade import cell_placements

    majority, faint, clear = _tiles()
    targets = [(2, 3), (5, 5)]
    placements = cell_placements(6, 6, 40, {"seed": 7, "max_offset": 0.08, "min_scale": 0.85})
    weak = pc.judge_scene(_grid([majority, faint], targets, jitter=True, degrade=True), 6, 6, 40, targets,
                          placements)
    strong = pc.judge_scene(_grid([majority, clear], targets, jitter=True, degrade=True), 6, 6, 40, targets,
                            placements)
    assert weak.noise >= pc.NOISE_FLOOR and strong.noise >= pc.NOISE_FLOOR
    assert not weak.perceptible and len(weak.reasons()) == 2 and "needs 2.5x" in weak.reasons()[0]
    assert strong.perceptible and min(c.ratio for c in strong.cells) > 2 * pc.MARGIN
    # The same faint dot on a plain grid (no variation to stand out from) passes: the rule is relative.
    assert pc.judge_scene(_grid([majority, faint], targets), 6, 6, 40, targets).perceptible


def test_a_contour_displaced_by_one_pixel_costs_nothing() -> None:
    majority, _, _ = _tiles()
    moved = np.roll(majority, 1, axis=1)
    looks = pc._looks(np.stack([majority, moved]))
    d = pc.cell_distances(looks, looks[0])
    assert d[0] == 0.0 and d[1] < 1.0
    assert pc.cell_distances(looks, looks[0], tol=0)[1] > 10.0


def _tolerant_one_way(a: np.ndarray, b: np.ndarray, tol: int) -> np.ndarray:
    """The plain definition: per pixel of ``a`` (n, h, w, 3), the distance to the closest pixel of
    ``b`` within ``tol`` px, ``b`` edge-padded; channels summed in order, as the module does."""
    n, h, w, _ = a.shape
    padded = np.pad(b, ((0, 0), (tol, tol), (tol, tol), (0, 0)), mode="edge").astype(np.float32)
    best = np.full((n, h, w), np.inf, dtype=np.float32)
    for dy in range(2 * tol + 1):
        for dx in range(2 * tol + 1):
            window = padded[:, dy:dy + h, dx:dx + w]
            d2 = (a[..., 0] - window[..., 0]) ** 2
            d2 += (a[..., 1] - window[..., 1]) ** 2
            d2 += (a[..., 2] - window[..., 2]) ** 2
            best = np.minimum(best, d2)
    return np.sqrt(best)


@pytest.mark.parametrize("tol", [0, 1, 2])
def test_both_directions_at_once_equal_each_direction_alone_bit_for_bit(tol: int) -> None:
    # Each (cell, reference) pixel pair within tol px is computed once for both directions; the
    # pixels along the edges (padding) per direction. Odd, non-square shapes reach every edge case.
    rng = np.random.default_rng(tol)
    for n, h, w in ((4, 9, 13), (3, 20, 20), (2, 5, 4)):
        cells = (rng.random((n, h, w, 3), dtype=np.float32) * 100).astype(np.float32)
        reference = np.median(cells, axis=0)
        ref = np.broadcast_to(reference[None], cells.shape)
        expected = np.maximum(_tolerant_one_way(cells, ref, tol), _tolerant_one_way(ref, cells, tol))
        assert pc.tolerant_differences(cells, reference, tol).tobytes() == expected.tobytes()
