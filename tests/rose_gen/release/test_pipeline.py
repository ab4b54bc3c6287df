"""plan -> render -> rows -> export: worker-count independence, scenes alone, cue placement."""

from __future__ import annotations

import gc
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rose_gen.core.schema import SceneSpec
from rose_gen.release.config import load_config
from rose_gen.release.folder import release_files
from rose_gen.release.pipeline import (
    SceneJob,
    generate_release,
    plan_release,
    process_scene,
    release_jobs,
    render_release,
    scene_rows,
    scene_runner,
    windowed,
)
from rose_gen.release.ranked_rows import RankedRows, hard_shares
from rose_gen.render.compose import CUE_TEMPLATE, cell_box
from rose_gen.scene.plan import plan_scene
from rose_gen.sources import SOURCES
from tests.fixtures.latin_source import latin_overrides
from tests.fresh_process import run_fresh


def _config(out: Path, *extra: str):
    return load_config([f"output_dir={out}", "progress=false", *latin_overrides(), *extra])


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in release_files(root)} | {
        "export_summary.json": (root / "export_summary.json").read_bytes()}


def test_workers_1_and_2_give_byte_identical_releases(tmp_path) -> None:
    one = generate_release(_config(tmp_path / "w1", "workers=1")).path
    two = generate_release(_config(tmp_path / "w2", "workers=2")).path
    assert _tree(one) == _tree(two)
    assert len(_tree(one)) > 30


def test_workers_draw_and_render_scenes_in_order_as_planned_alone(tmp_path) -> None:
    config = _config(tmp_path / "r", "workers=2")
    planned = {(s.subset, s.scene_index): s for s in plan_release(config)}
    jobs = [SceneJob(subset, k) for subset in (0, 1) for k in (1, 2, 3)] + [SceneJob(2, 3)]
    with scene_runner(config, n_jobs=len(jobs)) as run:
        got = list(run(iter(jobs)))
    assert [(r.scene.subset, r.scene.scene_index) for r in got] == [
        (config.plans[j.subset].subset, j.k) for j in jobs]
    for result in got:
        alone = planned[(result.scene.subset, result.scene.scene_index)]
        # the same draw as planning alone (labels are ranked later, in the main process) ...
        assert result.scene.pair == alone.pair and result.scene.target_cells == alone.target_cells
        assert result.scene.difficulty_inputs.keys() == alone.difficulty_inputs.keys()
        # ... and the same pixels as rendering the planned scene alone
        assert result.images == process_scene(alone, config.render).images


def test_a_release_draws_each_tile_once(tmp_path, monkeypatch) -> None:
    """The renderer reuses the tiles the visibility check drew: rendering adds no tile draw."""
    from tests.fixtures import latin_source

    calls: list[int] = []
    real = latin_source.LatinSource.render_tile

    def counted(self, pair, role, cell_size):
        calls.append(cell_size)
        return real(self, pair, role, cell_size)

    monkeypatch.setattr(latin_source.LatinSource, "render_tile", counted)
    config = _config(tmp_path / "x", "workers=1")
    plan_release(config)  # drawing alone: plan and check every scene
    drawn = len(calls)
    calls.clear()
    generate_release(config)
    assert drawn > 0 and len(calls) == drawn
def test_windowed_reads_the_stream_only_as_results_are_taken() -> None:
    read: list[int] = []
    submitted: list[int] = []

    def stream():
        for k in range(20):
            read.append(k)
            yield k

    def submit(k):
        submitted.append(k)
        return lambda: k * 10

    results = windowed(submit, stream(), 3)
    assert next(results) == 0 and read == submitted == [0, 1, 2]  # the window, no more
    assert next(results) == 10 and read == [0, 1, 2, 3]
    assert list(results) == [k * 10 for k in range(2, 20)]


def test_same_seed_same_bytes_other_seed_other_scenes(tmp_path) -> None:
    a = plan_release(_config(tmp_path / "a"))
    b = plan_release(_config(tmp_path / "b"))
    c = plan_release(_config(tmp_path / "c", "seed=1"))
    assert [s.to_json() for s in a] == [s.to_json() for s in b]
    assert [s.to_json() for s in a] != [s.to_json() for s in c]
    settings = _config(tmp_path / "a").render
    assert process_scene(a[0], settings) == process_scene(b[0], settings)


