"""The robust solver: it solves a real generated standard release through ``rose-run``, its
separation needs no count, and it is registered where ``rose-run --solver`` finds it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_eval.cli.run import main as rose_run
from rose_eval.runners import robust_solver
from rose_eval.runners.baselines import SOLVERS
from rose_eval.runners.cv_grid import Grid
from rose_eval.runners.cv_prompt import Span
from rose_eval.score import score_item

from .conftest import outline


def _pass_rate(release: Path, preds: Path, subsets: tuple[str, ...] = ()) -> float:
    rows = [
        json.loads(x)
        for x in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows = [row for row in rows if not subsets or row["rose_subset"] in subsets]
    answers = {
        p["item_id"]: p
        for p in (json.loads(x) for x in preds.read_text(encoding="utf-8").splitlines())
    }
    return sum(int(score_item(row, answers.get(row["item_id"]))["pass"]) for row in rows) / len(
        rows
    )


def _run(release: Path, out: Path, subsets: tuple[str, ...] = ()) -> float:
    code = rose_run(
        [
            *(["--subsets", *subsets] if subsets else []),
            "--dataset_root",
            str(release),
            "--split",
            "test",
            "--solver",
            "robust",
            "--output",
            str(out),
            "--overwrite",
            "--no_progress",
            "--concurrency",
            "2",
        ]
    )
    assert code in (0, 1)
    return _pass_rate(release, out, subsets)


@pytest.mark.slow  # rose-run's robust solver on every test item of the mini release
def test_solves_a_standard_release(mini_release: Path, tmp_path: Path) -> None:
    assert _run(mini_release, tmp_path / "robust.jsonl") >= 0.98


@pytest.mark.slow  # rose-run's robust solver on every test item of the mini release
def test_fails_when_the_grid_locator_breaks(
    mini_release: Path, tmp_path: Path, monkeypatch
) -> None:
    robust_solver.read_robust_file.cache_clear()
    real = robust_solver.locate_grid

    def wrong_cell(rgb: np.ndarray) -> Grid:
        grid = real(rgb)
        return Grid(grid.rows // 2, grid.cols // 2, grid.cell * 2)

    monkeypatch.setattr(robust_solver, "locate_grid", wrong_cell)
    # Only the small-cell subsets: a doubled 136-153 px pixel-art cell makes the full-resolution
    # placement search large ratios and costly hypotheses, for the same verdict.
    small_cells = ("ROSE-ChineseGlyph", "ROSE-EmojiStyle", "ROSE-EmojiContent")
    try:
        assert _run(mini_release, tmp_path / "broken.jsonl", small_cells) < 0.5
    finally:
        robust_solver.read_robust_file.cache_clear()


def test_separation_finds_exceptions_without_the_count() -> None:
    rng = np.random.default_rng(3)
    for k in (0, 1, 4, 9):
        dist = rng.normal(8.0, 1.5, size=(9, 9))
        cells = rng.choice(81, size=k, replace=False)
        dist.flat[cells] = rng.uniform(40.0, 60.0, size=k)
        assert set(np.flatnonzero(robust_solver.separate(dist))) == set(cells.tolist())


@pytest.mark.parametrize("near, far", [(2, 4), (1, 5), (3, 1)])
def test_separation_keeps_both_exception_identities(near: int, far: int) -> None:
    # Two identities: one just clear of the majority, one far off. The gap between the two
    # identities is wider than the one below the nearer: a widest-gap cut would drop it.
    rng = np.random.default_rng(11)
    dist = rng.normal(6.0, 1.5, size=(10, 10))
    cells = rng.choice(100, size=near + far, replace=False)
    dist.flat[cells[:near]] = rng.uniform(32.0, 35.0, size=near)
    dist.flat[cells[near:]] = rng.uniform(95.0, 130.0, size=far)
    assert set(np.flatnonzero(robust_solver.separate(dist))) == set(cells.tolist())


def test_a_gap_inside_the_majoritys_tail_is_no_exception() -> None:
    # A majority whose spread has a step (some cells a little worse aligned) and one exception.
    rng = np.random.default_rng(4)
    dist = np.concatenate([rng.normal(8.0, 1.0, 70), rng.normal(12.0, 1.0, 29), [60.0]])
    found = robust_solver.separate(dist.reshape(10, 10))
    assert np.flatnonzero(found).tolist() == [99]


def test_noise_alone_gives_no_exception() -> None:
    dist = np.random.default_rng(5).normal(10.0, 2.0, size=(12, 12))
    assert not robust_solver.separate(dist).any()


def _readings_of_one_scene() -> tuple[np.ndarray, np.ndarray, set[int]]:
    # Two readings of the same 10x10 cells (figures after hard PixelContent at 98 px cells):
    # at the working size the four exceptions clear a smooth majority tail (centre 20, top
    # 50: nearest exception 65); at full size the majority's own tail reaches the faintest
    # exception (71.9 beside 72.0), so the cut falls above it, where the raw ratio of the
    # cut's sides (97.7 / 72.0 = 1.36) is larger than the working size's (65 / 50 = 1.30).
    cells = [7, 33, 58, 86]
    coarse = np.concatenate([np.linspace(15.0, 25.0, 90), np.linspace(30.0, 50.0, 6)])
    fine = np.concatenate([np.linspace(2.0, 12.0, 80), np.linspace(14.0, 71.9, 16)])
    readings = []
    for majority, exceptions in ((coarse, [65.0, 80.0, 85.0, 90.0]), (fine, [72.0, 97.7, 102.4, 103.2])):
        dist = np.empty(100)
        dist[np.setdiff1d(np.arange(100), cells)] = majority
        dist[cells] = exceptions
        readings.append(dist.reshape(10, 10))
    return readings[0], readings[1], set(cells)


def test_the_reading_whose_cut_is_clearer_above_the_centre_is_kept() -> None:
    coarse, fine, cells = _readings_of_one_scene()
    assert set(np.flatnonzero(robust_solver.separate(fine))) == cells - {7}  # full size misses one
    assert set(np.flatnonzero(robust_solver.separate(coarse))) == cells
    # Above each reading's centre (its noise level), the working size's cut is the clearer one.
    assert robust_solver.cut_clarity(coarse) > robust_solver.cut_clarity(fine)
    chosen = robust_solver.clearer([coarse, fine])
    assert set(np.flatnonzero(robust_solver.separate(chosen))) == cells


def test_full_resolution_is_kept_where_the_working_size_blurs_an_edit() -> None:
    # The hard PixelEdit case the other way round: at the working size the exceptions sink
    # into the majority's resampling noise, at full size they stand clear.
    rng = np.random.default_rng(7)
    coarse = rng.normal(20.0, 2.0, size=(10, 10))
    fine = rng.normal(8.0, 1.0, size=(10, 10))
    cells = [3, 41, 77]
    coarse.flat[cells] = [22.0, 23.0, 27.0]
    fine.flat[cells] = [40.0, 45.0, 50.0]
    chosen = robust_solver.clearer([coarse, fine])
    assert set(np.flatnonzero(robust_solver.separate(chosen))) == set(cells)
    assert robust_solver.clearer([fine, fine]) is fine  # a tie keeps the later (full-size) reading


def test_a_small_clean_step_above_a_quiet_majority_is_cut() -> None:
    # Hard PixelEdit at full size (a dev-split scene, seed 1001): a quiet majority (centre 1.8,
    # at most 6.4) and five one-pixel edits at 9.3-10.4: under MIN_SEPARATION 8 above the
    # centre the floor (9.8) hid the lowest two.
    rng = np.random.default_rng(5)
    dist = np.clip(rng.normal(1.8, 1.0, size=(12, 13)), 0.0, 6.4)
    cells = [9, 30, 64, 99, 140]
    dist.flat[cells] = [10.4, 9.9, 9.9, 9.5, 9.3]
    assert set(np.flatnonzero(robust_solver.separate(dist))) == set(cells)
    assert not robust_solver.separate(np.clip(rng.normal(1.8, 1.0, size=(12, 13)), 0.0, 6.4)).any()


@dataclass(frozen=True)
class _Context:
    seed: int


def test_registered_for_rose_run() -> None:
    assert "robust" in SOLVERS.names()
    factory = SOLVERS.get("robust")
    assert callable(factory(_Context(seed=7))) and callable(factory(7))


@pytest.mark.parametrize("size", [29, 33, 40])
def test_placed_template_matches_the_renderers_jitter(size: int) -> None:
    # A template scaled and moved as the renderer's jitter does lies at distance 0 from the model.
    c = 40
    template = np.full((3, c, c), 255.0, dtype=np.float32)
    template[:, 10:30, 12:20] = 0.0
    background = np.full(3, 255.0, dtype=np.float32)
    model = robust_solver.placed(template, background, size, 1, -2)
    assert model.shape == (3, c, c)
    ink = np.argwhere(model[0] < 128)
    centre_y, centre_x = ink.mean(axis=0)
    assert abs(centre_y - ((c - 1) / 2 + (size / c) * (19.5 - (c - 1) / 2) + 1)) < 1.0
    assert abs(centre_x - ((c - 1) / 2 + (size / c) * (15.5 - (c - 1) / 2) - 2)) < 1.0


@pytest.fixture(scope="module")
def hard_pixel_edit():
    """Real hard PixelEdit draws (v0_1, seed 0, 10 scenes): pixel art in cells of about 100 px."""
    from rose_gen.release.config import load_config
    from rose_gen.scene.plan import SubsetDraws
    from rose_gen.sources import SOURCES, load_sources

    sizes = [f"subset.pixel_edit.{k}={v}" for k, v in (("scenes", 10), ("dev_scenes", 2))]
    config = load_config(["profile=v0_1", "difficulty=hard", "progress=false", "output_dir=/nonexistent", *sizes])
    load_sources()
    plan = next(p for p in config.plans if p.subset == "ROSE-PixelEdit")
    return SubsetDraws.build(plan, config.seed, SOURCES.get(plan.source))


@pytest.mark.parametrize("k", [7, 10])
def test_a_small_edit_in_a_large_cell_is_read_at_full_resolution(hard_pixel_edit, k: int) -> None:
    # Scenes whose edit (a source pixel or two) the working size halves and blurs into the
    # majority's resampling noise: at the working size alone no cut separates them (margin
    # 0.80 and 0.93); with the distance read at full size they are found exactly.
    from rose_eval.runners.cv_grid import work_tiles

    drawn = hard_pixel_edit.draw(k)
    scene, rgb = drawn.scene, drawn.check.base
    gold = np.zeros((scene.rows, scene.cols), dtype=bool)
    for r, c in scene.target_cells:
        gold[r - 1, c - 1] = True
    grid = robust_solver.locate_grid(rgb)
    tiles, work = work_tiles(rgb, grid)
    assert work.cell < grid.cell
    coarse = robust_solver.cell_distances(tiles, work)
    assert coarse[gold].min() <= coarse[~gold].max()
    reading = robust_solver.read_robust(rgb, highlighted=False)
    assert (reading.exceptions == gold).all()
    assert reading.distance[gold].min() > 2.0 * reading.distance[~gold].max()


def _flag_grid(rows: int, cols: int, cell: int, targets: set[tuple[int, int]],
               pushed: tuple[int, int]) -> np.ndarray:
    """Flag-like tiles (a navy field, a red canton; the exceptions' canton sits at the other end)
    jittered by a pixel; the ``pushed`` cell's content is moved into its bottom-right frame band."""
    rng = np.random.default_rng(12)
    image = np.full((rows * cell, cols * cell, 3), 250, dtype=np.uint8)
    w, h = cell - 6, cell - 14
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            dy, dx = (3, 3) if (r, c) == pushed else (int(v) for v in rng.integers(-1, 2, size=2))
            top, left = (r - 1) * cell + (cell - h) // 2 + dy, (c - 1) * cell + (cell - w) // 2 + dx
            image[top:top + h, left:left + w] = (20, 30, 110)
            canton = slice(left + w - 10, left + w) if (r, c) in targets else slice(left, left + 10)
            image[top:top + 8, canton] = (210, 30, 40)
    return image


def test_an_outline_over_a_border_cells_content_does_not_make_it_an_exception(monkeypatch) -> None:
    # Hard EmojiStyle (seed 11, ESTYSCENE_000008): the cue's outline is drawn over the frame band
    # of the rectangle's border cells, and a wide flag jittered into that band loses its edge
    # when the band is painted back. Its pixels within the outline's reach are not compared.
    rows, cols, cell = 6, 8, 36
    targets, pushed, rect = {(2, 3), (4, 8), (5, 1)}, (5, 7), (2, 5, 3, 7)
    image = Image.fromarray(_flag_grid(rows, cols, cell, targets, pushed))
    rgb = np.asarray(outline(image, cell, rect), dtype=np.uint8)
    gold = np.zeros((rows, cols), dtype=bool)
    for r, c in targets:
        gold[r - 1, c - 1] = True
    reading = robust_solver.read_robust(rgb, highlighted=True)
    assert reading.highlight == Span(rows=(2, 5), cols=(3, 7))
    assert (reading.exceptions == gold).all()
    monkeypatch.setattr(robust_solver, "outline_reach", lambda *args: None)
    unmasked = robust_solver.read_robust(rgb, highlighted=True)
    assert unmasked.exceptions[pushed[0] - 1, pushed[1] - 1]  # what the mask prevents


@pytest.mark.parametrize("pool", [2, 3, 5, 12])
def test_the_pooling_floor_never_exceeds_the_score(pool: int) -> None:
    rng = np.random.default_rng(pool)
    for shape in ((7, 40, 40), (5, 41, 38), (3, 143, 143)):
        diff = (rng.random(shape, dtype=np.float32) ** 4 * 100).astype(np.float32)
        diff[0] = 0.0  # a perfect match: both are 0
        diff[1, 10:40, 5:35] = 200.0  # a solid spot wider than any pool: the floor meets the score
        floor = robust_solver.pooled_floor(diff, pool)
        score = robust_solver.difference_score(diff, pool)
        assert (floor <= score).all() and floor[0] == score[0] == 0.0
        assert floor[1] >= 0.99 * score[1]  # a floor that prunes, not a trivial one


def test_the_pruned_search_reads_exactly_what_the_full_search_reads(monkeypatch) -> None:
    # Cells whose pooling floor already reaches their best so far are not pooled: the same
    # placements and distances, bit for bit, with a small share of the cells pooled.
    rows, cols, cell = 6, 8, 36
    targets, rect = {(2, 3), (4, 8), (5, 1)}, (2, 5, 3, 7)
    image = Image.fromarray(_flag_grid(rows, cols, cell, targets, (5, 7)))
    rgb = np.asarray(outline(image, cell, rect), dtype=np.uint8)  # the outline's mask path too
    real = robust_solver.difference_score
    pooled = {"cells": 0}

    def counted(diff: np.ndarray, pool: int, out: np.ndarray | None = None) -> np.ndarray:
        pooled["cells"] += diff.shape[0]
        return real(diff, pool, out)

    monkeypatch.setattr(robust_solver, "difference_score", counted)
    pruned = robust_solver.read_robust(rgb, highlighted=True)
    pruned_cells, pooled["cells"] = pooled["cells"], 0
    monkeypatch.setattr(robust_solver, "pooled_floor",
                        lambda diff, pool: np.full(diff.shape[0], -np.inf, dtype=np.float32))
    full = robust_solver.read_robust(rgb, highlighted=True)
    assert pruned.distance.tobytes() == full.distance.tobytes()
    assert (pruned.exceptions == full.exceptions).all() and pruned.highlight == full.highlight
    assert pruned_cells < 0.3 * pooled["cells"]
