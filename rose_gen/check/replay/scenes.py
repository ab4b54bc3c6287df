"""Rebuilding scenes from released rows, re-deriving every row, and comparing.

Rows are grouped by scene; each scene spec is rebuilt from its rows: the grid, cell size and
exception cells, every region the rows name (its case re-derived), and the fields the rules
of :mod:`rose_gen.check.replay.fields` derive (``font_size``, ``grid_size_profile``, the subset's
pair fields). Every row is then re-derived by :func:`rose_gen.tasks.templates.task_row` and compared
with the released row field by field: a disagreement is an :class:`Inconsistency` of the
released data, reported, never copied or fixed.

Carried (taken from the rows, listed in the report): ``dataset_version``, ``split``,
``image_split`` and ``cue_type`` (v0.1's labels), the wanted half of a fallback region case,
the subset fields no rule derives (font name, emoji names and labels, similarity), and
``difficulty`` unless the rows record our rule's inputs (:mod:`rose_gen.check.replay.rating`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from rose_eval import vocab
from rose_gen.check.replay.fields import ABSENT, SCENE_RULES, Derivation, derive_fields, rule_notes
from rose_gen.check.replay.inputs import REPLAY_FIELDS, InputRow, ReplayError, need, subset_fields
from rose_gen.check.replay.rating import rate_templates, subset_cut, tier_of
from rose_gen.core.schema import (
    CUE_TEMPLATE,
    RegionSpec,
    SceneSpec,
    base_image_record,
    cue_image_record,
)
from rose_gen.scene.regions import (
    CASES,
    RegionError,
    case_of,
    fallback_label,
    region_mask,
    target_mask,
)
from rose_gen.sources import BUILTIN_SOURCE_MODULES, SOURCES, AssetPair, SourceInfo, load_sources
from rose_gen.tasks.templates import task_row

# Built-in source names (each registers under its module name).
BUILTIN_SOURCES = tuple(module.rsplit(".", 1)[1] for module in BUILTIN_SOURCE_MODULES)
CARRIED_LABELS = ("dataset_version", "split", "image_split", "cue_type", "region_case (wanted half)")

# Which scene region each template's row names (T1/T1B: the whole grid).
REGION_OF: dict[str, str | None] = {
    "T1_COUNT_GLOBAL": None, "T1B_CLICK_GLOBAL": None,
    "T2_COUNT_LOCAL_NUMERIC": "T2_COUNT_LOCAL_NUMERIC",
    "T3_CLICK_LOCAL_NUMERIC": "T3_CLICK_LOCAL_NUMERIC",
    "T2B_COUNT_LOCAL_MATCHED": "T3_CLICK_LOCAL_NUMERIC",
    "T4_CLICK_VISUAL_REGION": "T4_CLICK_VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION": "T5_CLICK_COUNT_EXCLUSION",
}
# Whose difficulty label a row carries (T2B copies T3's; T1B is the fixed "bridge").
DIFFICULTY_OF = {"T2B_COUNT_LOCAL_MATCHED": "T3_CLICK_LOCAL_NUMERIC"}
UNRATED = frozenset({"T1B_CLICK_GLOBAL"})
_FALLBACK = re.compile(r"fallback_(zero|partial|all)_wanted_(zero|partial|all)")


@dataclass(frozen=True)
class Inconsistency:
    """A released field that disagrees with what follows from the scene.

    ``kind``: ``mismatch`` (our derivation differs), ``not_derivable`` (the field's inputs do
    not determine a value, e.g. a pair key that names no files) or ``defect`` (the scene's two
    sides are one, so it has no visible exception); ``why`` says how the value follows.
    """

    scene_id: str
    item_id: str
    where: str
    field: str
    released: Any
    derived: Any
    why: str = ""
    kind: str = "mismatch"

    def to_json(self) -> dict[str, Any]:
        return {"scene_id": self.scene_id, "item_id": self.item_id, "where": self.where, "field": self.field,
                "kind": self.kind, "released": self.released, "derived": self.derived, "why": self.why}


@dataclass(frozen=True)
class ReplayScene:
    """A rebuilt scene, the released rows it was rebuilt from (input order), what the rules
    derived, and our rule's difficulty label per rated template (for the agreement rate)."""

    scene: SceneSpec
    rows: tuple[InputRow, ...]
    derivation: Derivation = field(default_factory=lambda: Derivation({}, (), ()))
    our_difficulty: Mapping[str, str] = field(default_factory=dict)


