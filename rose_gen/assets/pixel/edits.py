"""Choosing and recording PixelEdit edits: local, off the cell border, visible, not popping out.

The kinds themselves are :mod:`rose_gen.assets.pixel.edit_kinds`. :func:`plan_edit` tries the
kinds in the order it is given (the builder puts the least-used kinds first so they are
balanced) and keeps the first draw that :func:`check_edit` accepts: (1) it changes
between :data:`~rose_gen.assets.pixel.edit_kinds.MIN_PIXELS` pixels and
:data:`~rose_gen.assets.pixel.edit_kinds.MAX_SHARE` of the ink, (2) every changed pixel lies
:data:`EDGE_MARGIN` source pixels away from the cell border (an edit there reads as part
of the neighbouring cell), (3) it clears the visibility thresholds at the smallest cell
(:func:`rose_gen.assets.pixel.library.clears_visibility`), and (4) it does not pop out: no
third-by-third block of the 120 px tile changes its mean colour by more than
:data:`POP_OUT_LIMIT` (:mod:`rose_gen.assets.pixel.metrics`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.edit_kinds import (
    EDIT_KINDS,
    KIND_PLANNERS,
    MAX_SHARE,
    MIN_PIXELS,
    EditSpec,
    apply_edit,
)
from rose_gen.assets.pixel.metrics import block_delta_e
from rose_gen.assets.visibility import tile_difference
from rose_gen.core.rng import seed_sequence

POP_OUT_LIMIT = 10.0  # the audit's pop-out line is 12; keep a margin
EDGE_MARGIN = 3  # no edit pixel this close (source pixels) to the canvas edge, i.e. the cell border


# ---------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlannedEdit:
    """A verified edit and what it measured at the smallest cell size."""

    edit: EditSpec
    changed_pixels: int
    changed_fraction: float
    ssim: float
    block_delta_e: float


def check_edit(rgba: np.ndarray, edit: EditSpec, *, cell_size: int = px_sprite.MIN_CELL_SIZE,
               margin: float = px_sprite.EDIT_MARGIN, pop_out: float = POP_OUT_LIMIT) -> PlannedEdit | None:
    """The edit's measurements when it is local, off the cell border (:data:`EDGE_MARGIN`),
    visible and does not pop out (else None)."""
    n_solid = int(px_sprite.solid_mask(rgba).sum())
    if not MIN_PIXELS <= edit.size <= max(MIN_PIXELS, int(np.ceil(MAX_SHARE * n_solid))):
        return None
    h, w = rgba.shape[:2]
    if any(not (EDGE_MARGIN <= y < h - EDGE_MARGIN and EDGE_MARGIN <= x < w - EDGE_MARGIN)
           for y, x, *_ in edit.pixels):
        return None  # at the cell border an edit reads as part of the neighbouring cell
    edited = apply_edit(rgba, edit)
    a, b = px_sprite.render_sprite(rgba, cell_size), px_sprite.render_sprite(edited, cell_size)
    diff = tile_difference(a, b)
    if not px_sprite.clears_visibility(diff, margin):
        return None
    worst = block_delta_e(np.asarray(a), np.asarray(b))
    if worst > pop_out:
        return None
    return PlannedEdit(edit, edit.size, round(diff.changed_fraction, 6), round(diff.ssim, 6), round(worst, 3))


def plan_edit(rgba: np.ndarray, rng: np.random.Generator, kinds: Sequence[str] = EDIT_KINDS, *,
              attempts: int = 12, cell_size: int = px_sprite.MIN_CELL_SIZE, margin: float = px_sprite.EDIT_MARGIN,
              pop_out: float = POP_OUT_LIMIT) -> PlannedEdit | None:
    """The first draw, trying ``kinds`` in order (``attempts`` each), that :func:`check_edit` accepts."""
    for kind in kinds:
        planner = KIND_PLANNERS[kind]
        for _ in range(attempts):
            edit = planner(rgba, rng)
            if edit is None:
                continue
            checked = check_edit(rgba, edit, cell_size=cell_size, margin=margin, pop_out=pop_out)
            if checked is not None:
                return checked
    return None


def kind_order(position: int, rng: np.random.Generator, used: Mapping[str, int] | None = None) -> tuple[str, ...]:
    """The order in which one sprite tries the kinds.

    Over a pool (``used``: how often each kind has been chosen so far) the least-used
    kinds come first, ties broken by rotating with ``position``, so kinds that succeed
    rarely get the first try until they catch up. Without ``used`` (a single sprite),
    kind ``position mod K`` comes first and the others follow in an order drawn from ``rng``.
    """
    k = len(EDIT_KINDS)
    if used is not None:
        return tuple(sorted(EDIT_KINDS, key=lambda kind: (used.get(kind, 0), (EDIT_KINDS.index(kind) - position) % k)))
    first = EDIT_KINDS[position % k]
    rest = [kind for kind in EDIT_KINDS if kind != first]
    return (first, *(rest[i] for i in rng.permutation(len(rest))))


def edit_rng(seed: int, sprite_id: str) -> np.random.Generator:
    """The generator for one sprite's edit draws (stable per sprite id)."""
    index = int.from_bytes(hashlib.sha256(sprite_id.encode()).digest()[:4], "little")
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, "ROSE-PixelEdit", "edit", index)))


