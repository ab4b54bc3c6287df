"""Scene planning: a subset's knobs + a source's pair pool -> SceneSpecs (pure, no pixels).

Randomness: the pair order comes from ``subset_rng(seed, subset, "pairs")`` and the
split from ``subset_rng(seed, subset, "split")``; everything else a scene draws comes
from ``scene_rng(seed, subset, k, purpose)`` with one purpose per stage (``layout``,
``orient``, ``regions``), so any scene can be planned alone and a change in one stage's
draws never shifts another's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rose_eval import vocab
from rose_gen.core.rng import scene_rng, subset_rng
from rose_gen.core.schema import DATASET_VERSION, REGION_TEMPLATES, AssetPair, RegionSpec, SceneSpec
from rose_gen.scene import redraw
from rose_gen.scene.balance import BalanceError, BalanceSpec, balanced_scene, validate_balance
from rose_gen.scene.difficulty import (  # rank_difficulty: re-exported (callers import it from here)
    DifficultyParams,
    rank_difficulty,
    rate,
    similarity_cut,
    similarity_tier,
)
from rose_gen.scene.layout import (
    LayoutParams,
    sample_layout,
)
from rose_gen.scene.presets import (
    DifficultyPreset,
    PresetError,
    PresetPool,
    apply_preset,
    preset_layout,
    validate_preset,
)
from rose_gen.scene.regions import CASES, RegionError, RegionSizes, sample_region
from rose_gen.scene.split import assign_splits
from rose_gen.sources.base import VisualSource

NUMERIC_REGION_TYPES: tuple[str, ...] = ("ROW_RANGE", "COL_RANGE", "RECTANGLE")


CUE_TYPES: tuple[str, ...] = ("OUTLINE_BOX", "MASK")


# Templates whose region kind is fixed (T5 excludes a box of the drawn numeric kind);
# T2 and T3 use the drawn numeric kind itself.
_FIXED_REGION_KIND: dict[str, str] = {
    "T4_CLICK_VISUAL_REGION": "VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION": "EXCLUSION",
}


class PlanError(ValueError):
    """A plan cannot be carried out (impossible sizes, counts or weights); one-line message."""


@dataclass(frozen=True)
class SubsetPlan:
    """Every knob for one subset.

    ``region_type_weights`` is the mix of numeric region kinds for T2, T3 and T5's
    excluded box; ``case_weights`` the wanted-case mix for T2..T5 (T4 is always a
    VISUAL_REGION rectangle). ``font_scale`` sets ``font_size = int(cell_size *
    font_scale)`` (glyph subsets), ``None`` for no font. ``source_options`` is handed to
    the source's ``pool()``. ``preset`` is the difficulty preset (:mod:`rose_gen.scene.presets`;
    the default, ``standard``, changes nothing). ``balance`` draws answers uniformly
    (:mod:`rose_gen.scene.balance`; None: v0.1's mixes, and not recorded).
    """

    subset: str
    source: str
    n_scenes: int
    n_dev: int
    layout: LayoutParams = field(default_factory=LayoutParams)
    region_type_weights: Mapping[str, float] = field(
        default_factory=lambda: {"ROW_RANGE": 1.0, "COL_RANGE": 1.0, "RECTANGLE": 1.0}
    )
    case_weights: Mapping[str, float] = field(
        default_factory=lambda: {"zero": 159.0, "partial": 715.0, "all": 238.0}
    )
    region_sizes: RegionSizes = field(default_factory=RegionSizes)
    cue_type: str = "OUTLINE_BOX"
    difficulty: DifficultyParams = field(default_factory=DifficultyParams)
    font_scale: float | None = None
    source_options: Mapping[str, Any] = field(default_factory=dict)
    dataset_version: str = DATASET_VERSION
    preset: DifficultyPreset = field(default_factory=DifficultyPreset)
    balance: BalanceSpec | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "subset": self.subset,
            "source": self.source,
            "n_scenes": self.n_scenes,
            "n_dev": self.n_dev,
            "layout": self.layout.to_json(),
            "region_type_weights": dict(self.region_type_weights),
            "case_weights": dict(self.case_weights),
            "region_sizes": self.region_sizes.to_json(),
            "cue_type": self.cue_type,
            "difficulty": self.difficulty.to_json(),
            "font_scale": self.font_scale,
            "source_options": dict(self.source_options),
            "dataset_version": self.dataset_version,
            "preset": self.preset.to_json(),
            **({"balance": self.balance.to_json()} if self.balance is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubsetPlan:
        """Inverse of :meth:`to_json` (every key required, so nothing is silently defaulted)."""
        return cls(
            subset=data["subset"],
            source=data["source"],
            n_scenes=int(data["n_scenes"]),
            n_dev=int(data["n_dev"]),
            layout=LayoutParams.from_json(data["layout"]),
            region_type_weights={str(k): float(v) for k, v in data["region_type_weights"].items()},
            case_weights={str(k): float(v) for k, v in data["case_weights"].items()},
            region_sizes=RegionSizes.from_json(data["region_sizes"]),
            cue_type=data["cue_type"],
            difficulty=DifficultyParams.from_json(data["difficulty"]),
            font_scale=None if data["font_scale"] is None else float(data["font_scale"]),
            source_options=dict(data["source_options"]),
            dataset_version=data["dataset_version"],
            preset=DifficultyPreset.from_json(data["preset"]) if "preset" in data else DifficultyPreset(),
            balance=BalanceSpec.from_json(data["balance"]) if data.get("balance") else None,
        )


def _weights(mapping: Mapping[str, float], allowed: Sequence[str], what: str, subset: str):
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        raise PlanError(f"{subset}: unknown {what} {unknown}; allowed: {', '.join(allowed)}")
    values = np.array([float(mapping.get(name, 0.0)) for name in allowed])
    if (values < 0).any() or values.sum() <= 0:
        raise PlanError(f"{subset}: {what} weights must be non-negative with a positive sum")
    return values / values.sum()


def validate_plan(plan: SubsetPlan) -> None:
    """Raise :class:`PlanError` (one line) when ``plan`` cannot be carried out.

    The layout is checked as the difficulty preset changes it (more exceptions, smaller cells).
    """
    s = plan.subset
    try:
        validate_preset(plan.preset)
    except PresetError as err:
        raise PlanError(f"{s}: {err}") from None
    plan = replace(plan, layout=preset_layout(plan.layout, plan.preset))
    if plan.n_scenes < 1:
        raise PlanError(f"{s}: n_scenes must be at least 1 (got {plan.n_scenes})")
    if not 0 <= plan.n_dev <= plan.n_scenes:
        raise PlanError(f"{s}: n_dev={plan.n_dev} must be between 0 and n_scenes={plan.n_scenes}")
    if plan.cue_type not in CUE_TYPES:
        raise PlanError(f"{s}: cue_type {plan.cue_type!r} must be one of {', '.join(CUE_TYPES)}")
    try:
        family = plan.layout.layout_family()
    except KeyError as err:
        raise PlanError(f"{s}: {err}") from None
    names = [p.name for p in family.profiles]
    probs = _weights(plan.layout.profile_weights, names, "grid-size profile", s)
    used = [p for p, w in zip(family.profiles, probs, strict=True) if w > 0]
    lo, hi = plan.layout.cell_range()
    if not 0 < lo <= hi:
        raise PlanError(f"{s}: cell_size range {lo}..{hi} must be positive and ordered")
    ex = np.asarray(plan.layout.exception_weights, dtype=float)
    if ex.size == 0 or (ex < 0).any() or ex.sum() <= 0:
        raise PlanError(f"{s}: exception weights must be non-negative with a positive sum")
    max_ex = int(np.flatnonzero(ex > 0)[-1]) + 1
    min_rows = min(p.rows[0] for p in used)
    min_cols = min(p.cols[0] for p in used)
    if 2 * max_ex >= min_rows * min_cols:
        raise PlanError(
            f"{s}: up to {max_ex} exceptions leave no majority on the smallest"
            f" {min_rows}x{min_cols} grid; lower the exception counts or raise the grid size"
        )
    _weights(plan.region_type_weights, NUMERIC_REGION_TYPES, "region type", s)
    _weights(plan.case_weights, CASES, "region case", s)
    if plan.balance is not None:
        if not plan.preset.changes_nothing:
            raise PlanError(f"{s}: balance draws the answers of the standard difficulty; the "
                            f"{plan.preset.name!r} preset would change them (use difficulty=standard)")
        try:
            validate_balance(plan.balance, min_rows * min_cols)
        except BalanceError as err:
            raise PlanError(f"{s}: {err}") from None
    z = plan.region_sizes
    if z.attempts < 1:
        raise PlanError(f"{s}: region attempts must be at least 1")
    if not 1 <= z.rect_min <= z.rect_max:
        raise PlanError(f"{s}: rectangle sizes {z.rect_min}..{z.rect_max} must satisfy 1 <= min <= max")
    if z.rect_max > min(min_rows, min_cols):
        raise PlanError(
            f"{s}: rectangles up to {z.rect_max} cells are larger than the smallest"
            f" {min_rows}x{min_cols} grid; lower rect_max"
        )
    if not 1 <= z.line_min <= z.line_max:
        raise PlanError(f"{s}: row/column range sizes {z.line_min}..{z.line_max} must satisfy 1 <= min <= max")
    if z.line_min > min(min_rows, min_cols) // 2:
        raise PlanError(
            f"{s}: ranges of {z.line_min} lines exceed half of the smallest"
            f" {min_rows}x{min_cols} grid; lower line_min"
        )
    if plan.font_scale is not None and not 0 < plan.font_scale <= 1:
        raise PlanError(f"{s}: font_scale must be in (0, 1] (got {plan.font_scale})")


def pair_order(seed: int, subset: str, pool_size: int) -> np.ndarray:
    """The subset's deterministic permutation of pool indices (scene k uses entry (k-1) mod n)."""
    return subset_rng(seed, subset, "pairs").permutation(pool_size)


def _pair_for_scene(
    seed: int, plan: SubsetPlan, k: int, pool: Sequence[AssetPair], draw: int = 0
) -> tuple[AssetPair, int]:
    """Scene k's pair and its use count; ``draw`` > 0 picks a replacement (:mod:`rose_gen.scene.redraw`)."""
    if not pool:
        raise PlanError(f"{plan.subset}: the {plan.source} source offers no asset pairs")
    order = pair_order(seed, plan.subset, len(pool))
    if draw:
        return pool[int(order[redraw.redraw_index(seed, plan.subset, k, draw, len(pool), plan.n_scenes)])], 0
    return pool[int(order[(k - 1) % len(pool)])], (k - 1) // len(pool)


def _choice(rng: np.random.Generator, names: Sequence[str], probs: np.ndarray) -> str:
    return names[int(rng.choice(len(names), p=probs))]


def plan_scene(
    plan: SubsetPlan,
    seed: int,
    k: int,
    pool: Sequence[AssetPair],
    source: VisualSource,
) -> SceneSpec:
    """Plan scene ``k`` (1-based) of a subset alone; equal to scene k of :func:`plan_subset`.

    ``pool`` is ``source.pool(plan.source_options)``; ``source`` orients the pair and
    supplies the subset's ids (its ``info``). Under ``difficulty.hard_share`` the label
    depends on the whole subset's ranking, so the subset is planned to find it.
    """
    validate_plan(plan)
    if not 1 <= k <= plan.n_scenes:
        raise PlanError(f"{plan.subset}: scene index {k} outside 1..{plan.n_scenes}")
    if plan.difficulty.hard_share is not None:
        return plan_subset(plan, seed, source, pool)[k - 1]
    return SubsetDraws.build(plan, seed, source, pool).draw(k).scene


@dataclass(frozen=True, eq=False)
class DrawnScene:
    """A scene as drawn (difficulty not yet ranked) and the visibility check it passed, whose
    tiles (and preset base image) the renderer reuses."""

    scene: SceneSpec
    check: redraw.DrawnCheck


@dataclass(frozen=True, eq=False)
class SubsetDraws:
    """What every scene of one subset is drawn from: the preset's pool, the splits and the
    similarity cut. Built once per subset (in each process that draws its scenes); any scene
    can then be drawn alone, in any order, with the same result."""

    plan: SubsetPlan
    seed: int
    source: VisualSource
    pool: PresetPool
    splits: tuple[str, ...]
    cut: float | None
    perceptible: bool = True  # apply the perceptibility rule (False: the visibility measure alone, as before it)

    @classmethod
    def build(cls, plan: SubsetPlan, seed: int, source: VisualSource,
              pool: Sequence[AssetPair] | None = None) -> SubsetDraws:
        """Validate ``plan`` and gather its shared draws (``pool`` defaults to ``source.pool(...)``)."""
        validate_plan(plan)
        if pool is None:
            pool = source.pool(plan.source_options)
        return cls(plan=plan, seed=seed, source=source, pool=PresetPool.build(pool, plan.preset),
                   splits=tuple(assign_splits(seed, plan.subset, plan.n_scenes, plan.n_dev)),
                   cut=similarity_cut([p.similarity for p in pool], plan.difficulty))

    def draw(self, k: int) -> DrawnScene:
        """Scene ``k`` (1-based), redrawn until its exceptions are visible as rendered (unranked)."""
        if not 1 <= k <= self.plan.n_scenes:
            raise PlanError(f"{self.plan.subset}: scene index {k} outside 1..{self.plan.n_scenes}")
        return _drawn_scene(self.plan, self.seed, k, self.pool, self.source, self.splits[k - 1], self.cut,
                            self.perceptible)


def _drawn_scene(plan: SubsetPlan, seed: int, k: int, ppool: PresetPool, source: VisualSource, split: str,
                 cut: float | None, perceptible: bool = True) -> DrawnScene:
    """Scene k with the preset applied, redrawn until its exceptions are visible as rendered.

    See :mod:`rose_gen.scene.redraw`: draw 0 is the subset's pair order; later draws take spare
    pairs of the band, then of the whole pool. Rejected draws are recorded on the rows.
    """
    rejected: list[dict[str, Any]] = []
    softenable = plan.preset.jitter.enabled or plan.preset.degrade.enabled
    for draw in range(redraw.MAX_DRAWS):
        strength, pair_draw = redraw.softening(draw, softenable)  # softened draws reuse the first pairs
        pool = ppool.band if pair_draw < redraw.BAND_DRAWS else ppool.pool
        scene = apply_preset(_plan_scene(plan, seed, k, pool, source, split, cut, pair_draw), ppool, source, seed,
                             strength=strength)
        check = redraw.check_drawn(scene, source, perceptible=perceptible)
        if not check.reasons:
            if rejected:  # the record changes the rows only, not the pixels checked
                fields = {**scene.pair.row_fields, redraw.ROW_FIELD: rejected}
                scene = replace(scene, pair=replace(scene.pair, row_fields=fields))
            return DrawnScene(scene, check)
        rejected.append(redraw.rejection(scene, draw, check.reasons))
    raise PlanError(f"{plan.subset} scene {k}: no draw of {redraw.MAX_DRAWS} has visible exceptions (last: "
                    f"{rejected[-1]['reason']}); soften the difficulty preset (cell_scale, degrade) for this source")


def _plan_scene(
    plan: SubsetPlan,
    seed: int,
    k: int,
    pool: Sequence[AssetPair],
    source: VisualSource,
    split: str,
    cut: float | None,
    draw: int = 0,
) -> SceneSpec:
    """Scene k given the subset-wide split and similarity cut (plan already validated).

    ``pool`` is the preset's band of the source pool (or the whole pool for late redraws);
    the preset's per-scene choices are added afterwards by
    :func:`rose_gen.scene.presets.apply_preset`. ``draw`` numbers the redraws (0: the first draw).
    """
    info = source.info
    if info.subset != plan.subset:
        raise PlanError(f"{plan.subset}: source {plan.source!r} feeds {info.subset}, not this subset")

    layout = sample_layout(preset_layout(plan.layout, plan.preset), scene_rng(seed, plan.subset, k, "layout"))
    pair, cycle = _pair_for_scene(seed, plan, k, pool, draw)
    pair = source.orient(pair, scene_rng(seed, plan.subset, k, "orient"))

    type_probs = _weights(plan.region_type_weights, NUMERIC_REGION_TYPES, "region type", plan.subset)
    if plan.balance is not None:
        layout, regions = _balanced(plan, seed, k, layout, type_probs)
    else:
        regions = _sampled_regions(plan, seed, k, layout, type_probs)

    difficulty: dict[str, str] = {}
    inputs: dict[str, dict[str, Any]] = {}
    n = len(layout.target_cells)
    tier = similarity_tier(pair.similarity, cut)
    tie_break = None
    if plan.difficulty.hard_share is not None:  # own stream: the other draws do not move
        tie_break = round(float(scene_rng(seed, plan.subset, k, "difficulty").random()), 6)
    for template in vocab.TEMPLATE_ORDER:
        got = regions[template].got_case if template in regions else ("all" if n else "zero")
        label, recorded = rate(n, got, tier, layout.grid_size_profile, plan.difficulty, tie_break)
        difficulty[template], inputs[template] = label, recorded

    font_size = int(layout.cell_size * plan.font_scale) if plan.font_scale is not None else None
    return SceneSpec(
        subset=plan.subset,
        source=plan.source,
        scene_index=k,
        scene_id=f"{info.id_prefix}SCENE_{k:06d}",
        split=split,
        id_prefix=info.id_prefix,
        primitive_type=info.primitive_type,
        item_seed_base=info.item_seed_base,
        image_split=info.image_split,
        rows=layout.rows,
        cols=layout.cols,
        cell_size=layout.cell_size,
        font_size=font_size,
        grid_size_profile=layout.grid_size_profile,
        target_cells=layout.target_cells,
        pair=pair,
        regions=regions,
        cue_type=plan.cue_type,
        difficulty=difficulty,
        difficulty_inputs=inputs,
        dataset_version=plan.dataset_version,
        protocol_version=vocab.PROTOCOL_VERSION,
        pair_cycle=cycle,
    )


def _sampled_regions(plan: SubsetPlan, seed: int, k: int, layout: Any, type_probs: np.ndarray
                     ) -> dict[str, RegionSpec]:
    """Scene k's regions aiming for the plan's case mix (the ``regions`` stream)."""
    rng = scene_rng(seed, plan.subset, k, "regions")
    case_probs = _weights(plan.case_weights, CASES, "region case", plan.subset)
    regions: dict[str, RegionSpec] = {}
    for template in REGION_TEMPLATES:
        box_type = _choice(rng, NUMERIC_REGION_TYPES, type_probs)  # drawn always: fixed stream
        wanted = _choice(rng, CASES, case_probs)
        fixed_kind = _FIXED_REGION_KIND.get(template)
        region_type = fixed_kind or box_type
        exclude = box_type if region_type == "EXCLUSION" else None
        try:
            regions[template] = sample_region(
                region_type,
                rng,
                layout.rows,
                layout.cols,
                layout.target_cells,
                wanted,
                plan.region_sizes,
                exclude_type=exclude,
            )
        except RegionError as err:
            raise PlanError(f"{plan.subset} scene {k}: {err}") from None
    return regions


def _balanced(plan: SubsetPlan, seed: int, k: int, layout: Any, type_probs: np.ndarray
              ) -> tuple[Any, dict[str, RegionSpec]]:
    """Scene k's exception cells and regions with balanced answers (own ``balance`` stream)."""
    assert plan.balance is not None
    rng = scene_rng(seed, plan.subset, k, "balance")
    kinds = []
    for template in REGION_TEMPLATES:
        box_type = _choice(rng, NUMERIC_REGION_TYPES, type_probs)
        kinds.append((_FIXED_REGION_KIND.get(template) or box_type, box_type))
    try:
        targets, specs = balanced_scene(rng, plan.balance, layout.rows, layout.cols, kinds, plan.region_sizes)
    except BalanceError as err:
        raise PlanError(f"{plan.subset} scene {k}: {err}") from None
    return replace(layout, target_cells=targets), dict(zip(REGION_TEMPLATES, specs, strict=True))


def plan_subset(
    plan: SubsetPlan,
    seed: int,
    source: VisualSource,
    pool: Sequence[AssetPair] | None = None,
) -> list[SceneSpec]:
    """Plan every scene of a subset (``pool`` defaults to ``source.pool(plan.source_options)``)."""
    draws = SubsetDraws.build(plan, seed, source, pool)
    scenes = [draws.draw(k).scene for k in range(1, plan.n_scenes + 1)]
    if plan.difficulty.hard_share is not None:
        scenes = rank_difficulty(scenes, plan.difficulty.hard_share)
    return scenes


def pairs_reused(scenes: Sequence[SceneSpec]) -> int:
    """How many scenes reuse a pair already used earlier in the subset."""
    return sum(1 for s in scenes if s.pair_cycle > 0)
