"""Difficulty presets: standard changes nothing, each knob changes what it says and only that."""

from __future__ import annotations

import hashlib
import io
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_gen.release.config import ConfigError, load_config
from rose_gen.release.pipeline import generate_release, plan_release, process_scene
from rose_gen.render.compose import CUE_TEMPLATE, cell_box, render_scene
from rose_gen.render.degrade import degrade_image, jitter_draws
from rose_gen.scene.difficulty import similarity_cut
from rose_gen.scene.plan import _plan_scene, plan_subset, rank_difficulty
from rose_gen.scene.presets import (
    ROW_FIELD,
    DegradeParams,
    DifficultyPreset,
    JitterParams,
    PresetPool,
    band_pool,
    companion,
)
from rose_gen.scene.split import assign_splits
from rose_gen.sources import SOURCES
from rose_gen.sources.base import AssetPair
from tests.fixtures.latin_source import LATIN_SOURCES, latin_overrides

GLYPH = "ROSE-ChineseGlyph"


def _config(out: Path, *extra: str, scenes: int = 3):
    return load_config([f"output_dir={out}", "progress=false", *latin_overrides(scenes=scenes), *extra])


def _decode(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def _cells(image: np.ndarray, rows: int, cols: int, cell: int) -> np.ndarray:
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def _metadata_sha(root: Path) -> str:
    digest = hashlib.sha256()
    for rel in ("metadata_dev.jsonl", "metadata_test.jsonl"):
        digest.update((root / rel).read_bytes())
    for path in sorted((root / "images").rglob("*.png")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


# -- standard is the preset-free generator ---------------------------------------------------


def test_standard_plans_equal_the_preset_free_code_path(tmp_path) -> None:
    config = _config(tmp_path / "x", scenes=4)
    for plan in config.plans:
        assert plan.preset == DifficultyPreset() and plan.preset.changes_nothing
        source = SOURCES.get(plan.source)
        pool = source.pool(plan.source_options)
        cut = similarity_cut([p.similarity for p in pool], plan.difficulty)
        splits = assign_splits(config.seed, plan.subset, plan.n_scenes, plan.n_dev)
        bare = [_plan_scene(plan, config.seed, k, pool, source, splits[k - 1], cut)
                for k in range(1, plan.n_scenes + 1)]
        if plan.difficulty.hard_share is not None:  # the ranking pass is the preset-free path's too
            bare = rank_difficulty(bare, plan.difficulty.hard_share)
        scenes = plan_subset(plan, config.seed, source)
        assert scenes == bare
        assert all(not s.extra and ROW_FIELD not in s.pair.row_fields for s in scenes)
        for scene in scenes[:2]:  # the pipeline renders standard scenes with the plain renderer
            plain = render_scene(scene, source, config.render)
            got = process_scene(scene, config.render)
            assert sorted(got.images.values()) == sorted([plain.base_png, plain.cue_png])


def test_explicit_standard_release_is_byte_identical_to_the_default(tmp_path) -> None:
    default = generate_release(_config(tmp_path / "default")).path
    explicit = generate_release(_config(tmp_path / "explicit", "difficulty=standard")).path
    assert _metadata_sha(default) == _metadata_sha(explicit)
    assert ROW_FIELD not in (default / "metadata_test.jsonl").read_text(encoding="utf-8")


# -- each knob -------------------------------------------------------------------------------


def _plans(tmp_path: Path, preset: DifficultyPreset, scenes: int = 6):
    config = _config(tmp_path / "p", scenes=scenes)
    return config, tuple(replace(p, preset=preset) for p in config.plans)


def _scenes(config, plans):
    out = []
    for plan in plans:
        out += plan_subset(plan, config.seed, SOURCES.get(plan.source))
    return out


def test_layout_knobs_raise_exception_counts_and_shrink_cells_only(tmp_path) -> None:
    preset = DifficultyPreset(name="t", extra_exceptions=2, cell_scale=0.75)
    config, plans = _plans(tmp_path, preset)
    standard = _scenes(config, config.plans)
    harder = _scenes(config, plans)
    for s, h in zip(standard, harder, strict=True):
        assert (h.rows, h.cols, h.grid_size_profile, h.pair.pair_key) == (s.rows, s.cols, s.grid_size_profile,
                                                                           s.pair.pair_key)
        assert len(h.target_cells) == len(s.target_cells) + 2
        assert 12 <= h.cell_size <= round(22 * 0.75)  # latin_overrides cells are 16..22
        record = h.pair.row_fields[ROW_FIELD]
        assert record["extra_exceptions"] == 2 and record["cell_scale"] == 0.75
        assert record["jitter"]["max_offset"] == 0 and record["degrade"] == {"downscale": 1.0, "jpeg_quality": 0}
        assert "jitter" not in h.extra["preset"] and "degrade" not in h.extra["preset"]


def test_similarity_band_keeps_the_quantile_band_and_tiers_stay_pool_relative() -> None:
    pool = [AssetPair("s", f"a{i}", f"b{i}", f"k{i}", similarity=float(s))
            for i, s in enumerate([0.9, 0.1, 0.5, 0.7, 0.3])]
    top, applied = band_pool(pool, DifficultyPreset(similarity_band=(0.5, 1.0)))
    assert applied and [p.pair_key for p in top] == ["k0", "k2", "k3"]
    low, _ = band_pool(pool, DifficultyPreset(similarity_band=(0.0, 0.25)))
    assert [p.pair_key for p in low] == ["k1", "k4"]
    unscored = [replace(p, similarity=None) for p in pool]
    assert band_pool(unscored, DifficultyPreset(similarity_band=(0.5, 1.0))) == (unscored, False)


def test_banded_plan_draws_only_band_pairs(tmp_path) -> None:
    from tests.rose_gen.scene.planning_fakes import FakeSource, small_plan

    source = FakeSource(GLYPH, n_pairs=40)
    pool = [replace(p, similarity=i / 39) for i, p in enumerate(source.pool({}))]
    plan = replace(small_plan(GLYPH, n_scenes=12, n_dev=2), preset=DifficultyPreset(similarity_band=(0.75, 1.0)))
    scenes = plan_subset(plan, 3, source, pool)
    assert {s.pair.similarity >= 0.75 - 1e-9 for s in scenes} == {True}
    # tiers: the top 20% of the *whole* pool is high, so some band pairs are low
    tiers = {s.difficulty_inputs["T1_COUNT_GLOBAL"]["similarity_tier"] for s in scenes}
    assert tiers <= {"high", "low"}
    assert {s.pair.row_fields[ROW_FIELD]["band_pairs"] for s in scenes} == {10}


def test_second_identity_comes_from_a_pool_entry_sharing_the_majority(tmp_path) -> None:
    source = SOURCES.get(LATIN_SOURCES[GLYPH])
    pool = source.pool({})
    ppool = PresetPool.build(pool, DifficultyPreset(second_identity_share=1.0))
    pair = next(p for p in pool if {p.majority, p.target} == {"O", "0"})
    pair = replace(pair, majority="O", target="0")
    second = companion(pair, ppool, source, 40, np.random.default_rng(0))
    assert second is not None and second.majority == "O" and second.target == "Q"
    lonely = next(p for p in pool if {p.majority, p.target} == {"rn", "m"})
    assert companion(replace(lonely, majority="rn", target="m"), ppool, source, 40, np.random.default_rng(0)) is None


def test_second_identity_cells_show_the_second_target(tmp_path) -> None:
    preset = DifficultyPreset(name="t", second_identity_share=1.0)
    config, plans = _plans(tmp_path, preset, scenes=24)
    glyph = next(p for p in plans if p.subset == GLYPH)
    glyph = replace(glyph, layout=replace(glyph.layout, exception_weights=(0, 1, 1)))
    source = SOURCES.get(glyph.source)
    scenes = plan_subset(glyph, config.seed, source)
    used = [s for s in scenes if s.pair.row_fields[ROW_FIELD]["second_identity"] == "used"]
    states = {s.pair.row_fields[ROW_FIELD]["second_identity"] for s in scenes}
    assert used and states <= {"used", "unavailable"}  # 24 latin pairs: only some share a side
    for scene in used[:3]:
        record = scene.pair.row_fields[ROW_FIELD]
        second_cells = {tuple(c) for c in record["second_target_cells"]}
        assert second_cells and second_cells < set(scene.target_cells)
        image = _decode(process_scene(scene, config.render).images[f"images/{GLYPH}/{scene.base_image_id}.png"])
        cells = _cells(image, scene.rows, scene.cols, scene.cell_size)
        tgt = np.asarray(source.render_tile(scene.pair, "target", scene.cell_size))
        for r, c in scene.target_cells:
            same_as_first = np.array_equal(cells[r - 1, c - 1], tgt)
            assert same_as_first == ((r, c) not in second_cells)


def test_jitter_makes_majority_cells_differ_and_keeps_everything_else(tmp_path) -> None:
    preset = DifficultyPreset(name="t", jitter=JitterParams(max_offset=0.1, min_scale=0.85))
    config, plans = _plans(tmp_path, preset)
    standard, jittered = _scenes(config, config.plans), _scenes(config, plans)
    kept = 0
    for s, j in zip(standard, jittered, strict=True):
        record = j.pair.row_fields[ROW_FIELD]
        if "softened" in record:  # no pair perceptible at full jitter: redrawn softer, on record (redraw.SOFTENING)
            assert record["softened"] < 1 and "visibility_redraws" in j.pair.row_fields
            continue
        kept += 1
        assert replace(j, pair=s.pair, extra={}) == s  # only the record and the render instructions differ
        assert j.extra["preset"]["jitter"]["seed"] == record["jitter"]["seed"]
    assert kept >= 0.8 * len(jittered)
    scene = next(j for j in jittered if j.rows * j.cols >= 49 and "jitter" in j.extra["preset"])
    image = _decode(process_scene(scene, config.render).images[f"images/{scene.subset}/{scene.base_image_id}.png"])
    cells = _cells(image, scene.rows, scene.cols, scene.cell_size)
    majority = [cells[r, c] for r in range(scene.rows) for c in range(scene.cols)
                if (r + 1, c + 1) not in scene.target_cells]
    distinct = {m.tobytes() for m in majority}
    assert len(distinct) > len(majority) // 3  # copies are no longer pixel-identical


def test_jitter_draws_are_seeded_and_bounded() -> None:
    a = jitter_draws(7, 100, 40, 0.1, 0.8)
    assert all(np.array_equal(x, y) for x, y in zip(a, jitter_draws(7, 100, 40, 0.1, 0.8), strict=True))
    size, dx, dy = a
    assert size.min() >= 32 and size.max() <= 40 and np.abs(dx).max() <= 4 and np.abs(dy).max() <= 4
    assert not np.array_equal(size, jitter_draws(8, 100, 40, 0.1, 0.8)[0])


def test_degradation_changes_pixels_keeps_size_and_the_cue_stays_exact(tmp_path) -> None:
    preset = DifficultyPreset(name="t", degrade=DegradeParams(downscale=(0.5, 0.6), jpeg_quality=(40, 50)))
    config, plans = _plans(tmp_path, preset)
    standard, degraded = _scenes(config, config.plans), _scenes(config, plans)
    for s, d in list(zip(standard, degraded, strict=True))[::5]:
        record = d.pair.row_fields[ROW_FIELD]["degrade"]
        assert 0.5 <= record["downscale"] <= 0.6 and 40 <= record["jpeg_quality"] <= 50
        plain, rough = process_scene(s, config.render), process_scene(d, config.render)
        base_rel = f"images/{d.subset}/{d.base_image_id}.png"
        cue_rel = f"images/{d.subset}/{d.cue_image_id}.png"
        a, b = _decode(plain.images[base_rel]), _decode(rough.images[base_rel])
        assert a.shape == b.shape and not np.array_equal(a, b)
        cue = _decode(rough.images[cue_rel])
        p = d.regions[CUE_TEMPLATE].params
        box = cell_box(p["r1"], p["r2"], p["c1"], p["c2"], d.cell_size)
        ys, xs = np.nonzero(np.any(b != cue, axis=2))
        assert (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) == (box.top, box.bottom, box.left, box.right)
        assert plain.rows == rough.rows or [r["answer"] for r in plain.rows.main] == [
            r["answer"] for r in rough.rows.main]


def test_degrade_image_is_deterministic() -> None:
    image = np.random.default_rng(0).integers(0, 256, (40, 60, 3), dtype=np.uint8)
    out = degrade_image(image, 0.5, 40)
    assert out.shape == image.shape and np.array_equal(out, degrade_image(image, 0.5, 40))
    assert np.array_equal(degrade_image(image, 1.0, 0), image)


# -- config and whole releases ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["easy", "hard", "extreme"])
def test_presets_compose_and_record_their_name(tmp_path, name: str) -> None:
    # extreme shrinks the test's small cells to 12 px, where no Latin pair survives its JPEG:
    # it gets the v0.1 cell range, so its scenes have visible exceptions to draw.
    cells = ["subset.glyph.layout.cell_size=[42,64]"] if name == "extreme" else []
    config = _config(tmp_path / "c", f"difficulty={name}", *cells, "subsets=[glyph]")
    assert {p.preset.name for p in config.plans} == {name}
    assert config.recorded["difficulty"]["name"] == name
    scenes = plan_release(config)
    assert {s.pair.row_fields[ROW_FIELD]["name"] for s in scenes} == {name}


def test_bad_preset_knob_is_one_line(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"difficulty.preset \(standard\).cell_scale must be in") as err:
        _config(tmp_path / "c", "difficulty.preset.cell_scale=0")
    assert "\n" not in str(err.value)


def test_hard_release_is_deterministic_and_rows_record_the_preset(tmp_path) -> None:
    one = generate_release(_config(tmp_path / "a", "difficulty=hard", scenes=2)).path
    two = generate_release(_config(tmp_path / "b", "difficulty=hard", scenes=2)).path
    assert _metadata_sha(one) == _metadata_sha(two)
    assert '"difficulty_preset":{"name":"hard"' in (one / "metadata_test.jsonl").read_text(encoding="utf-8")
