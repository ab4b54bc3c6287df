"""v0.1's subsets as plans: the observed region-kind and case mixes, the calibrated hard_from,
scene counts and layout families per subset (spec facts sections 2-3), and the mini plans.
"""

from __future__ import annotations

from dataclasses import replace

from rose_eval import vocab
from rose_gen.scene.difficulty import DifficultyParams
from rose_gen.scene.layout import (
    V0_1_EXCEPTION_COUNTS,
    V0_1_PROFILE_MIX,
    LayoutParams,
)
from rose_gen.scene.plan import SubsetPlan

# v0.1 T3 observations (facts section 3) per subset, used as default weights.
V0_1_REGION_TYPE_MIX: dict[str, dict[str, float]] = {
    "ROSE-ChineseGlyph": {"ROW_RANGE": 101, "COL_RANGE": 79, "RECTANGLE": 121},
    "ROSE-EmojiStyle": {"ROW_RANGE": 75, "COL_RANGE": 65, "RECTANGLE": 81},
    "ROSE-EmojiContent": {"ROW_RANGE": 82, "COL_RANGE": 68, "RECTANGLE": 71},
    "ROSE-PixelEdit": {"ROW_RANGE": 57, "COL_RANGE": 61, "RECTANGLE": 103},
    "ROSE-PixelContent": {"ROW_RANGE": 55, "COL_RANGE": 32, "RECTANGLE": 61},
}


# Wanted case = the case got, or the ``wanted`` part of a fallback label.
V0_1_WANTED_CASE_MIX: dict[str, dict[str, float]] = {
    "ROSE-ChineseGlyph": {"zero": 38, "partial": 188, "all": 75},
    "ROSE-EmojiStyle": {"zero": 37, "partial": 121, "all": 63},
    "ROSE-EmojiContent": {"zero": 40, "partial": 125, "all": 56},
    "ROSE-PixelEdit": {"zero": 30, "partial": 169, "all": 22},
    "ROSE-PixelContent": {"zero": 14, "partial": 112, "all": 22},
}


# hard_from per subset, calibrated on the v0_1 plan (see difficulty.py).
V0_1_HARD_FROM: dict[str, int] = {
    "ROSE-ChineseGlyph": 8,
    "ROSE-EmojiStyle": 7,
    "ROSE-EmojiContent": 5,
    "ROSE-PixelEdit": 3,
    "ROSE-PixelContent": 7,
}
# v0.1's share of hard T3 rows per subset (facts section 3); the v0_1 plans rank by it.
V0_1_HARD_SHARE: dict[str, float] = {
    "ROSE-ChineseGlyph": 0.17,
    "ROSE-EmojiStyle": 0.23,
    "ROSE-EmojiContent": 0.52,
    "ROSE-PixelEdit": 0.77,
    "ROSE-PixelContent": 0.27,
}


_V0_1_SHAPE: dict[str, tuple[str, str, int, int, float | None]] = {
    # subset: (source, layout family, scenes, dev scenes, font scale)
    "ROSE-ChineseGlyph": ("glyph", "glyph_emoji", 412, 111, 0.72),
    "ROSE-EmojiStyle": ("emoji_style", "glyph_emoji", 300, 79, None),
    "ROSE-EmojiContent": ("emoji_content", "glyph_emoji", 300, 79, None),
    "ROSE-PixelEdit": ("pixel_edit", "pixel_edit", 300, 79, None),
    "ROSE-PixelContent": ("pixel_content", "pixel_content", 200, 52, None),
}


def _v0_1_plan(subset: str) -> SubsetPlan:
    source, family, n, n_dev, font_scale = _V0_1_SHAPE[subset]
    return SubsetPlan(
        subset=subset,
        source=source,
        n_scenes=n,
        n_dev=n_dev,
        layout=LayoutParams(
            family=family,
            profile_weights=dict(V0_1_PROFILE_MIX[subset]),
            exception_weights=V0_1_EXCEPTION_COUNTS[subset],
        ),
        region_type_weights=dict(V0_1_REGION_TYPE_MIX[subset]),
        case_weights=dict(V0_1_WANTED_CASE_MIX[subset]),
        difficulty=DifficultyParams(hard_from=V0_1_HARD_FROM[subset], hard_share=V0_1_HARD_SHARE[subset]),
        font_scale=font_scale,
    )


V0_1_PLANS: dict[str, SubsetPlan] = {s: _v0_1_plan(s) for s in vocab.SUBSET_ORDER}


MINI_SCENES, MINI_DEV = 6, 2


MINI_PLANS: dict[str, SubsetPlan] = {
    s: replace(p, n_scenes=MINI_SCENES, n_dev=MINI_DEV) for s, p in V0_1_PLANS.items()
}
