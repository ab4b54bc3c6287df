"""Task rows of drawn scenes, once their subset's difficulty labels are ranked.

Under ``difficulty.hard_share`` a task's label depends on every scene of its subset
(:func:`rose_gen.scene.difficulty.rank_difficulty`), so a scene's rows can only be built once
the subset's last scene is drawn. :class:`RankedRows` takes drawn scenes in release order
(from the workers of one run, or from shard records in ``rose-gen merge``), holds the
current subset's specs (~5 KB each) and hands each scene's rows on, in order, as soon as
its labels are known: at once for a subset labelled by threshold, at the subset's end
for a ranked one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rose_gen.core.schema import SceneRows, SceneSpec, base_image_record, cue_image_record
from rose_gen.scene.difficulty import rank_difficulty
from rose_gen.tasks.templates import build_scene_rows

if TYPE_CHECKING:
    from rose_gen.scene.plan import SubsetPlan

RGB = tuple[int, int, int]


def rows_of(scene: SceneSpec, cue_color: RGB | None) -> SceneRows:
    """The rows of a rendered scene whose cue was drawn in ``cue_color``."""
    return build_scene_rows(scene, base_image_record(scene), cue_image_record(scene, cue_color))


def hard_shares(plans: Sequence[SubsetPlan]) -> dict[str, float | None]:
    """Subset name -> its ``difficulty.hard_share`` (None: labels by threshold, no ranking)."""
    return {plan.subset: plan.difficulty.hard_share for plan in plans}


class RankedRows:
    """Builds the rows of drawn scenes given in release order and hands them to ``sink`` in that order.

    Call :meth:`add` for every scene of each subset (a ranked subset must be given whole),
    then :meth:`close`.
    """

    def __init__(self, shares: Mapping[str, float | None], sink: Callable[[int, SceneRows], None]) -> None:
        self.shares, self.sink = shares, sink
        self.subset: str | None = None
        self.held: list[tuple[int, SceneSpec, RGB | None]] = []  # position, scene as drawn, cue colour

    def add(self, position: int, scene: SceneSpec, cue_color: RGB | None) -> None:
        """One drawn scene (difficulty not yet ranked) at release ``position``."""
        if scene.subset != self.subset:
            self.close()
            self.subset = scene.subset
        self.held.append((position, scene, cue_color))
        if self.shares.get(scene.subset) is None:
            self.close()

    def close(self) -> None:
        """Rank the held scenes (their subset is complete) and hand on their rows."""
        if not self.held:
            return
        share = self.shares.get(self.held[0][1].subset)
        scenes: list[SceneSpec | None] = [scene for _, scene, _ in self.held]
        held = [(position, color) for position, _, color in self.held]
        self.held = []
        if share is not None:
            scenes = list(rank_difficulty(scenes, share))  # the unranked specs are freed here
        for i, (position, color) in enumerate(held):
            scene, scenes[i] = scenes[i], None  # each spec is freed once its rows are out
            assert scene is not None
            self.sink(position, rows_of(scene, color))