def name_position(name: str) -> int:
    """A stable position for a sprite outside a built pool (a user's file), for :func:`kind_order`."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def plan_named_edit(rgba: np.ndarray, name: str, seed: int = 0) -> PlannedEdit | None:
    """The verified edit of a sprite outside the manifests (a user's file), seeded by its name."""
    rng = edit_rng(seed, f"user-{name}")
    return plan_edit(rgba, rng, kind_order(name_position(name), rng))


# ---------------------------------------------------------------------------- pool


def edited_pixels(render: Mapping[str, Any], edit: EditSpec) -> np.ndarray:
    """The edited copy of a render entry's sprite (cached), checked against ``edited_sha256`` if given."""
    return _edited_pixels(json.dumps(dict(render), sort_keys=True), edit)


@lru_cache(maxsize=4096)
def _edited_pixels(render_json: str, edit: EditSpec) -> np.ndarray:
    render = json.loads(render_json)
    arr = apply_edit(px.render_pixels(render), edit)
    expected = render.get("edited_sha256")
    if expected and px_sprite.pixel_sha256(arr) != expected:
        raise px_sprite.PixelAssetError(f"sprite {render.get('sprite')}: edited pixels do not match the manifest's "
                                 "edited_sha256; regenerate with assets_manifest/build/build_pixel.py")
    arr.setflags(write=False)
    return arr


def base_record(sprite_id: str, source: str, family: str, solid: int, planned: PlannedEdit,
                edited_sha256: str | None) -> dict[str, Any]:
    """One ``pixel_edit_bases.json`` record."""
    rec = {
        "sprite": sprite_id, "source": source, "family": family,
        "edit": planned.edit.to_json(), "changed_pixels": planned.changed_pixels,
        "edit_fraction": round(planned.changed_pixels / max(solid, 1), 6),
        "changed_fraction": planned.changed_fraction, "ssim": planned.ssim,
        "block_delta_e": planned.block_delta_e,
    }
    if edited_sha256 is not None:
        rec["edited_sha256"] = edited_sha256
    return rec


def edit_bases(sprites: Sequence[px.LibrarySprite], seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """A verified edit for every sprite with enough ink (in id order, the least-used kinds of
    its sprite source tried first, see :func:`kind_order`); also the ids no edit could clear."""
    bases, failed = [], []
    used: dict[str, dict[str, int]] = {}  # per sprite source: kind -> times chosen
    eligible = sorted((s for s in sprites if s.entry["solid_pixels"] >= px.EDIT_MIN_SOLID), key=lambda s: s.entry["id"])
    for position, s in enumerate(eligible):
        rng = edit_rng(seed, s.entry["id"])
        counts = used.setdefault(s.entry["source"], {})
        planned = plan_edit(s.pixels, rng, kind_order(position, rng, counts))
        if planned is None:
            failed.append(s.entry["id"])
            continue
        counts[planned.edit.kind] = counts.get(planned.edit.kind, 0) + 1
        edited = apply_edit(s.pixels, planned.edit)
        bases.append(base_record(s.entry["id"], s.entry["source"], s.entry["family"], s.entry["solid_pixels"],
                                 planned, px_sprite.pixel_sha256(edited)))
    return bases, failed