@lru_cache(maxsize=1)
def subset_sources() -> dict[str, SourceInfo]:
    """Subset name -> the info of the built-in source feeding it (plug-ins feed no v0.1 subset)."""
    load_sources()
    return {SOURCES.get(name).info.subset: SOURCES.get(name).info for name in BUILTIN_SOURCES}


def _scene_index(item: InputRow, info: SourceInfo) -> int:
    scene_id = str(need(item, "scene_id"))
    m = re.fullmatch(rf"{info.id_prefix}SCENE_(\d+)", scene_id)
    if m is None or int(m.group(1)) < 1:
        raise ReplayError(f"{item.where}: scene_id {scene_id!r} is not {info.id_prefix}SCENE_<k> "
                          f"for subset {info.subset}")
    return int(m.group(1))


def _region_from_row(item: InputRow, targets: np.ndarray) -> RegionSpec:
    """The row's region with its case re-derived (the wanted case is the label's recorded half)."""
    rtype, params = str(need(item, "region_type")), need(item, "region_params")
    rows, cols = targets.shape
    try:
        inside = region_mask(rtype, params, rows, cols)
    except (RegionError, KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"{item.where}: region {rtype} {params} is not usable on a {rows}x{cols} grid "
                          f"({exc}); fix the row") from None
    got = case_of(int((targets & inside).sum()), int(targets.sum()))
    label = str(item.row.get("region_case", ""))
    m = _FALLBACK.fullmatch(label)
    wanted = m.group(2) if m else (label if label in CASES else got)
    return RegionSpec(rtype, dict(params), fallback_label(got, wanted), wanted)


def _pair_fields(row: Mapping[str, Any], derivation: Derivation) -> dict[str, Any]:
    """The released subset fields with the derived ones in their place, then derived fields the row lacks."""
    values = derivation.values
    fields = {k: values.get(k, v) for k, v in subset_fields(row).items()}
    fields.update({k: v for k, v in values.items() if k not in fields and k not in row})
    scene_level = {r.field for r in SCENE_RULES}
    return {k: v for k, v in fields.items() if v is not ABSENT and k not in scene_level}


def rebuild_scene(items: Sequence[InputRow], cut: float | None = None) -> ReplayScene:
    """The scene spec of one scene's rows; the first row names the scene-level fields.

    ``cut``: the subset's similarity cut for our difficulty rule (:func:`rating.subset_cut`).
    """
    first = items[0]
    subset = str(need(first, "rose_subset"))
    info = subset_sources().get(subset)
    if info is None:
        raise ReplayError(f"{first.where}: unknown rose_subset {subset!r}; known: {', '.join(subset_sources())}")
    try:
        rows, cols, cell = (int(need(first, k)) for k in ("rows", "cols", "cell_size"))
        cells = tuple((int(r), int(c)) for r, c in need(first, "target_cells"))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ReplayError):
            raise
        raise ReplayError(f"{first.where}: rows, cols, cell_size must be integers and target_cells a list of "
                          f"[row, col] pairs ({exc}); fix the row") from None
    bad = [rc for rc in cells if not (1 <= rc[0] <= rows and 1 <= rc[1] <= cols)]
    if bad or not cells:
        raise ReplayError(f"{first.where}: target_cells {list(cells)} are empty or outside the {rows}x{cols} grid")
    targets = target_mask(rows, cols, cells)
    regions: dict[str, RegionSpec] = {}
    released: dict[str, str] = {}
    recorded: dict[str, Mapping[str, Any]] = {}
    cue_type, version = "OUTLINE_BOX", None
    for item in items:
        template = vocab.canonical_template(str(need(item, "task_template")))
        if template not in REGION_OF:
            raise ReplayError(f"{item.where}: unknown task_template {template!r}; known: {', '.join(REGION_OF)}")
        key = REGION_OF[template]
        if key is not None and key not in regions:
            regions[key] = _region_from_row(item, targets)
        if template in UNRATED:
            continue
        owner = DIFFICULTY_OF.get(template, template)
        released.setdefault(owner, str(item.row.get("difficulty", "")))
        if isinstance(item.row.get("difficulty_inputs"), Mapping):
            recorded.setdefault(owner, item.row["difficulty_inputs"])
        version = version or item.row.get("dataset_version")
        if template == CUE_TEMPLATE:
            cue_type = str(item.row.get("cue_type", cue_type))
    derivation = derive_fields(first.row, info.name)
    values = derivation.values
    profile = values.get("grid_size_profile", first.row.get("grid_size_profile", ""))
    font_size = values.get("font_size", first.row.get("font_size"))
    some_inputs = next(iter(recorded.values()), None)
    ours = rate_templates(released, regions, len(cells), tier_of({**first.row, "difficulty_inputs": some_inputs}, cut),
                          str(profile), subset, recorded)
    derived_rule = bool(recorded)  # the rows publish our rule's inputs: derive, do not carry
    scene = SceneSpec(
        subset=subset, source=info.name, scene_index=_scene_index(first, info), scene_id=str(first.row["scene_id"]),
        split=str(need(first, "split")), id_prefix=info.id_prefix, primitive_type=info.primitive_type,
        item_seed_base=info.item_seed_base, image_split=str(first.row.get("image_split", info.image_split)),
        rows=rows, cols=cols, cell_size=cell, font_size=None if font_size is ABSENT else font_size,
        grid_size_profile=str(profile), target_cells=cells,
        pair=AssetPair(source=info.name, majority="", target="", pair_key=str(values.get("pair_key", first.row.get(
            "pair_key", ""))), row_fields=_pair_fields(first.row, derivation)),
        regions=regions, cue_type=cue_type,
        difficulty={t: ours[t][0] for t in released} if derived_rule else released,
        difficulty_inputs={t: ours[t][1] for t in released} if derived_rule else {},
        dataset_version=str(version or first.row.get("dataset_version", "")),
    )
    return ReplayScene(scene, tuple(items), derivation, {t: label for t, (label, _) in ours.items()})


