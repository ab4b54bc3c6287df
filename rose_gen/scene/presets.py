"""Difficulty presets: one set of knobs, shared by every visual source, that makes scenes harder.

A :class:`DifficultyPreset` changes six things (``conf/difficulty/README.md`` has the table):

- ``similarity_band``: the scenes draw their pairs only from the source pool's pairs whose
  similarity rank lies in this quantile band (``[0.5, 1.0]``: the more similar half). The
  ``high``/``low`` tier of the difficulty rule stays relative to the whole pool. Pools whose
  source gives no similarity are used whole (recorded as ``band_applied: false``).
- ``extra_exceptions``: every drawn exception count is raised by this many.
- ``second_identity_share``: the share of scenes (with at least two exceptions) whose
  exceptions show two distinct identities. The second one comes through the source
  interface: another orientation of a pool entry that shares the scene's majority
  (:func:`companion`), accepted only when its majority tile is pixel-identical to the
  scene's and its target differs visibly from both. A source without such an entry
  (PixelEdit has one edit per sprite) keeps one identity; the row says
  ``second_identity: "unavailable"``.
- ``cell_scale``: multiplies the layout family's cell-size range (smaller cells).
- ``jitter``: every cell's content is scaled by a factor in ``[min_scale, 1]`` and shifted
  by up to ``max_offset`` of the cell in x and y, so no two cells are pixel-identical.
- ``degrade``: the finished base image is downscaled by a factor in ``downscale`` and
  scaled back, then JPEG round-tripped at a quality in ``jpeg_quality`` (the cue is drawn
  afterwards, crisp).

``standard`` is the identity: every knob off, so its plans, rows and images are exactly
those of a generator without presets. Every draw comes from
``scene_rng(seed, subset, k, purpose)`` with its own purpose (``second_identity``,
``jitter``, ``degrade``), so presets never shift the layout, orientation or region draws of
a scene. What a scene got is recorded on every row as ``difficulty_preset`` and carried
to the renderer in ``SceneSpec.extra["preset"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rose_gen.core.rng import scene_rng
from rose_gen.core.schema import AssetPair, SceneSpec, asset_pair_to_json
from rose_gen.scene.layout import LayoutParams
from rose_gen.sources.base import VisualSource

ROW_FIELD = "difficulty_preset"  # the row column recording a scene's preset choices
EXTRA_KEY = "preset"  # SceneSpec.extra key the renderer reads
MIN_CELL_PX = 12  # smallest cell a cell_scale may produce
ORIENT_TRIES = 8  # orientations drawn per pool entry when looking for a companion
MAX_COMPANION_CHECKS = 6  # candidates rendered and checked per scene, at most
# A second identity must clear the visibility rule with a margin (4x the changed share of
# rose_gen.assets.visibility's defaults): smaller cells, jitter and degradation come on top of it.
COMPANION_VISIBILITY: dict[str, float] = {"min_changed_fraction": 0.02, "max_ssim": 0.98}


class PresetError(ValueError):
    """A preset's knobs are out of range (one-line message naming the knob)."""


@dataclass(frozen=True)
class JitterParams:
    """Per-cell sub-cell offset (fraction of the cell) and scale range; zeros mean off."""

    max_offset: float = 0.0
    min_scale: float = 1.0

    @property
    def enabled(self) -> bool:
        return self.max_offset > 0 or self.min_scale < 1

    def to_json(self) -> dict[str, Any]:
        return {"max_offset": self.max_offset, "min_scale": self.min_scale}


@dataclass(frozen=True)
class DegradeParams:
    """Downscale factor range (``None``: none) and JPEG quality range (``None``: none)."""

    downscale: tuple[float, float] | None = None
    jpeg_quality: tuple[int, int] | None = None

    @property
    def enabled(self) -> bool:
        return self.downscale is not None or self.jpeg_quality is not None

    def to_json(self) -> dict[str, Any]:
        return {"downscale": list(self.downscale) if self.downscale else None,
                "jpeg_quality": list(self.jpeg_quality) if self.jpeg_quality else None}


