"""Resolving a rebuilt scene's assets to installable ones (``assets_manifest/replay_v0_1.json``).

One resolver per visual source (registry :data:`RESOLVERS`). Each returns the renderable pair,
the :class:`Substitution` of every asset (what was asked, what is used, its kind ``exact`` /
``same_design`` / ``stand_in`` and why), or the reason the scene cannot be drawn. Fonts are
chosen by :mod:`rose_gen.assets.font_match` among the installed faces that draw every character of
the scene; a pair that draws the same glyph twice in the chosen face is a defect of the scene.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from assets_manifest import load_manifest
from rose_eval.registry import Registry
from rose_gen.assets.font_match import (
    KINDS,
    Candidate,
    FontRequest,
    choose_face,
    request_for_face,
    request_from_entry,
)
from rose_gen.assets.fonts import FONT_SCALE, all_manifest_faces, face_from_entry, glyph_ink
from rose_gen.check.replay.fields import MANIFEST, FieldProblem, NotDerivable, emoji_path
from rose_gen.check.replay.inputs import ReplayOptions
from rose_gen.check.replay.scenes import subset_sources
from rose_gen.core.schema import SceneSpec
from rose_gen.sources import SOURCES, AssetError, AssetPair


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
    """A renderable pair for a scene, its substitutions, a reason when it cannot be drawn, and
    defects of the scene found while resolving (the same glyph drawn twice)."""

    pair: AssetPair | None
    substitutions: tuple[Substitution, ...]
    problem: str = ""
    defects: tuple[FieldProblem, ...] = ()


Resolver = Callable[[SceneSpec, Mapping[str, Any], ReplayOptions], Resolved]
RESOLVERS: Registry[Resolver] = Registry("replay asset resolver")


def replay_manifest() -> dict[str, Any]:
    """The v0.1 asset mapping (``assets_manifest/replay_v0_1.json``)."""
    return load_manifest(MANIFEST)


# ------------------------------------------------------------------ fonts


@lru_cache(maxsize=1)
def font_candidates() -> tuple[Candidate, ...]:
    """Every face of the fonts manifest and the replay manifest's extra faces, in ``face_styles`` order."""
    manifest = replay_manifest()
    faces = {f.name: f for f in all_manifest_faces()}
    faces.update({e["name"]: face_from_entry(e) for e in manifest["extra_faces"]})
    return tuple(Candidate(faces[s["face"]], s["class"], s.get("lineage"))
                 for s in manifest["face_styles"] if s["face"] in faces)


def font_request(name: str, manifest: Mapping[str, Any]) -> FontRequest | None:
    """The request for a row's ``font_name``: a v0.1 font of the manifest, or one of our faces."""
    entry = manifest["fonts"].get(name)
    if entry is not None:
        return request_from_entry(name, entry)
    own = next((c for c in font_candidates() if c.face.name == name), None)
    return request_for_face(own) if own is not None else None


def _same_glyph(face: Any, a: str, b: str, cell_size: int) -> bool:
    size = int(cell_size * FONT_SCALE)
    ink_a, ink_b = glyph_ink(face, a, size), glyph_ink(face, b, size)
    return ink_a.shape == ink_b.shape and bool(np.array_equal(ink_a, ink_b))


