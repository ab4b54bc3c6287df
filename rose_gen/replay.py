"""Replay a released v0.1-format folder from its own metadata.

Rows are grouped by scene; each scene spec is rebuilt from the row fields (grid, cell
size, exception cells, the asset pair's subset fields, every region the rows name). Every
row is then *re-derived* by :func:`rose_gen.templates.task_row` from the rebuilt scene and
the row's own region, and compared with the input field by field: a disagreement is an
:class:`Inconsistency` of the released data, reported, never copied or fixed.

Fields that cannot be derived from a scene are *recorded* (taken from the input and listed
in :data:`RECORDED_FIELDS`): ``dataset_version`` (a label naming the producing pipeline),
``difficulty`` (v0.1's rule is not public), the wanted half of a region_case label, and the
subset fields (they are the scene's identity: characters, font name, emoji, pair keys).

Images are re-rendered with our sources from installable assets, mapped from v0.1's names
by ``assets_manifest/replay_v0_1.json``. Rows keep v0.1's ``image``, ``image_width`` and
``image_height`` (ids and sizes are reproduced); the pixels differ, so each row gains two
fields: ``replay_substitutions`` (per asset: what was asked, what was used, its kind
``exact``/``same_design``/``stand_in`` and why) and ``replay_image_status`` (``rendered``,
``rendered_base_only`` when no T4 row names the cue rectangle, or ``not_rendered: <why>``).
A scene whose characters the mapped face cannot draw (glyph checks of
:mod:`rose_gen.fonts`) is reported and not rendered.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from assets_manifest import load_manifest
from rose_eval import vocab
from rose_eval.jsonl import iter_jsonl_objects
from rose_eval.registry import Registry
from rose_gen.fonts import FontFace, check_glyph, face_from_entry, manifest_faces
from rose_gen.regions import CASES, RegionError, case_of, fallback_label, region_mask, target_mask
from rose_gen.render import (
    CUE_OVERLAYS,
    CueSettings,
    compose_grid,
    encode_png,
    render_grid_images,
    tile_array,
)
from rose_gen.schema import CUE_TEMPLATE, RegionSpec, SceneSpec, base_image_record, cue_image_record
from rose_gen.sources import (
    BUILTIN_SOURCE_MODULES,
    SOURCES,
    AssetError,
    AssetPair,
    SourceInfo,
    load_sources,
)
from rose_gen.templates import task_row
from rose_gen.visibility import is_visible, tile_difference

MANIFEST = "replay_v0_1"
# Built-in source names (each registers under its module name).
BUILTIN_SOURCES = tuple(module.rsplit(".", 1)[1] for module in BUILTIN_SOURCE_MODULES)
KINDS = ("exact", "same_design", "stand_in")

# Input files of a v0.1-format folder, relative to it (bridge files as in the public repo
# ``analysis/data/<bridge>/`` and as in our own releases ``analysis/<bridge>/``).
INPUT_GLOBS = ("metadata_dev.jsonl", "metadata_test.jsonl", "analysis/data/*/metadata_*.jsonl",
               "analysis/*/metadata_*.jsonl")

# Fields every task row has that are not the asset pair's subset fields.
COMMON_FIELDS = frozenset({
    "item_id", "scene_id", "image_id", "split", "dataset_version", "protocol_version", "item_seed",
    "primitive_type", "task_template", "task_mode", "reference_source", "selection_predicate",
    "target_rule", "region_type", "region_params", "region_case", "cue_type", "prompt_global",
    "prompt_local", "expected_output_format", "ground_truth_count", "ground_truth_clicks",
    "ground_truth_formal_answer", "all_target_cells", "region_target_cells", "region_non_target_count",
    "num_out_region_targets", "global_target_count", "region_target_count", "region_cell_count",
    "region_ratio", "difficulty", "rose_subset", "image", "prompt", "answer", "rows", "cols",
    "cell_size", "font_size", "image_width", "image_height", "grid_size_profile", "target_cells",
    "image_split", "image_cue_type", "image_region_type", "image_region_params", "image_note",
    "bridge_task", "bridge_type", "source_item_id", "source_click_item_id", "source_task_template",
    "source_task_mode", "difficulty_inputs",
})
REPLAY_FIELDS = ("replay_substitutions", "replay_image_status")
RECORDED_FIELDS = ("dataset_version", "difficulty", "region_case (wanted half)", "subset fields")

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
_FALLBACK = re.compile(r"fallback_(zero|partial|all)_wanted_(zero|partial|all)")


class ReplayError(ValueError):
    """Input that cannot be replayed (one line: what, where, how to fix)."""


# ------------------------------------------------------------------------- input


@dataclass(frozen=True)
class InputRow:
    """One released row and where it came from (file relative to the input, 1-based line)."""

    row: Mapping[str, Any]
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def input_files(path: Path) -> list[Path]:
    """The JSONL files to replay: ``path`` itself, or the v0.1 layout's files under it."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ReplayError(f"{path} does not exist; pass a v0.1 release folder or a metadata .jsonl file")
    found: dict[Path, None] = {}
    for pattern in INPUT_GLOBS:
        for p in sorted(path.glob(pattern)):
            found.setdefault(p, None)
    if not found:
        raise ReplayError(f"{path} holds no metadata_dev.jsonl, metadata_test.jsonl or "
                          "analysis/data/*/metadata_*.jsonl; pass a v0.1 release folder or a .jsonl file")
    return list(found)


