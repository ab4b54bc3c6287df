"""Scenes a careful look could not solve are rejected by the perceptibility rule; findable ones pass.

The cases were found by looking (``README.md``, "Difficulty presets"): v0_1 at ``difficulty=hard``,
10 scenes per subset (2 dev), seed 0. Before the rule, the generator shipped them (the visibility
measure alone passed them); they are regenerated here with the rule off, then with it on.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rose_gen.assets.perceptibility import judge_scene
from rose_gen.assets.visibility import scene_visibility
from rose_gen.release.config import load_config
from rose_gen.render.degrade import scene_placements
from rose_gen.scene.plan import SubsetDraws
from rose_gen.sources import SOURCES, load_sources

SUBSETS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")
# (subset, scene index, exceptions found by eye at full size / exceptions) in the release before the rule
MISSED = [("ROSE-PixelEdit", 8, "0/8"), ("ROSE-EmojiContent", 3, "4/6")]
FOUND = [("ROSE-PixelEdit", 7, "4/4")]


@pytest.fixture(scope="module")
def hard_draws(tmp_path_factory):
    sizes = [f"subset.{s}.{k}={v}" for s in SUBSETS for k, v in (("scenes", 10), ("dev_scenes", 2))]
    config = load_config(["profile=v0_1", "difficulty=hard", "progress=false",
                          f"output_dir={tmp_path_factory.mktemp('hard') / 'r'}", *sizes])
    load_sources()
    cache: dict[str, SubsetDraws] = {}

    def draws(subset: str) -> SubsetDraws:
        if subset not in cache:
            plan = next(p for p in config.plans if p.subset == subset)
            cache[subset] = SubsetDraws.build(plan, config.seed, SOURCES.get(plan.source))
        return cache[subset]

    return draws


def _judged(drawn):
    s = drawn.scene
    return judge_scene(drawn.check.base, s.rows, s.cols, s.cell_size, s.target_cells, scene_placements(s))


@pytest.mark.parametrize(("subset", "k", "found"), MISSED)
def test_a_scene_a_careful_look_could_not_solve_fails_the_rule_and_is_redrawn(hard_draws, subset, k, found) -> None:
    draws = hard_draws(subset)
    old = replace(draws, perceptible=False).draw(k)
    s = old.scene
    seen = scene_visibility(old.check.base, s.rows, s.cols, s.cell_size, s.target_cells,
                            placements=scene_placements(s))
    assert seen.visible  # the old measure alone shipped it
    assert not _judged(old).perceptible
    new = draws.draw(k)
    assert new.scene != s and _judged(new).perceptible
    rejected = new.scene.pair.row_fields["visibility_redraws"]
    assert any("imperceptible" in r["reason"] for r in rejected)


@pytest.mark.parametrize(("subset", "k", "found"), FOUND)
def test_a_scene_whose_exceptions_were_all_found_passes_unchanged(hard_draws, subset, k, found) -> None:
    draws = hard_draws(subset)
    new = draws.draw(k)
    assert _judged(new).perceptible
    assert new.scene == replace(draws, perceptible=False).draw(k).scene