@RESOLVERS.register("glyph")
def _glyph(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    fields = scene.pair.row_fields
    asked = str(fields.get("font_name", ""))
    majority, target = str(fields["background_char"]), str(fields["target_char"])
    request = font_request(asked, manifest)
    if request is None:
        return Resolved(None, (), f"font_name {asked!r} is neither a v0.1 font of assets_manifest/{MANIFEST}.json "
                                  "nor an installed face")
    choice = choose_face(request, majority + target, scene.cell_size, font_candidates(),
                         manifest["class_order"])
    if choice.face is None:
        return Resolved(None, (), f"cannot draw: {choice.why}")
    sub = Substitution("font", asked, choice.face.name, choice.kind, choice.why)
    defects = ()
    if majority != target and _same_glyph(choice.face, majority, target, scene.cell_size):
        defects = (FieldProblem("target_char", target, None,
                                f"{majority} and {target} draw the same glyph in {choice.face.name}", "defect"),)
    pair = AssetPair(source="glyph", majority=majority, target=target, pair_key=scene.pair.pair_key,
                     row_fields=fields, render={"face": choice.face.to_json()})
    return Resolved(pair, (sub,), defects=defects)


# ------------------------------------------------------------------ emoji


@lru_cache(maxsize=8)
def _vendor_index(vendor: str) -> dict[str, str]:
    from rose_gen.assets.emoji.vendors import vendor_index

    return vendor_index(vendor)


def _emoji_asset(vendor: str, key: str) -> dict[str, str] | None:
    from rose_gen.assets.emoji.artwork import asset_sha256
    from rose_gen.assets.emoji.catalogue import key_from_filename

    norm = key_from_filename(key)
    path = _vendor_index(vendor).get(norm)
    if path is None:
        return None
    return {"vendor": vendor, "key": norm, "path": path, "sha256": asset_sha256(vendor, path)}


def _emoji(scene: SceneSpec, manifest: Mapping[str, Any], path_fields: tuple[str, str]) -> Resolved:
    specs, subs, keys = {}, [], []
    for role, path_field in zip(("majority", "target"), path_fields, strict=True):
        try:
            recorded = emoji_path(scene.pair.row_fields[path_field])
        except NotDerivable as exc:
            return Resolved(None, tuple(subs), str(exc))
        entry = manifest["emoji_styles"].get(recorded.style)
        if entry is None:
            return Resolved(None, tuple(subs), f"emoji style {recorded.style!r} has no entry in "
                                               f"assets_manifest/{MANIFEST}.json")
        spec = _emoji_asset(entry["vendor"], recorded.key)
        if spec is None:
            return Resolved(None, tuple(subs), f"{entry['vendor']} has no drawing of emoji {recorded.key}")
        specs[role] = spec
        keys.append(recorded.key)
        subs.append(Substitution(f"{role} emoji", f"{recorded.style}:{recorded.stem}",
                                 f"{entry['vendor']}:{spec['path']}", entry["kind"], entry["why"]))
    if scene.source == "emoji_style" and all(sub.kind == "exact" for sub in subs):
        # A release made by rose-gen: its EmojiStyle tiles were fitted to one ink-box area.
        from rose_gen.assets.emoji.manifest import identity_records
        from rose_gen.sources.emoji_common import pair_fit

        record = identity_records().get(specs["majority"]["key"])
        if record is not None and record.get("art_fit"):
            share = pair_fit(record, (specs["majority"]["vendor"], specs["target"]["vendor"]))
            specs = {role: {**spec, "fit": share} for role, spec in specs.items()}
    pair = AssetPair(source=scene.source, majority=keys[0], target=keys[1], pair_key=scene.pair.pair_key,
                     row_fields=scene.pair.row_fields, render=specs)
    return Resolved(pair, tuple(subs))


@RESOLVERS.register("emoji_style")
def _emoji_style(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    return _emoji(scene, manifest, ("background_path", "target_path"))


@RESOLVERS.register("emoji_content")
def _emoji_content(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    return _emoji(scene, manifest, ("background_path", "target_path"))


# ------------------------------------------------------------------ pixel art


def _pick(pool: Sequence[AssetPair], pair_key: str) -> AssetPair:
    """A stand-in chosen by a stable hash of the v0.1 pair key (independent of input order)."""
    digest = int(hashlib.sha256(pair_key.encode("utf-8")).hexdigest()[:12], 16)
    return pool[digest % len(pool)]


@lru_cache(maxsize=8)
def _library_pool(source: str, sprites: str) -> tuple[AssetPair, ...]:
    subset_sources()
    return tuple(SOURCES.get(source).pool({"sprites": [sprites]}))


def _own_sprite(scene: SceneSpec) -> Resolved | None:
    """Our release's pair, looked up in our sprite library by pair_key (None: not one of ours)."""
    fields = scene.pair.row_fields
    kind = fields.get("sprite_source")
    if kind not in ("crawl", "cdda", "procedural"):
        return None
    found = next((p for p in _library_pool(scene.source, str(kind)) if p.pair_key == scene.pair.pair_key), None)
    if found is None:
        return None
    swap = (fields.get("majority_variant") == "edited" if scene.source == "pixel_edit"
            else fields.get("background_sprite") == found.target)
    majority, target = (found.target, found.majority) if swap else (found.majority, found.target)
    pair = replace(found, majority=majority, target=target, row_fields=fields)
    return Resolved(pair, (Substitution("pixel pair", scene.pair.pair_key, f"{kind}:{found.pair_key}", "exact",
                                        f"the {kind} sprite(s) of our library named by pair_key"),))


def _procedural_stand_in(scene: SceneSpec, what: str, entry: Mapping[str, Any]) -> Resolved:
    """A procedural pair of the scene's source standing in for its v0.1 sprite(s), picked by pair_key."""
    key = scene.pair.pair_key
    stand_in = _pick(_library_pool(scene.source, "procedural"), key)
    pair = AssetPair(source=scene.source, majority=stand_in.majority, target=stand_in.target, pair_key=key,
                     row_fields=scene.pair.row_fields, render=stand_in.render)
    return Resolved(pair, (Substitution(what, key, stand_in.pair_key, entry["kind"], entry["why"]),))


@RESOLVERS.register("pixel_edit")
def _pixel_edit(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    from rose_gen.assets.pixel import sprite as px_sprite
    from rose_gen.assets.pixel import user as px_user
    from rose_gen.assets.pixel.edits import plan_named_edit
    from rose_gen.sources.pixel_edit import EDITED_SUFFIX

    entry = manifest["pixel"][scene.subset]
    name = scene.pair.pair_key
    folder = Path(options.pixel_assets) if options.pixel_assets else None
    if folder is not None and (folder / name).is_file():
        pixels = px_user.load_user_sprite(folder, name)
        planned = plan_named_edit(pixels, name)
        if planned is None:
            return Resolved(None, (), f"{folder / name}: no local edit is visible at {px_sprite.MIN_CELL_SIZE} px")
        render = {"library": "user", "folder": str(folder), "file": name, "edit": planned.edit.to_json()}
        pair = AssetPair(source="pixel_edit", majority=name, target=name + EDITED_SUFFIX, pair_key=name,
                         row_fields=scene.pair.row_fields, render=render)
        why = "original base file from --pixel_assets; the exception is our verified local edit (v0.1's edit is not recorded)"
        return Resolved(pair, (Substitution("pixel sprite", name, f"{folder / name} + our edit",
                                            entry["user_folder_kind"], why),))
    return _own_sprite(scene) or _procedural_stand_in(scene, "pixel sprite", entry)


@RESOLVERS.register("pixel_content")
def _pixel_content(scene: SceneSpec, manifest: Mapping[str, Any], options: ReplayOptions) -> Resolved:
    from rose_gen.assets.pixel import user as px_user

    entry = manifest["pixel"][scene.subset]
    key = scene.pair.pair_key
    folder = Path(options.pixel_assets) if options.pixel_assets else None
    if folder is not None:
        for i in (m.start() for m in re.finditer("__", key)):
            a, b = key[:i], key[i + 2:]
            if (folder / a).is_file() and (folder / b).is_file():
                px_user.load_user_sprite(folder, a)
                px_user.load_user_sprite(folder, b)
                render = {"a": {"library": "user", "folder": str(folder), "file": a},
                          "b": {"library": "user", "folder": str(folder), "file": b}}
                pair = AssetPair(source="pixel_content", majority=a, target=b, pair_key=key,
                                 row_fields=scene.pair.row_fields, render=render)
                why = "original files from --pixel_assets; the first name of pair_key is the majority (not recorded in v0.1)"
                return Resolved(pair, (Substitution("pixel pair", key, f"{folder / a} / {folder / b}",
                                                    entry["user_folder_kind"], why),))
    return _own_sprite(scene) or _procedural_stand_in(scene, "pixel pair", entry)


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