def read_rows(paths: Sequence[Path], root: Path | None = None) -> list[InputRow]:
    """Every row of ``paths`` (bad JSON or a non-object line: one line naming file and line)."""
    out: list[InputRow] = []
    for path in paths:
        name = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else path.name
        for n, row in iter_jsonl_objects(path, ReplayError, "fix or remove the line"):
            out.append(InputRow(row, name, n))
    return out


# ------------------------------------------------------------------------- scenes


@dataclass(frozen=True)
class Inconsistency:
    """A released field that disagrees with what our templates derive from the scene."""

    scene_id: str
    item_id: str
    where: str
    field: str
    released: Any
    derived: Any

    def to_json(self) -> dict[str, Any]:
        return {"scene_id": self.scene_id, "item_id": self.item_id, "where": self.where, "field": self.field,
                "released": self.released, "derived": self.derived}


@dataclass(frozen=True)
class ReplayScene:
    """A rebuilt scene and the released rows it was rebuilt from (in input order)."""

    scene: SceneSpec
    rows: tuple[InputRow, ...]


@lru_cache(maxsize=1)
def subset_sources() -> dict[str, SourceInfo]:
    """Subset name -> the info of the built-in source feeding it (plug-ins feed no v0.1 subset)."""
    load_sources()
    return {SOURCES.get(name).info.subset: SOURCES.get(name).info for name in BUILTIN_SOURCES}


def _need(item: InputRow, key: str) -> Any:
    if key not in item.row:
        raise ReplayError(f"{item.where}: row lacks field {key!r}; a v0.1 row carries its whole scene")
    return item.row[key]


def _scene_index(item: InputRow, info: SourceInfo) -> int:
    scene_id = str(_need(item, "scene_id"))
    m = re.fullmatch(rf"{info.id_prefix}SCENE_(\d+)", scene_id)
    if m is None or int(m.group(1)) < 1:
        raise ReplayError(f"{item.where}: scene_id {scene_id!r} is not {info.id_prefix}SCENE_<k> "
                          f"for subset {info.subset}")
    return int(m.group(1))


def _region_from_row(item: InputRow, targets: np.ndarray) -> RegionSpec:
    """The row's region with its case re-derived (the wanted case is the label's recorded half)."""
    rtype, params = str(_need(item, "region_type")), _need(item, "region_params")
    rows, cols = targets.shape
    try:
        inside = region_mask(rtype, params, rows, cols)
    except (RegionError, KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"{item.where}: region {rtype} {params} is not usable on a {rows}x{cols} grid "
                          f"({exc}); fix the row") from None
    total = int(targets.sum())
    got = case_of(int((targets & inside).sum()), total)
    label = str(item.row.get("region_case", ""))
    m = _FALLBACK.fullmatch(label)
    wanted = m.group(2) if m else (label if label in CASES else got)
    return RegionSpec(rtype, dict(params), fallback_label(got, wanted), wanted)


