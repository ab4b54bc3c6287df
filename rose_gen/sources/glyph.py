"""ROSE-ChineseGlyph: a confusable simplified-Chinese pair drawn in one verified face.

The pairs come from ``assets_manifest/glyph_pairs.json`` (mined and verified by
``assets_manifest/build/mine_glyph_pairs.py``), the faces from ``assets_manifest/fonts.json``.
The pool holds one entry per undirected pair (so a release never reuses a pair), each
assigned one face in which the pair was verified (both glyphs pass the glyph checks of
:mod:`rose_gen.assets.fonts`, the two tiles differ perceptually at 42 px); faces are assigned
round-robin in pool order so every face is used about equally. ``orient`` draws the
direction, so both directions occur.

Options (``pool(options)``):

- ``font_pool``: which faces of ``fonts.json`` to draw with, an explicit, recorded choice:
  ``debian`` (default; the 24 faces of the Debian font packages) or ``pip`` (Noto Sans CJK SC
  from the PyPI package ``manimgx-fonts-cjk`` at explicit weights, for users without apt;
  verified in ``glyph_pairs_pip.json``). Rows carry the face in ``font_name``;
- ``faces``: face names of that pool to use (default: all of them);
- ``tiers``: similarity tiers to use (default: all, ``high``/``medium``/``low``);
- ``visibility``: ``{"min_changed_fraction": .., "max_ssim": ..}`` stricter than the defaults
  of :func:`rose_gen.assets.visibility.is_visible`;
- ``reverify``: re-render and re-check every (pair, face) instead of trusting the manifest's
  recorded measurements (automatic when the installed FreeType differs from the recorded one).

Fonts are checksum-checked against the manifest before use; a missing or changed font file
stops with one line naming the file and the package (Debian or PyPI) that provides it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, features

from assets_manifest import load_manifest, manifest_path, sha256_file
from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen.assets.fonts import (
    DEFAULT_FONT_POOL,
    FONT_POOLS,
    FontFace,
    all_manifest_faces,
    check_glyph,
    face_from_entry,
    manifest_faces,
    render_glyph_tile,
    resolve_face,
)
from rose_gen.assets.fonts import licences as font_licences
from rose_gen.assets.visibility import is_visible, tile_difference
from rose_gen.sources.base import ROLES, SOURCES, AssetError, AssetPair, SourceInfo

INFO = SourceInfo(name="glyph", subset="ROSE-ChineseGlyph", id_prefix=SUBSET_ID_PREFIX["ROSE-ChineseGlyph"], primitive_type="CHINESE_GLYPH",
                  item_seed_base=202600000000, layout_family="glyph_emoji")

TIERS = ("high", "medium", "low")
VISIBILITY_CELL = 42  # the smallest cell size of any layout profile
DEFAULT_VISIBILITY = {"min_changed_fraction": 0.005, "max_ssim": 0.995}
DEFAULT_OPTIONS: dict[str, Any] = {"font_pool": DEFAULT_FONT_POOL, "faces": None, "tiers": None, "visibility": {},
                                   "reverify": False}
# Manifest holding the pair verification of the pip font pool (the Debian pool's is in glyph_pairs.json).
PIP_VERIFICATION = "glyph_pairs_pip"
# Font pool -> manifest with its own pair verification (None: the ``faces`` of glyph_pairs.json).
POOL_VERIFICATION: dict[str, str | None] = {"debian": None, "pip": PIP_VERIFICATION}


@dataclass(frozen=True)
class PairCheck:
    """Verification of one pair in one face at one cell size."""

    ok: bool
    reason: str  # '' when ok
    changed_fraction: float = 0.0
    ssim: float = 1.0


def verify_pair(face: FontFace, a: str, b: str, cell_size: int = VISIBILITY_CELL,
                visibility: Mapping[str, float] | None = None) -> PairCheck:
    """Both glyphs pass :func:`rose_gen.assets.fonts.check_glyph` and their tiles differ visibly."""
    for c in (a, b):
        check = check_glyph(face, c, cell_size)
        if not check.ok:
            return PairCheck(False, f"{c}: {check.reason()}")
    diff = tile_difference(render_glyph_tile(face, a, cell_size), render_glyph_tile(face, b, cell_size))
    visible = is_visible(diff, **{**DEFAULT_VISIBILITY, **dict(visibility or {})})
    return PairCheck(visible, "" if visible else "below visibility threshold",
                     round(diff.changed_fraction, 4), round(diff.ssim, 4))


def glyph_fields(a: str, b: str, majority: str, face_name: str, tier: str) -> dict[str, Any]:
    """v0.1 ROSE-ChineseGlyph row fields for the undirected pair (a, b) with ``majority`` first."""
    target = b if majority == a else a
    key = "__".join(sorted((a, b)))
    return {
        "background_char": majority,
        "target_char": target,
        "source_pair": sorted((a, b)),
        "source_group": sorted((a, b)),
        "pair_direction": f"{majority}_majority_{target}_target",
        "undirected_pair_key": key,
        "pair_key": key,
        "font_name": face_name,
        "similarity_level": tier,
    }


def _options(options: Mapping[str, Any] | None, fonts_manifest: Mapping[str, Any]) -> dict[str, Any]:
    opts = {**DEFAULT_OPTIONS, **dict(options or {})}
    unknown = sorted(set(opts) - set(DEFAULT_OPTIONS))
    if unknown:
        raise AssetError(f"glyph: unknown option(s) {unknown}; known: {sorted(DEFAULT_OPTIONS)}")
    if opts["font_pool"] not in FONT_POOLS:
        raise AssetError(f"glyph: unknown font_pool {opts['font_pool']!r}; known: {', '.join(FONT_POOLS.names())}")
    face_names = [f.name for f in manifest_faces(fonts_manifest, opts["font_pool"])]
    for key, known in (("faces", face_names), ("tiers", TIERS)):
        bad = sorted(set(opts[key] or ()) - set(known))
        if bad:
            raise AssetError(f"glyph: unknown {key} {bad}; known: {', '.join(known)}")
    bad_vis = sorted(set(opts["visibility"] or {}) - set(DEFAULT_VISIBILITY))
    if bad_vis:
        raise AssetError(f"glyph: unknown visibility key(s) {bad_vis}; known: {sorted(DEFAULT_VISIBILITY)}")
    return opts


def build_pool(fonts_manifest: Mapping[str, Any], pairs_manifest: Mapping[str, Any],
               options: Mapping[str, Any] | None = None,
               pool_verification: Mapping[str, Any] | None = None) -> list[AssetPair]:
    """The verified pool from the manifests (see the module docstring); stable order.

    ``pool_verification`` is the pair verification of a font pool that has its own
    (``glyph_pairs_pip.json`` for ``pip``); without it, that pool is re-verified here.
    """
    opts = _options(options, fonts_manifest)
    all_faces = manifest_faces(fonts_manifest, opts["font_pool"])
    wanted = set(opts["faces"] or [f.name for f in all_faces])
    faces = [f for f in all_faces if f.name in wanted]
    for face in faces:
        resolve_face(face)
    tiers = set(opts["tiers"] or TIERS)
    thresholds = {**DEFAULT_VISIBILITY, **dict(opts["visibility"] or {})}
    own = POOL_VERIFICATION[opts["font_pool"]] is not None
    record = pool_verification if own else pairs_manifest
    recorded_ft = (record or {}).get("provenance", {}).get("freetype")
    reverify = bool(opts["reverify"]) or recorded_ft != features.version("freetype2")
    measurements = {k: v["faces"] for k, v in record["pairs"].items()} if own and not reverify else {}
    pool: list[AssetPair] = []
    for rec in pairs_manifest["pairs"]:
        if rec["tier"] not in tiers:
            continue
        a, b = rec["chars"]
        if reverify:
            usable = [f for f in faces if verify_pair(f, a, b, VISIBILITY_CELL, thresholds).ok]
        else:
            measured = measurements.get(rec["pair_key"], {}) if own else rec["faces"]
            usable = [f for f in faces if f.name in measured and _passes(measured[f.name], thresholds)]
        if not usable:
            continue
        face = _round_robin(faces, usable, len(pool))
        pool.append(AssetPair(
            source=INFO.name, majority=a, target=b, pair_key=f"{a}__{b}",
            row_fields=glyph_fields(a, b, a, face.name, rec["tier"]),
            render={"face": face.to_json(), "tier": rec["tier"], "font_pool": opts["font_pool"]},
            similarity=float(rec["score"]),
        ))
    return pool


def _passes(measured: Sequence[float], thresholds: Mapping[str, float]) -> bool:
    changed, ssim = measured
    return changed >= thresholds["min_changed_fraction"] and ssim <= thresholds["max_ssim"]


def _round_robin(faces: Sequence[FontFace], usable: Sequence[FontFace], slot: int) -> FontFace:
    """The face at ``slot`` in the round-robin over ``faces``, or the next usable one after it."""
    names = {f.name for f in usable}
    n = len(faces)
    return next(faces[(slot + i) % n] for i in range(n) if faces[(slot + i) % n].name in names)


def describe_pool(pool: Sequence[AssetPair], options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-safe record of the pool (sizes per tier and face, options) for release notes."""
    tiers: dict[str, int] = {}
    faces: dict[str, int] = {}
    for p in pool:
        tiers[p.render["tier"]] = tiers.get(p.render["tier"], 0) + 1
        faces[p.row_fields["font_name"]] = faces.get(p.row_fields["font_name"], 0) + 1
    opts = dict(options or {})
    return {"source": INFO.name, "font_pool": opts.get("font_pool", DEFAULT_FONT_POOL), "pairs": len(pool),
            "per_tier": dict(sorted(tiers.items())), "per_face": dict(sorted(faces.items())), "options": opts,
            "reduced": bool(opts.get("faces") or opts.get("tiers") or opts.get("visibility"))}


