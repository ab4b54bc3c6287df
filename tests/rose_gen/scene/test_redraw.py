"""Scenes whose exceptions are not visible as drawn are redrawn, deterministically and on record."""

from __future__ import annotations

import pytest
from PIL import Image

from rose_gen.scene import redraw
from rose_gen.scene.plan import PlanError, pair_order, plan_scene, plan_subset
from rose_gen.sources.base import AssetPair
from tests.rose_gen.scene.planning_fakes import FakeSource, small_plan


class HalfBlindSource(FakeSource):
    """FakeSource whose listed pairs draw the target exactly like the majority (invisible)."""

    def __init__(self, blind: set[str], **kwargs) -> None:
        super().__init__("ROSE-ChineseGlyph", **kwargs)
        self.blind = blind

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        if pair.pair_key in self.blind:
            role = "majority"
        return super().render_tile(pair, role, cell_size)


def _first_draw_keys(seed: int, plan, pool) -> list[str]:
    order = pair_order(seed, plan.subset, len(pool))
    return [pool[int(order[(k - 1) % len(pool)])].pair_key for k in range(1, plan.n_scenes + 1)]


def test_an_invisible_draw_is_replaced_and_recorded() -> None:
    plan, seed = small_plan(n_scenes=6, n_dev=2), 3
    pool = FakeSource("ROSE-ChineseGlyph").pool({})
    firsts = _first_draw_keys(seed, plan, pool)
    source = HalfBlindSource({firsts[1], firsts[4]})
    scenes = plan_subset(plan, seed, source, pool)
    for k, scene in enumerate(scenes, start=1):
        record = scene.pair.row_fields.get(redraw.ROW_FIELD)
        if k in (2, 5):
            assert scene.pair.pair_key not in source.blind
            assert [r["pair_key"] for r in record] == [firsts[k - 1]] and record[0]["draw"] == 0
            assert "target tile: luminance changed 0.0000" in record[0]["reason"]
        else:
            assert record is None and scene.pair.pair_key == firsts[k - 1]
        assert plan_scene(plan, seed, k, pool, source) == scene
    # Replacements come from pool positions no scene of the subset takes.
    assert len({s.pair.pair_key for s in scenes}) == len(scenes)
    assert plan_subset(plan, seed, source, pool) == scenes


def test_replacement_positions_avoid_the_subsets_own_draws() -> None:
    picks = {redraw.redraw_index(0, "ROSE-ChineseGlyph", k, d, 40, 12) for k in (1, 2) for d in range(1, 9)}
    assert picks and min(picks) >= 12 and max(picks) < 40
    assert redraw.redraw_index(0, "S", 3, 1, 40, 12) == redraw.redraw_index(0, "S", 3, 1, 40, 12)
    assert {redraw.redraw_index(0, "S", 1, d, 5, 12) for d in range(1, 30)} <= set(range(5))


def test_no_visible_draw_stops_planning_with_one_line() -> None:
    plan = small_plan(n_scenes=3, n_dev=1)
    base = FakeSource("ROSE-ChineseGlyph", n_pairs=6)
    source = HalfBlindSource({p.pair_key for p in base.pool({})}, n_pairs=6)
    with pytest.raises(PlanError, match=r"scene 1: no draw of 16 has visible exceptions") as err:
        plan_subset(plan, 0, source)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("preset", ["hard", "extreme"])
def test_no_preset_ships_an_exception_the_audit_calls_invisible(tmp_path, preset: str) -> None:
    from rose_gen.check.audit import audit_release
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    config = load_config([f"output_dir={tmp_path / preset}", "progress=false", *latin_overrides(scenes=3, small=False),
                          "subsets=[glyph,pixel_content]", f"difficulty={preset}"])
    record = audit_release(generate_release(config).path)
    assert record["scenes"] == 6
    for subset in record["subsets"].values():
        assert subset["presets"] == {preset: 3} and subset["exceptions"] > 6
        assert subset["flagged"] == 0, subset["flagged_cells"]
        assert subset["imperceptible"] == 0, subset["imperceptible_cells"]


def test_softened_draws_reuse_the_first_pairs_and_end_without_jitter_or_degradation() -> None:
    from rose_gen.scene.presets import DegradeParams, DifficultyPreset, JitterParams, softened

    first = redraw.MAX_DRAWS - len(redraw.SOFTENING)
    assert [redraw.softening(d, True) for d in range(first)] == [(1.0, d) for d in range(first)]
    assert [redraw.softening(d, True) for d in range(first, redraw.MAX_DRAWS)] == \
        [(t, i) for i, t in enumerate(redraw.SOFTENING)]
    assert all(redraw.softening(d, False) == (1.0, d) for d in range(redraw.MAX_DRAWS))
    preset = DifficultyPreset(name="x", jitter=JitterParams(0.08, 0.85),
                              degrade=DegradeParams(downscale=(0.45, 0.6), jpeg_quality=(35, 55)))
    half = softened(preset, 0.5)
    assert half.jitter == JitterParams(0.04, 0.925) and half.degrade.downscale == (0.725, 0.8)
    assert half.degrade.jpeg_quality == (65, 75)
    none = softened(preset, 0.0)
    assert not none.jitter.enabled and not none.degrade.enabled and softened(preset, 1.0) is preset