def subset_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The asset pair's fields of a row (everything that is not a common task field), in order."""
    return {k: v for k, v in row.items() if k not in COMMON_FIELDS and k not in REPLAY_FIELDS}


def rebuild_scene(items: Sequence[InputRow]) -> ReplayScene:
    """The scene spec of one scene's rows; the first row names the scene-level fields."""
    first = items[0]
    subset = str(_need(first, "rose_subset"))
    info = subset_sources().get(subset)
    if info is None:
        raise ReplayError(f"{first.where}: unknown rose_subset {subset!r}; known: {', '.join(subset_sources())}")
    rows, cols, cell = (int(_need(first, k)) for k in ("rows", "cols", "cell_size"))
    cells = tuple((int(r), int(c)) for r, c in _need(first, "target_cells"))
    bad = [rc for rc in cells if not (1 <= rc[0] <= rows and 1 <= rc[1] <= cols)]
    if bad or not cells:
        raise ReplayError(f"{first.where}: target_cells {list(cells)} are empty or outside the {rows}x{cols} grid")
    targets = target_mask(rows, cols, cells)
    regions: dict[str, RegionSpec] = {}
    difficulty: dict[str, str] = {}
    cue_type = "OUTLINE_BOX"
    version = None
    for item in items:
        template = vocab.canonical_template(str(_need(item, "task_template")))
        if template not in REGION_OF:
            raise ReplayError(f"{item.where}: unknown task_template {template!r}; known: {', '.join(REGION_OF)}")
        key = REGION_OF[template]
        if key is not None and key not in regions:
            regions[key] = _region_from_row(item, targets)
        owner = DIFFICULTY_OF.get(template, template)
        if template != "T1B_CLICK_GLOBAL":
            difficulty.setdefault(owner, str(item.row.get("difficulty", "")))
            version = version or item.row.get("dataset_version")
        if template == CUE_TEMPLATE:
            cue_type = str(item.row.get("cue_type", cue_type))
    scene = SceneSpec(
        subset=subset, source=info.name, scene_index=_scene_index(first, info), scene_id=str(first.row["scene_id"]),
        split=str(_need(first, "split")), id_prefix=info.id_prefix, primitive_type=info.primitive_type,
        item_seed_base=info.item_seed_base, image_split=str(first.row.get("image_split", info.image_split)),
        rows=rows, cols=cols, cell_size=cell, font_size=first.row.get("font_size"),
        grid_size_profile=str(first.row.get("grid_size_profile", "")), target_cells=cells,
        pair=AssetPair(source=info.name, majority="", target="", pair_key=str(first.row.get("pair_key", "")),
                       row_fields=subset_fields(first.row)),
        regions=regions, cue_type=cue_type, difficulty=difficulty, difficulty_inputs={},
        dataset_version=str(version or first.row.get("dataset_version", "")),
    )
    return ReplayScene(scene, tuple(items))


def group_scenes(items: Iterable[InputRow]) -> list[ReplayScene]:
    """Rows grouped by (subset, scene_id), scenes in subset order then scene index."""
    groups: dict[tuple[str, str], list[InputRow]] = {}
    for item in items:
        key = (str(_need(item, "rose_subset")), str(_need(item, "scene_id")))
        groups.setdefault(key, []).append(item)
    scenes = [rebuild_scene(g) for g in groups.values()]
    order = {s: i for i, s in enumerate(vocab.SUBSET_ORDER)}
    return sorted(scenes, key=lambda s: (order.get(s.scene.subset, len(order)), s.scene.scene_index))


# ------------------------------------------------------------------------- rows


def derive_row(scene: SceneSpec, item: InputRow) -> dict[str, Any]:
    """Our template's row for the released row's template, region and scene (no replay fields)."""
    template = vocab.canonical_template(str(item.row["task_template"]))
    base = base_image_record(scene)
    cue = cue_image_record(scene) if CUE_TEMPLATE in scene.regions else base
    row = task_row(scene, template, base, cue)
    row.pop("difficulty_inputs", None)
    row["dataset_version"] = item.row.get("dataset_version", row["dataset_version"])  # recorded label
    return row