def group_scenes(items: Iterable[InputRow]) -> list[ReplayScene]:
    """Rows grouped by (subset, scene_id), scenes in subset order then scene index."""
    groups: dict[tuple[str, str], list[InputRow]] = {}
    for item in items:
        key = (str(need(item, "rose_subset")), str(need(item, "scene_id")))
        groups.setdefault(key, []).append(item)
    cuts = {subset: subset_cut(g[0].row for (s, _), g in groups.items() if s == subset)
            for subset in {s for s, _ in groups}}
    scenes = [rebuild_scene(g, cuts[s]) for (s, _), g in groups.items()]
    order = {s: i for i, s in enumerate(vocab.SUBSET_ORDER)}
    return sorted(scenes, key=lambda s: (order.get(s.scene.subset, len(order)), s.scene.scene_index))


def derive_row(scene: SceneSpec, item: InputRow) -> dict[str, Any]:
    """Our template's row for the released row's template, region and scene (no replay fields)."""
    template = vocab.canonical_template(str(item.row["task_template"]))
    base = base_image_record(scene)
    color = item.row.get("image_cue_color")  # carried: the colour the cue was drawn in
    cue_color = tuple(int(v) for v in color) if isinstance(color, list) and len(color) == 3 else None
    cue = cue_image_record(scene, cue_color) if CUE_TEMPLATE in scene.regions else base
    row = task_row(scene, template, base, cue)
    if "difficulty_inputs" not in item.row:
        row.pop("difficulty_inputs", None)
    row["dataset_version"] = item.row.get("dataset_version", row["dataset_version"])  # recorded label
    return row


def compare_row(released: Mapping[str, Any], derived: Mapping[str, Any], scene_id: str, where: str,
                notes: Mapping[str, str] | None = None) -> list[Inconsistency]:
    """Field-by-field differences (missing on either side included; key order ignored)."""
    item_id = str(released.get("item_id", derived.get("item_id", "?")))
    notes = notes or {}
    out = []
    missing = object()
    for key in list(derived) + [k for k in released if k not in derived and k not in REPLAY_FIELDS]:
        a, b = released.get(key, missing), derived.get(key, missing)
        if a != b or type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            out.append(Inconsistency(scene_id, item_id, where, key, None if a is missing else a,
                                     None if b is missing else b, notes.get(key, "")))
    return out


def scene_problems(rs: ReplayScene) -> list[Inconsistency]:
    """The rules' findings on the scene (not derivable, defects), once per row that carries the field."""
    out = []
    for p in rs.derivation.problems:
        for item in rs.rows:
            if p.kind == "defect" or p.field in item.row:
                out.append(Inconsistency(rs.scene.scene_id, str(item.row.get("item_id", "?")), item.where, p.field,
                                         p.released, p.derived, p.why, p.kind))
                if p.kind == "defect":
                    break  # a defect belongs to the scene: reported once
    return out


def compare_scene(rs: ReplayScene) -> tuple[list[dict[str, Any]], list[Inconsistency]]:
    """Every row of the scene re-derived (input order) and every inconsistency found."""
    notes = rule_notes(rs.scene.source)
    rows, problems = [], scene_problems(rs)
    for item in rs.rows:
        derived = derive_row(rs.scene, item)
        problems.extend(compare_row(item.row, derived, rs.scene.scene_id, item.where, notes))
        rows.append(derived)
    return rows, problems