def test_any_scene_regenerates_alone(tmp_path) -> None:
    config = _config(tmp_path / "x")
    scenes = plan_release(config)
    plan = next(p for p in config.plans if p.subset == "ROSE-PixelEdit")
    source = SOURCES.get(plan.source)
    alone = plan_scene(plan, config.seed, 3, source.pool(plan.source_options), source)
    in_release = next(s for s in scenes if s.subset == plan.subset and s.scene_index == 3)
    assert alone == in_release
    assert scene_rows(alone) == scene_rows(in_release)
    assert process_scene(alone, config.render) == process_scene(in_release, config.render)


@pytest.mark.parametrize("cue_type", ["OUTLINE_BOX", "MASK"])
def test_cue_image_differs_from_base_exactly_on_the_t4_rectangle(tmp_path, cue_type: str) -> None:
    config = _config(tmp_path / "x", f"render.cue_type={cue_type}")
    for scene in plan_release(config):
        result = process_scene(scene, config.render)
        base_path, cue_path = sorted(result.images)
        base = np.asarray(Image.open(io.BytesIO(result.images[base_path])).convert("RGB"))
        cue = np.asarray(Image.open(io.BytesIO(result.images[cue_path])).convert("RGB"))
        assert base.shape == cue.shape == (scene.height, scene.width, 3)
        p = scene.regions[CUE_TEMPLATE].params
        box = cell_box(p["r1"], p["r2"], p["c1"], p["c2"], scene.cell_size)
        ys, xs = np.nonzero(np.any(base != cue, axis=2))
        assert (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) == (box.top, box.bottom, box.left, box.right)
        t4 = next(r for r in result.rows.main if r["task_template"] == CUE_TEMPLATE)
        assert t4["image"] == cue_path and t4["cue_type"] == cue_type == t4["image_cue_type"]
        assert t4["image_region_params"] == t4["region_params"]


def _live_scene_specs() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, SceneSpec))


def render_counting_live_specs(out: str, workers: int, scenes: int) -> dict:
    """Render a release into ``out``, counting live SceneSpecs (beyond those before) at each row
    hand-off. Run by :func:`tests.fresh_process.run_fresh`, so the heap walked is this one's."""
    config = load_config([f"output_dir={out}", "progress=false", f"workers={workers}",
                          *latin_overrides(scenes=scenes, dev=3)])
    before = _live_scene_specs()
    live: list[int] = []
    images: list[int] = []

    def rows(position: int, _) -> None:
        live.append(_live_scene_specs() - before)

    ranked = RankedRows(hard_shares(config.plans), rows)

    def store(position: int, result) -> None:
        images.append(position)
        ranked.add(position, result.scene, result.cue_color)

    render_release(config, store)
    ranked.close()
    return {"live": live, "images": images}


@pytest.mark.parametrize("workers", [1, 2])
def test_release_holds_at_most_one_subset_of_scene_plans(tmp_path, workers: int) -> None:
    scenes = 12
    config = load_config([f"output_dir={tmp_path / 'x'}", "progress=false", f"workers={workers}",
                          *latin_overrides(scenes=scenes, dev=3)])
    total = sum(p.n_scenes for p in config.plans)
    assert len(config.plans) == 5 and total == 5 * scenes
    assert all(p.difficulty.hard_share is not None for p in config.plans)  # rows wait for the ranking
    # in a fresh interpreter: a walk of this session's heap per row costs ~6x more
    counted = run_fresh(f"{__name__}:render_counting_live_specs", str(tmp_path / "x"), workers, scenes)
    live, images = counted["live"], counted["images"]
    assert len(live) == total and images == list(range(total))
    # the subset whose rows wait for its ranking, plus the few scenes in flight; the first
    # pipeline planned all 60 before rendering
    assert max(live) <= scenes + 4 * workers + 2
    assert max(live) >= scenes  # the walk does see the held subset (a blind count would pass above)


def test_shard_jobs_are_the_shards_scenes_only(tmp_path) -> None:
    config = _config(tmp_path / "x")
    total = sum(p.n_scenes for p in config.plans)
    owns = {p for p in range(total) if p % 3 == 1}
    jobs = list(release_jobs(config.plans, owns.__contains__))
    assert [pos for pos, _ in jobs] == sorted(owns)
    starts = np.cumsum([0] + [p.n_scenes for p in config.plans])
    assert all(starts[job.subset] + job.k - 1 == pos for pos, job in jobs)