def compare_row(released: Mapping[str, Any], derived: Mapping[str, Any], scene_id: str,
                where: str) -> list[Inconsistency]:
    """Field-by-field differences (missing on either side included; key order ignored)."""
    item_id = str(released.get("item_id", derived.get("item_id", "?")))
    out = []
    missing = object()
    for key in list(derived) + [k for k in released if k not in derived and k not in REPLAY_FIELDS]:
        a, b = released.get(key, missing), derived.get(key, missing)
        if a != b or type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            out.append(Inconsistency(scene_id, item_id, where, key, None if a is missing else a,
                                     None if b is missing else b))
    return out


# ------------------------------------------------------------------------- assets


@dataclass(frozen=True)
class Substitution:
    """One asset of a scene: what v0.1 asked for, what we used, how close, why."""

    what: str
    asked: str
    used: str
    kind: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"what": self.what, "asked": self.asked, "used": self.used, "kind": self.kind, "why": self.why}


@dataclass(frozen=True)
class Resolved:
    """A renderable pair for a scene, its substitutions, and a reason when it cannot be drawn."""

    pair: AssetPair | None
    substitutions: tuple[Substitution, ...]
    problem: str = ""


@dataclass(frozen=True)
class ReplayOptions:
    """Replay knobs: ``pixel_assets`` a folder of the original pixel-art files (optional)."""

    pixel_assets: str | None = None
    render: bool = True
    render_only: frozenset[str] | None = None  # scene ids to render (None: all)
    cue: CueSettings = field(default_factory=CueSettings)
    png_compress_level: int = 1


Resolver = Callable[[SceneSpec, Mapping[str, Any], ReplayOptions], Resolved]
RESOLVERS: Registry[Resolver] = Registry("replay asset resolver")


def replay_manifest() -> dict[str, Any]:
    """The v0.1 asset mapping (``assets_manifest/replay_v0_1.json``)."""
    return load_manifest(MANIFEST)


@lru_cache(maxsize=1)
def _faces() -> dict[str, FontFace]:
    faces = {f.name: f for f in manifest_faces()}
    for entry in replay_manifest()["extra_faces"]:
        faces[entry["name"]] = face_from_entry(entry)
    return faces