@dataclass(frozen=True)
class DifficultyPreset:
    """The preset knobs (see the module docstring); the defaults are ``standard``."""

    name: str = "standard"
    similarity_band: tuple[float, float] = (0.0, 1.0)
    extra_exceptions: int = 0
    second_identity_share: float = 0.0
    cell_scale: float = 1.0
    jitter: JitterParams = field(default_factory=JitterParams)
    degrade: DegradeParams = field(default_factory=DegradeParams)

    @property
    def changes_nothing(self) -> bool:
        """True when every knob is off (plans are exactly the preset-free ones)."""
        return (tuple(self.similarity_band) == (0.0, 1.0) and self.extra_exceptions == 0
                and self.second_identity_share == 0 and self.cell_scale == 1.0
                and not self.jitter.enabled and not self.degrade.enabled)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "similarity_band": list(self.similarity_band),
                "extra_exceptions": self.extra_exceptions, "second_identity_share": self.second_identity_share,
                "cell_scale": self.cell_scale, "jitter": self.jitter.to_json(), "degrade": self.degrade.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DifficultyPreset:
        """Inverse of :meth:`to_json`; checks ranges (raises :class:`PresetError`)."""
        jit, deg = data.get("jitter") or {}, data.get("degrade") or {}
        down, jpeg = deg.get("downscale"), deg.get("jpeg_quality")
        preset = cls(
            name=str(data.get("name", "standard")),
            similarity_band=tuple(float(v) for v in data.get("similarity_band", (0.0, 1.0))),
            extra_exceptions=int(data.get("extra_exceptions", 0)),
            second_identity_share=float(data.get("second_identity_share", 0.0)),
            cell_scale=float(data.get("cell_scale", 1.0)),
            jitter=JitterParams(max_offset=float(jit.get("max_offset", 0.0)),
                                min_scale=float(jit.get("min_scale", 1.0))),
            degrade=DegradeParams(downscale=tuple(float(v) for v in down) if down else None,
                                  jpeg_quality=tuple(int(v) for v in jpeg) if jpeg else None),
        )
        validate_preset(preset)
        return preset


def _range(values: Sequence[float] | None, lo: float, hi: float, what: str) -> None:
    if values is None:
        return
    if len(values) != 2 or not lo <= values[0] <= values[1] <= hi:
        raise PresetError(f"{what} must be [low, high] with {lo} <= low <= high <= {hi} (got {list(values)})")


def validate_preset(preset: DifficultyPreset) -> None:
    """Raise :class:`PresetError` (one line, naming the knob) when a knob is out of range."""
    p = f"difficulty.preset ({preset.name})"
    _range(preset.similarity_band, 0.0, 1.0, f"{p}.similarity_band")
    if preset.extra_exceptions < 0:
        raise PresetError(f"{p}.extra_exceptions must be >= 0 (got {preset.extra_exceptions})")
    if not 0 <= preset.second_identity_share <= 1:
        raise PresetError(f"{p}.second_identity_share must be in [0, 1] (got {preset.second_identity_share})")
    if not 0 < preset.cell_scale <= 4:
        raise PresetError(f"{p}.cell_scale must be in (0, 4] (got {preset.cell_scale})")
    if not 0 <= preset.jitter.max_offset <= 0.25:
        raise PresetError(f"{p}.jitter.max_offset must be in [0, 0.25] (got {preset.jitter.max_offset})")
    if not 0.5 <= preset.jitter.min_scale <= 1:
        raise PresetError(f"{p}.jitter.min_scale must be in [0.5, 1] (got {preset.jitter.min_scale})")
    _range(preset.degrade.downscale, 0.1, 1.0, f"{p}.degrade.downscale")
    _range(preset.degrade.jpeg_quality, 5, 95, f"{p}.degrade.jpeg_quality")


# -- hydra schema ---------------------------------------------------------------------------


@dataclass
class JitterConf:
    max_offset: float = 0.0
    min_scale: float = 1.0


@dataclass
class DegradeConf:
    downscale: list[float] | None = None
    jpeg_quality: list[int] | None = None


@dataclass
class PresetConf:
    """Schema of ``difficulty.preset`` (defaults: standard, every knob off)."""

    similarity_band: list[float] = field(default_factory=lambda: [0.0, 1.0])
    extra_exceptions: int = 0
    second_identity_share: float = 0.0
    cell_scale: float = 1.0
    jitter: JitterConf = field(default_factory=JitterConf)
    degrade: DegradeConf = field(default_factory=DegradeConf)