@lru_cache(maxsize=64)  # reuse is within a scene; a large cache only grows with the release
def _tile_pixels(face: FontFace, char: str, cell_size: int) -> bytes:
    return render_glyph_tile(face, char, cell_size).tobytes()


class GlyphSource:
    """The ROSE-ChineseGlyph visual source (see the module docstring)."""

    info = INFO

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        """Verified pairs (one face each) in manifest order: best mining score first."""
        font_pool = dict(options or {}).get("font_pool", DEFAULT_FONT_POOL)
        return build_pool(load_manifest("fonts"), load_manifest("glyph_pairs"), options,
                          current_pool_verification(font_pool) if font_pool in POOL_VERIFICATION else None)

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Draw which character is the majority (one draw from ``rng``)."""
        a, b = sorted((pair.majority, pair.target))
        majority, target = (b, a) if rng.random() < 0.5 else (a, b)
        fields = glyph_fields(a, b, majority, pair.row_fields["font_name"], pair.row_fields["similarity_level"])
        return AssetPair(source=pair.source, majority=majority, target=target, pair_key=pair.pair_key,
                         row_fields=fields, render=pair.render, similarity=pair.similarity)

    def in_scene(self, candidate: AssetPair, scene_pair: AssetPair) -> AssetPair | None:
        """``candidate`` (another pool pair sharing the scene's majority character) drawn in the
        scene's face, for a second exception identity (difficulty presets); None when that face
        fails :func:`verify_pair` for it (a missing glyph, or not visibly different)."""
        face = face_from_entry(scene_pair.render["face"])
        if not verify_pair(face, candidate.majority, candidate.target).ok:
            return None
        a, b = sorted((candidate.majority, candidate.target))
        fields = glyph_fields(a, b, candidate.majority, scene_pair.row_fields["font_name"],
                              candidate.row_fields["similarity_level"])
        return AssetPair(source=candidate.source, majority=candidate.majority, target=candidate.target,
                         pair_key=candidate.pair_key, row_fields=fields, render=scene_pair.render,
                         similarity=candidate.similarity)

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The role's character black on white, ink-centred, font size int(cell_size * 0.72)."""
        if role not in ROLES:
            raise ValueError(f"glyph: role must be one of {ROLES}, got {role!r}")
        char = pair.majority if role == "majority" else pair.target
        face = face_from_entry(pair.render["face"])
        return Image.frombytes("RGB", (cell_size, cell_size), _tile_pixels(face, char, cell_size))

    def licences(self, options: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Licence records of the font packages of the pool ``options`` select (LICENSES.md)."""
        return licences(options)

    def asset_versions(self, options: Mapping[str, Any] | None = None) -> dict[str, str]:
        """sha256 of the selected pool's face files and of its manifests (recorded in the release)."""
        return asset_versions(options)


def _selected_pool(options: Mapping[str, Any] | None) -> str | None:
    """The font pool ``options`` select; None (every pool) when no options are given."""
    return None if options is None else dict(options).get("font_pool", DEFAULT_FONT_POOL)


def licences(options: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Licence records of the font packages of the selected pool (every pool without options)."""
    return font_licences(pool=_selected_pool(options))


def current_pool_verification(font_pool: str) -> Mapping[str, Any] | None:
    """The font pool's own pair-verification manifest, or None when it has none, or when it was
    made from another ``glyph_pairs.json`` than the installed one (the pool is then re-verified)."""
    name = POOL_VERIFICATION[font_pool]
    if name is None or not manifest_path(name).is_file():
        return None
    data = load_manifest(name)
    made_from = data.get("provenance", {}).get("glyph_pairs_sha256")
    return data if made_from == sha256_file(manifest_path("glyph_pairs")) else None


def asset_versions(options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """``<package>:<file>#<face index>`` and ``assets_manifest:<name>.json`` -> sha256, sorted.

    The faces and manifests of the pool ``options`` select (of every pool without options).
    """
    pool = _selected_pool(options)
    faces = all_manifest_faces() if pool is None else manifest_faces(pool=pool)
    out = {f"{f.package}:{f.file}#{f.face_index}": f.sha256 for f in faces}
    verification = [PIP_VERIFICATION] if pool is None else [POOL_VERIFICATION.get(pool)]
    for name in ("fonts", "glyph_pairs", *filter(None, verification)):
        out[f"assets_manifest:{name}.json"] = sha256_file(manifest_path(name))
    return dict(sorted(out.items()))


SOURCE = SOURCES.add(INFO.name, GlyphSource())
