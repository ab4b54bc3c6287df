"""A tiny in-test visual source for planning tests: placeholder pairs drawn as simple bars.

Planning renders tiles only to check that a scene's exceptions are visible
(:mod:`rose_gen.scene.redraw`); each name draws one black bar at a position of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from PIL import Image

from rose_gen.scene.plan import SubsetPlan
from rose_gen.scene.v0_1_plans import V0_1_PLANS
from rose_gen.sources.base import AssetPair, SourceInfo

_INFO: dict[str, tuple[str, str, int, str]] = {
    "ROSE-ChineseGlyph": ("CH", "CHINESE_GLYPH", 202600000000, "main"),
    "ROSE-EmojiStyle": ("ESTY", "EMOJI_STYLE", 202600000000, "pilot"),
    "ROSE-EmojiContent": ("ECON", "EMOJI_CONTENT", 202600000000, "pilot"),
    "ROSE-PixelEdit": ("PEDIT", "PIXEL_EDIT", 202700000000, "main"),
    "ROSE-PixelContent": ("PCONT", "PIXEL_CONTENT", 202700000000, "main"),
}


def _fields(majority: str, target: str) -> dict[str, Any]:
    return {"background_char": majority, "target_char": target, "pair_key": f"{majority}|{target}"}


class FakeSource:
    """``n_pairs`` placeholder pairs ``a<i>``/``b<i>``; orient flips a coin."""

    def __init__(self, subset: str, n_pairs: int = 40, similarity: float | None = None) -> None:
        prefix, primitive, base, image_split = _INFO[subset]
        family = V0_1_PLANS[subset].layout.family
        self.info = SourceInfo("fake", subset, prefix, primitive, base, family, image_split)
        self.n_pairs = n_pairs
        self.similarity = similarity

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        return [
            AssetPair("fake", f"a{i}", f"b{i}", f"a{i}__b{i}", _fields(f"a{i}", f"b{i}"),
                      similarity=self.similarity)
            for i in range(self.n_pairs)
        ]

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        if rng.random() < 0.5:
            return pair
        return replace(pair, majority=pair.target, target=pair.majority,
                       row_fields=_fields(pair.target, pair.majority))

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        name = pair.majority if role == "majority" else pair.target
        tile = np.full((cell_size, cell_size, 3), 255, dtype=np.uint8)
        slot = sum(name.encode()) % 4
        third = cell_size // 5
        tile[third:4 * third, third * (1 + slot) - third // 2:third * (1 + slot) + third // 2] = 0
        return Image.fromarray(tile)


def small_plan(subset: str = "ROSE-ChineseGlyph", n_scenes: int = 12, n_dev: int = 4,
               **changes: Any) -> SubsetPlan:
    """A v0.1 plan shrunk to ``n_scenes`` scenes (other knobs overridable)."""
    return replace(V0_1_PLANS[subset], source="fake", n_scenes=n_scenes, n_dev=n_dev, **changes)