def preset_from_conf(name: str, conf: Mapping[str, Any]) -> DifficultyPreset:
    """A preset from the composed ``difficulty`` group (its ``name`` and ``preset`` node)."""
    return DifficultyPreset.from_json({**dict(conf), "name": name})


# -- planning -------------------------------------------------------------------------------


def preset_layout(layout: LayoutParams, preset: DifficultyPreset) -> LayoutParams:
    """The layout knobs under ``preset``: exception counts raised, cell range scaled."""
    if preset.extra_exceptions == 0 and preset.cell_scale == 1.0:
        return layout
    weights = (0.0,) * preset.extra_exceptions + tuple(layout.exception_weights)
    cell = layout.cell_size
    if preset.cell_scale != 1.0:
        lo, hi = layout.cell_range()
        cell = (max(MIN_CELL_PX, round(lo * preset.cell_scale)), max(MIN_CELL_PX, round(hi * preset.cell_scale)))
    return replace(layout, exception_weights=weights, cell_size=cell)


BAND_KEY = "band_similarity"  # render field of a source whose rows carry no similarity (EmojiStyle)


def band_similarities(pool: Sequence[AssetPair]) -> list[float | None] | None:
    """Each pair's similarity for ranking a band: ``similarity``, else the source's
    ``render["band_similarity"]`` (None there: below the source's similarity floor, never in a
    band); None when the pool offers neither."""
    if pool and all(p.similarity is not None for p in pool):
        return [float(p.similarity) for p in pool]
    if pool and all(BAND_KEY in p.render for p in pool):
        return [None if p.render[BAND_KEY] is None else float(p.render[BAND_KEY]) for p in pool]
    return None


def band_pool(pool: Sequence[AssetPair], preset: DifficultyPreset) -> tuple[list[AssetPair], bool]:
    """(pairs whose similarity rank lies in the band, whether the band applied).

    Ranks are over the pool's scored pairs (ascending similarity, ties by pool order);
    rank r of m has quantile r / (m - 1). A pool without similarities is used whole.
    """
    lo, hi = preset.similarity_band
    sims = band_similarities(pool) if (lo, hi) != (0.0, 1.0) else None
    if sims is None:
        return list(pool), False
    scored = [i for i, v in enumerate(sims) if v is not None]
    if not scored:
        return list(pool), False
    values = np.array([sims[i] for i in scored])
    order = np.argsort(values, kind="stable")
    q = np.empty(len(scored))
    q[order] = np.arange(len(scored)) / max(len(scored) - 1, 1)
    keep = (q >= lo - 1e-12) & (q <= hi + 1e-12)
    band = [pool[i] for i, k in zip(scored, keep, strict=True) if k]
    return (band or [pool[scored[int(order[-1])]]]), True


@dataclass(frozen=True)
class PresetPool:
    """A subset's pool seen through a preset: the band, and an index for companions."""

    preset: DifficultyPreset
    pool: tuple[AssetPair, ...]
    band: tuple[AssetPair, ...]
    band_applied: bool
    by_side: Mapping[str, tuple[int, ...]]

    @classmethod
    def build(cls, pool: Sequence[AssetPair], preset: DifficultyPreset) -> PresetPool:
        band, applied = band_pool(pool, preset)
        index: dict[str, list[int]] = {}
        if preset.second_identity_share > 0:
            for i, p in enumerate(pool):
                for side in dict.fromkeys((p.majority, p.target)):
                    index.setdefault(side, []).append(i)
        return cls(preset, tuple(pool), tuple(band), applied, {k: tuple(v) for k, v in index.items()})


def _tile(source: VisualSource, pair: AssetPair, role: str, cell: int) -> np.ndarray:
    from rose_gen.render.compose import tile_array

    return tile_array(source.render_tile(pair, role, cell), cell, f"{pair.source} {role} tile")