@RESOLVERS.register("glyph")
def _glyph(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    fields = scene.pair.row_fields
    asked = str(fields.get("font_name", ""))
    entry = manifest["fonts"].get(asked)
    if entry is None:
        return Resolved(None, (), f"font_name {asked!r} has no entry in assets_manifest/{MANIFEST}.json")
    face = _faces()[entry["face"]]
    sub = Substitution("font", asked, face.name, entry["kind"], entry["why"])
    majority, target = str(fields["background_char"]), str(fields["target_char"])
    for char in majority + target:  # v0.1 has one two-character word pair (CHSCENE_000158)
        check = check_glyph(face, char, scene.cell_size)
        if not check.ok:
            return Resolved(None, (sub,), f"{face.name} (for {asked}) cannot draw {char} ({check.reason()})")
    pair = AssetPair(source="glyph", majority=majority, target=target, pair_key=scene.pair.pair_key,
                     row_fields=fields, render={"face": face.to_json()})
    return Resolved(pair, (sub,))


@lru_cache(maxsize=8)
def _vendor_index(vendor: str) -> dict[str, str]:
    from rose_gen.emoji_assets import vendor_index

    return vendor_index(vendor)


def _emoji_asset(vendor: str, key: str) -> dict[str, str] | None:
    from rose_gen.emoji_assets import asset_sha256, key_from_filename

    norm = key_from_filename(key)
    path = _vendor_index(vendor).get(norm)
    if path is None:
        return None
    return {"vendor": vendor, "key": norm, "path": path, "sha256": asset_sha256(vendor, path)}


def _emoji(scene: SceneSpec, manifest: Mapping[str, Any], keys: tuple[str, str],
           styles: tuple[str, str]) -> Resolved:
    specs, subs = {}, []
    for role, key, style in zip(("majority", "target"), keys, styles, strict=True):
        entry = manifest["emoji_styles"].get(style)
        if entry is None:
            return Resolved(None, tuple(subs), f"emoji style {style!r} has no entry in assets_manifest/{MANIFEST}.json")
        spec = _emoji_asset(entry["vendor"], key)
        if spec is None:
            return Resolved(None, tuple(subs), f"{entry['vendor']} has no drawing of emoji {key}")
        specs[role] = spec
        subs.append(Substitution(f"{role} emoji", f"{style}:{key}", f"{entry['vendor']}:{spec['path']}",
                                 entry["kind"], entry["why"]))
    pair = AssetPair(source=scene.source, majority=keys[0], target=keys[1], pair_key=scene.pair.pair_key,
                     row_fields=scene.pair.row_fields, render=specs)
    return Resolved(pair, tuple(subs))


@RESOLVERS.register("emoji_style")
def _emoji_style(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    f = scene.pair.row_fields
    key = str(f["unicode_key"])
    return _emoji(scene, manifest, (key, key), (str(f["majority_style"]), str(f["target_style"])))


def _style_of(path: Any, default: str = "twemoji_svg") -> str:
    return re.split(r"[\\/]", str(path))[0] if path else default


@RESOLVERS.register("emoji_content")
def _emoji_content(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    f = scene.pair.row_fields
    return _emoji(scene, manifest, (str(f["background_unicode"]), str(f["target_unicode"])),
                  (_style_of(f.get("background_path")), _style_of(f.get("target_path"))))


def _pick(pool: Sequence[AssetPair], pair_key: str) -> AssetPair:
    """A stand-in chosen by a stable hash of the v0.1 pair key (independent of input order)."""
    digest = int(hashlib.sha256(pair_key.encode("utf-8")).hexdigest()[:12], 16)
    return pool[digest % len(pool)]


@lru_cache(maxsize=4)
def _procedural_pool(source: str) -> tuple[AssetPair, ...]:
    subset_sources()
    return tuple(SOURCES.get(source).pool({"sprites": ["procedural"]}))


def _procedural_stand_in(scene: SceneSpec, what: str, entry: Mapping[str, Any]) -> Resolved:
    """A procedural pair of the scene's source standing in for its v0.1 sprite(s), picked by pair_key."""
    key = scene.pair.pair_key
    stand_in = _pick(_procedural_pool(scene.source), key)
    pair = AssetPair(source=scene.source, majority=stand_in.majority, target=stand_in.target, pair_key=key,
                     row_fields=scene.pair.row_fields, render=stand_in.render)
    return Resolved(pair, (Substitution(what, key, stand_in.pair_key, entry["kind"], entry["why"]),))


@RESOLVERS.register("pixel_edit")
def _pixel_edit(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    from rose_gen import pixel_assets as px
    from rose_gen.sources.pixel_edit import EDITED_SUFFIX

    entry = manifest["pixel"][scene.subset]
    name = scene.pair.pair_key
    folder = Path(options.pixel_assets) if options.pixel_assets else None
    if folder is not None and (folder / name).is_file():
        pixels = px.load_user_sprite(folder, name)
        planned = px.plan_edit(pixels, px.edit_rng(0, f"user-{name}"))
        if planned is None:
            return Resolved(None, (), f"{folder / name}: no local edit is visible at {px.MIN_CELL_SIZE} px")
        render = {"library": "user", "folder": str(folder), "file": name, "edit": planned.edit.to_json()}
        pair = AssetPair(source="pixel_edit", majority=name, target=name + EDITED_SUFFIX, pair_key=name,
                         row_fields=scene.pair.row_fields, render=render)
        why = "original base file from --pixel_assets; the exception is our verified local edit (v0.1's edit is not recorded)"
        return Resolved(pair, (Substitution("pixel sprite", name, f"{folder / name} + our edit",
                                            entry["user_folder_kind"], why),))
    return _procedural_stand_in(scene, "pixel sprite", entry)


@RESOLVERS.register("pixel_content")
def _pixel_content(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    from rose_gen import pixel_assets as px

    entry = manifest["pixel"][scene.subset]
    key = scene.pair.pair_key
    folder = Path(options.pixel_assets) if options.pixel_assets else None
    if folder is not None:
        for i in (m.start() for m in re.finditer("__", key)):
            a, b = key[:i], key[i + 2:]
            if (folder / a).is_file() and (folder / b).is_file():
                px.load_user_sprite(folder, a)
                px.load_user_sprite(folder, b)
                render = {"a": {"library": "user", "folder": str(folder), "file": a},
                          "b": {"library": "user", "folder": str(folder), "file": b}}
                pair = AssetPair(source="pixel_content", majority=a, target=b, pair_key=key,
                                 row_fields=scene.pair.row_fields, render=render)
                why = "original files from --pixel_assets; the first name of pair_key is the majority (not recorded in v0.1)"
                return Resolved(pair, (Substitution("pixel pair", key, f"{folder / a} / {folder / b}",
                                                    entry["user_folder_kind"], why),))
    return _procedural_stand_in(scene, "pixel pair", entry)


def resolve_assets(scene: SceneSpec, options: ReplayOptions, manifest: Mapping[str, Any] | None = None) -> Resolved:
    """The renderable pair of a rebuilt scene per the replay manifest (never raises for a bad asset)."""
    manifest = replay_manifest() if manifest is None else manifest
    try:
        return RESOLVERS.get(scene.source)(scene, manifest, options)
    except (AssetError, KeyError) as exc:
        return Resolved(None, (), f"asset not resolvable: {exc}")


def scene_kind(substitutions: Sequence[Substitution]) -> str:
    """The furthest kind among a scene's substitutions (exact < same_design < stand_in)."""
    return max((s.kind for s in substitutions), key=KINDS.index, default="exact")


# ------------------------------------------------------------------------- render


@dataclass(frozen=True)
class RenderedReplay:
    """One scene's images by release path, its status and the tile visibility measured."""

    images: dict[str, bytes]
    status: str
    visible: bool | None = None


# A cell counts as visibly different when its luminance differs (rose_gen.visibility) or,
# for colour-only changes that luminance misses (an orange vs a blue diamond), when at least
# COLOUR_MIN_FRACTION of its pixels move by more than COLOUR_LEVEL in some RGB channel.
COLOUR_LEVEL = 48
COLOUR_MIN_FRACTION = 0.01


def visibly_differs(a: Image.Image | np.ndarray, b: Image.Image | np.ndarray) -> bool:
    """Luminance visibility of :mod:`rose_gen.visibility`, or a clear colour change."""
    if is_visible(tile_difference(a, b)):
        return True
    ra = np.asarray(a.convert("RGB") if isinstance(a, Image.Image) else a, dtype=np.int16)
    rb = np.asarray(b.convert("RGB") if isinstance(b, Image.Image) else b, dtype=np.int16)
    return float(np.mean(np.abs(ra - rb).max(axis=-1) > COLOUR_LEVEL)) >= COLOUR_MIN_FRACTION


DEFAULT_CUE = "OUTLINE_BOX"


def cue_style(scene: SceneSpec) -> tuple[str, Substitution | None]:
    """The overlay we draw for the scene's cue_type (ours when v0.1 names one we lack)."""
    if scene.cue_type in CUE_OVERLAYS:
        return scene.cue_type, None
    return DEFAULT_CUE, Substitution("cue style", scene.cue_type, DEFAULT_CUE, "stand_in",
                                     f"cue_type {scene.cue_type!r} is not one of our overlays "
                                     f"({', '.join(CUE_OVERLAYS.names())})")


def render_replay(scene: SceneSpec, pair: AssetPair, options: ReplayOptions) -> RenderedReplay:
    """Base image (and cue image when the T4 rectangle is known) drawn by the scene's source."""
    source = SOURCES.get(scene.source)
    majority = source.render_tile(pair, "majority", scene.cell_size)
    target = source.render_tile(pair, "target", scene.cell_size)
    visible = visibly_differs(majority, target)
    base_rec = base_image_record(scene)
    if CUE_TEMPLATE in scene.regions:
        p = scene.regions[CUE_TEMPLATE].params
        rect = (int(p["r1"]), int(p["r2"]), int(p["c1"]), int(p["c2"]))
        base, cue = render_grid_images(majority, target, rows=scene.rows, cols=scene.cols,
                                       cell_size=scene.cell_size, target_cells=scene.target_cells,
                                       cue_rect=rect, cue_type=cue_style(scene)[0], cue=options.cue)
        images = {base_rec.path: encode_png(base, options.png_compress_level),
                  cue_image_record(scene).path: encode_png(cue, options.png_compress_level)}
        return RenderedReplay(images, "rendered", visible)
    maj = tile_array(majority, scene.cell_size, "majority tile")
    tgt = tile_array(target, scene.cell_size, "target tile")
    base = compose_grid(maj, tgt, scene.rows, scene.cols, scene.target_cells)
    return RenderedReplay({base_rec.path: encode_png(base, options.png_compress_level)},
                          "rendered_base_only (no T4 row names the cue rectangle)", visible)


# ------------------------------------------------------------------------- replay


@dataclass
class SceneOutcome:
    """Everything the replay learnt about one scene."""

    scene: SceneSpec
    rows: list[dict[str, Any]]  # derived rows with replay fields, input order
    inconsistencies: list[Inconsistency]
    substitutions: tuple[Substitution, ...]
    kind: str
    images: dict[str, bytes]
    status: str
    visible: bool | None


def replay_scene(rs: ReplayScene, options: ReplayOptions, manifest: Mapping[str, Any]) -> SceneOutcome:
    """Re-derive and compare every row of one scene; render it unless told not to."""
    scene = rs.scene
    rows, problems = [], []
    for item in rs.rows:
        derived = derive_row(scene, item)
        problems.extend(compare_row(item.row, derived, scene.scene_id, item.where))
        rows.append(derived)
    resolved = resolve_assets(scene, options, manifest)
    cue_sub = cue_style(scene)[1] if CUE_TEMPLATE in scene.regions else None
    if cue_sub is not None:
        resolved = Resolved(resolved.pair, (*resolved.substitutions, cue_sub), resolved.problem)
    images: dict[str, bytes] = {}
    visible = None
    if resolved.pair is None:
        status = f"not_rendered: {resolved.problem}"
    elif not options.render or (options.render_only is not None and scene.scene_id not in options.render_only):
        status = "not_rendered: rendering not requested"
    else:
        out = render_replay(scene, resolved.pair, options)
        images, status, visible = out.images, out.status, out.visible
    subs = [s.to_json() for s in resolved.substitutions]
    for row in rows:
        row["replay_substitutions"] = subs
        row["replay_image_status"] = status
    return SceneOutcome(scene, rows, problems, resolved.substitutions, scene_kind(resolved.substitutions),
                        images, status, visible)


def replay_rows(items: Sequence[InputRow], options: ReplayOptions) -> list[SceneOutcome]:
    """Replay already-read rows (pure apart from reading asset files)."""
    manifest = replay_manifest()
    return [replay_scene(rs, options, manifest) for rs in group_scenes(items)]


def table_entry(s: Substitution) -> tuple[str, str, str]:
    """(asked, used, kind) at the level of the substitution table: font names, emoji styles and
    vendors (``twemoji_svg`` -> ``twemoji``), pixel files as one class per subset."""
    if s.what.endswith("emoji"):
        return s.asked.split(":")[0], s.used.split(":")[0], s.kind
    if s.what.startswith("pixel"):
        return s.what, "procedural stand-in" if s.kind == "stand_in" else "--pixel_assets file", s.kind
    return s.asked, s.used, s.kind


def summarize(outcomes: Sequence[SceneOutcome]) -> dict[str, Any]:
    """Counts per subset and kind, the font/style table, inconsistencies and unrendered scenes."""
    kinds: dict[str, dict[str, int]] = {}
    assets: dict[tuple[str, str, str, str], int] = {}
    for o in outcomes:
        per = kinds.setdefault(o.scene.subset, dict.fromkeys(KINDS, 0))
        per[o.kind] += 1
        for s in o.substitutions:
            k = (o.scene.subset, *table_entry(s))
            assets[k] = assets.get(k, 0) + 1
    totals = dict.fromkeys(KINDS, 0)
    for per in kinds.values():
        for k, v in per.items():
            totals[k] += v
    return {
        "scenes": len(outcomes),
        "rows": sum(len(o.rows) for o in outcomes),
        "scene_kinds": {"total": totals, **kinds},
        "assets": [{"subset": s, "asked": a, "used": u, "kind": k, "uses": n}
                   for (s, a, u, k), n in sorted(assets.items())],
        "inconsistencies": [i.to_json() for o in outcomes for i in o.inconsistencies],
        "not_rendered": [{"scene_id": o.scene.scene_id, "status": o.status} for o in outcomes
                         if o.status.startswith("not_rendered") and "not requested" not in o.status],
        "invisible_exceptions": [{"scene_id": o.scene.scene_id, "why": invisible_reason(o)}
                                 for o in outcomes if o.visible is False],
        "recorded_fields": list(RECORDED_FIELDS),
    }


def invisible_reason(o: SceneOutcome) -> str:
    """Why a scene's exception tile does not differ visibly from its majority tile."""
    f = o.scene.pair.row_fields
    a, b = f.get("background_char"), f.get("target_char")
    if isinstance(a, str) and isinstance(b, str) and a != b and \
            unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return (f"v0.1 pair {a} U+{ord(a[0]):04X} / {b} U+{ord(b[0]):04X} is canonically equivalent "
                "(NFC-identical): the two characters draw the same glyph")
    used = ", ".join(s.used for s in o.substitutions)
    return f"majority and exception tiles look alike at {o.scene.cell_size} px with {used}"


# ------------------------------------------------------------------------- audit


def cell_array(image: np.ndarray, rows: int, cols: int, cell: int) -> np.ndarray:
    """(rows, cols, cell, cell, 3) view of a grid image."""
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def odd_cells(image: np.ndarray, rows: int, cols: int, cell: int) -> list[list[int]]:
    """1-based cells that differ visibly from the majority tile (per-pixel median of all cells).

    Cells identical to the median tile are skipped in numpy; the rest are judged with
    :func:`visibly_differs`.
    """
    cells = cell_array(image, rows, cols, cell)
    flat = cells.reshape(rows * cols, cell, cell, 3)
    majority = np.median(flat, axis=0).astype(np.uint8)
    diff = np.abs(flat.astype(np.int16) - majority.astype(np.int16)).reshape(rows * cols, -1).max(axis=1)
    out = []
    for idx in np.flatnonzero(diff > 8):
        if visibly_differs(flat[idx], majority):
            out.append([int(idx // cols) + 1, int(idx % cols) + 1])
    return out


def audit_scene(rs: ReplayScene, images_dir: Path) -> dict[str, Any]:
    """Are the original base image's odd cells where the metadata says? (one scene)"""
    scene = rs.scene
    rel = base_image_record(scene).path
    base_rows = [i.row for i in rs.rows if i.row.get("image_cue_type", "NONE") == "NONE" and "image" in i.row]
    listed = str(base_rows[0]["image"]) if base_rows else rel
    candidates = [images_dir / listed, images_dir / rel, images_dir / Path(listed).name]
    path = next((p for p in candidates if p.is_file()), None)
    record: dict[str, Any] = {"scene_id": scene.scene_id, "image": listed,
                              "metadata_cells": sorted([list(c) for c in scene.target_cells])}
    if path is None:
        return {**record, "status": "image_missing"}
    with Image.open(path) as im:
        arr = np.asarray(im.convert("RGB"))
    want = (scene.height, scene.width)
    if arr.shape[:2] != want:
        return {**record, "status": "size_mismatch", "image_size": [arr.shape[1], arr.shape[0]],
                "expected_size": [scene.width, scene.height]}
    found = odd_cells(arr, scene.rows, scene.cols, scene.cell_size)
    meta = {tuple(c) for c in scene.target_cells}
    got = {tuple(c) for c in found}
    return {**record, "status": "match" if got == meta else "mismatch", "detected_cells": sorted(found),
            "missing": sorted([list(c) for c in meta - got]), "extra": sorted([list(c) for c in got - meta])}


def audit_images(items: Sequence[InputRow], images_dir: Path) -> list[dict[str, Any]]:
    """:func:`audit_scene` for every scene of the rows."""
    if not Path(images_dir).is_dir():
        raise ReplayError(f"{images_dir} is not a folder; pass the folder holding images/<subset>/<id>.png")
    return [audit_scene(rs, Path(images_dir)) for rs in group_scenes(items)]