def companion(pair: AssetPair, ppool: PresetPool, source: VisualSource, cell_size: int,
              rng: np.random.Generator) -> AssetPair | None:
    """A second exception identity for ``pair``'s scene, or None when the source has none.

    Candidates are the source's own ``companions(pair)`` when it has that hook (EmojiStyle:
    the identity by a third vendor), and orientations (drawn with ``source.orient``) of the
    pool entries that contain ``pair.majority`` on either side, whose majority is
    ``pair.majority`` and whose target is new, each redrawn as the scene draws its pair when
    the source has the ``in_scene(candidate, pair)`` hook (ChineseGlyph: in the scene's face,
    verified there). A candidate is accepted when its majority tile is pixel-identical to
    the scene's and its target is visible, with the margin of :data:`COMPANION_VISIBILITY`,
    against the majority and against the first target.
    """
    from rose_gen.assets.visibility import is_visible, tile_difference

    found: dict[str, AssetPair] = {}
    for cand in getattr(source, "companions", lambda _: [])(pair):  # the source's own (optional hook)
        if cand.majority == pair.majority and cand.target not in (pair.target, pair.majority):
            found.setdefault(cand.target, cand)
    for i in ppool.by_side.get(pair.majority, ()):
        entry = ppool.pool[i]
        for _ in range(ORIENT_TRIES):
            cand = source.orient(entry, rng)
            if cand.majority == pair.majority and cand.target not in (pair.target, pair.majority):
                found.setdefault(cand.target, cand)
    in_scene = getattr(source, "in_scene", None)  # optional hook: draw a candidate as the scene draws its pair
    if in_scene is not None:
        found = {t: c for t, c in ((t, in_scene(c, pair)) for t, c in sorted(found.items())) if c is not None}
    if not found:
        return None
    names = sorted(found)
    order = rng.permutation(len(names))
    majority = target = None
    for j in order[:MAX_COMPANION_CHECKS]:
        cand = found[names[int(j)]]
        if majority is None:
            majority, target = _tile(source, pair, "majority", cell_size), _tile(source, pair, "target", cell_size)
        if not np.array_equal(_tile(source, cand, "majority", cell_size), majority):
            continue
        second = _tile(source, cand, "target", cell_size)
        if (is_visible(tile_difference(second, majority), **COMPANION_VISIBILITY)
                and is_visible(tile_difference(second, target), **COMPANION_VISIBILITY)):
            return cand
    return None


def softened(preset: DifficultyPreset, strength: float) -> DifficultyPreset:
    """``preset`` with its jitter and degradation scaled to ``strength`` (1: unchanged, 0: none):
    offsets and the scale's distance from 1 times ``strength``, the downscale factor's distance
    from 1 times ``strength``, the JPEG quality moved towards 95 (none at 0)."""
    if strength >= 1.0:
        return preset
    t = float(strength)
    jit = JitterParams(max_offset=round(preset.jitter.max_offset * t, 6),
                       min_scale=round(1.0 - (1.0 - preset.jitter.min_scale) * t, 6))
    down, jpeg = preset.degrade.downscale, preset.degrade.jpeg_quality
    deg = DegradeParams(
        downscale=tuple(round(1.0 - (1.0 - v) * t, 6) for v in down) if down and t > 0 else None,
        jpeg_quality=tuple(int(round(95 - (95 - v) * t)) for v in jpeg) if jpeg and t > 0 else None)
    return replace(preset, jitter=jit, degrade=deg)


def _scene_choices(scene: SceneSpec, ppool: PresetPool, source: VisualSource, seed: int, strength: float = 1.0
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the row record, the renderer's record) of one scene under the preset (its jitter and
    degradation at ``strength``, :func:`softened`)."""
    preset = ppool.preset
    row: dict[str, Any] = {
        "name": preset.name,
        "similarity_band": list(preset.similarity_band),
        "band_applied": ppool.band_applied,
        "band_pairs": len(ppool.band),
        "pool_pairs": len(ppool.pool),
        "extra_exceptions": preset.extra_exceptions,
        "cell_scale": preset.cell_scale,
    }
    render: dict[str, Any] = {}
    n = len(scene.target_cells)
    rng = scene_rng(seed, scene.subset, scene.scene_index, "second_identity")
    wants_second = n >= 2 and rng.random() < preset.second_identity_share
    second = companion(scene.pair, ppool, source, scene.cell_size, rng) if wants_second else None
    if second is not None:
        picks = np.sort(rng.choice(n, size=int(rng.integers(1, n)), replace=False))
        cells = [list(scene.target_cells[int(i)]) for i in picks]
        row.update(second_identity="used", second_target=second.target, second_pair_key=second.pair_key,
                   second_target_cells=cells)
        render["second"] = {"pair": asset_pair_to_json(second), "cells": cells}
    else:
        state = "unavailable" if wants_second else "not_drawn"
        row.update(second_identity=state if preset.second_identity_share > 0 else "off", second_target="",
                   second_pair_key="", second_target_cells=[])
    if strength < 1.0:
        row["softened"] = float(strength)
        preset = softened(preset, strength)
    jit = preset.jitter
    if jit.enabled:
        jseed = int(scene_rng(seed, scene.subset, scene.scene_index, "jitter").integers(2**62))
        row["jitter"] = {**jit.to_json(), "seed": jseed}
        render["jitter"] = dict(row["jitter"])
    else:
        row["jitter"] = {"max_offset": 0.0, "min_scale": 1.0, "seed": 0}
    deg = preset.degrade
    drng = scene_rng(seed, scene.subset, scene.scene_index, "degrade")
    factor = round(float(drng.uniform(*deg.downscale)), 4) if deg.downscale else 1.0
    quality = int(drng.integers(deg.jpeg_quality[0], deg.jpeg_quality[1] + 1)) if deg.jpeg_quality else 0
    row["degrade"] = {"downscale": factor, "jpeg_quality": quality}
    if deg.enabled:
        render["degrade"] = dict(row["degrade"])
    return row, render


def apply_preset(scene: SceneSpec, ppool: PresetPool, source: VisualSource, seed: int,
                 strength: float = 1.0) -> SceneSpec:
    """``scene`` with the preset's per-scene choices (unchanged when the preset changes nothing);
    ``strength`` < 1 softens its jitter and degradation (:func:`softened`, recorded as ``softened``)."""
    if ppool.preset.changes_nothing:
        return scene
    row, render = _scene_choices(scene, ppool, source, seed, strength)
    pair = replace(scene.pair, row_fields={**scene.pair.row_fields, ROW_FIELD: row})
    return replace(scene, pair=pair, extra={**scene.extra, EXTRA_KEY: {"name": row["name"], **render}})




# -- what a release's presets did ----------------------------------------------------------------


@dataclass
class PresetTally:
    """Counts, per subset, of what the preset did to the scenes drawn (for one stderr line per knob
    a preset asked for and did not fully apply): the band, the second identity, softened draws."""

    scenes: dict[str, int] = field(default_factory=dict)
    band_missing: dict[str, int] = field(default_factory=dict)
    second_asked: dict[str, int] = field(default_factory=dict)
    second_missing: dict[str, int] = field(default_factory=dict)
    softened: dict[str, int] = field(default_factory=dict)

    def add(self, scene: SceneSpec) -> None:
        """Count one drawn scene (scenes without a preset record are not counted)."""
        record = scene.pair.row_fields.get(ROW_FIELD)
        if not isinstance(record, Mapping):
            return
        s = scene.subset
        bump = lambda d: d.__setitem__(s, d.get(s, 0) + 1)  # noqa: E731
        bump(self.scenes)
        if tuple(record.get("similarity_band", (0.0, 1.0))) != (0.0, 1.0) and not record.get("band_applied"):
            bump(self.band_missing)
        if record.get("second_identity") in ("used", "unavailable"):
            bump(self.second_asked)
            if record["second_identity"] == "unavailable":
                bump(self.second_missing)
        if "softened" in record:
            bump(self.softened)

    def notes(self) -> list[str]:
        """One line per subset and knob the preset did not apply as stated."""
        out = []
        for s, n in self.scenes.items():
            if self.band_missing.get(s):
                out.append(f"{s}: similarity band not applied in {self.band_missing[s]} of {n} scene(s) "
                           "(the source gives no similarity)")
            if self.second_missing.get(s):
                out.append(f"{s}: second exception identity unavailable in {self.second_missing[s]} of "
                           f"{self.second_asked[s]} scene(s) that drew one (no companion for the scene's majority)")
            if self.softened.get(s):
                out.append(f"{s}: jitter and degradation softened in {self.softened[s]} of {n} scene(s) "
                           "(no pair's exceptions were perceptible at the preset's strength; "
                           "difficulty_preset.softened on the rows)")
        return out
