"""Local edits of a pixel-art sprite that a model must look at to find (ROSE-PixelEdit).

Every edit uses only the sprite's own colours and changes a small, local set of source
pixels. Ten kinds, in two classes:

- colour: ``shade`` (a patch of one colour region moves to the neighbouring shade of
  the sprite's palette, lighter or darker) and ``swap`` (two of the sprite's colours are
  exchanged inside a patch);
- shape: ``add`` (ink grows from the edge, each new pixel taking its nearest ink
  pixel's colour), ``remove`` (a patch of ink is cleared), ``extend`` / ``trim`` (a
  feature 1-3 source pixels wide grows by a few pixels, its tip colour kept, or loses the
  last few pixels of its end),
  ``shift`` / ``move`` (a small detail of its own colour, an eye, a gem, a highlight,
  moves by 1-2 or 3-5 pixels, its old place filled with the surrounding colour),
  ``erase`` (such a detail is painted over with the surrounding colour) and ``mirror``
  (a small window on the outline is flipped).

An edit is recorded as its kind, its anchor and the explicit list of changed pixels
(``[y, x, r, g, b, a]``), so applying it is exact. :func:`plan_edit` tries the kinds in
the order it is given (the builder puts the least-used kinds first so they are balanced)
and keeps the first draw that (1) keeps every changed pixel :data:`EDGE_MARGIN` source
pixels away from the cell border (an edit there reads as part of the neighbouring cell),
(2) clears the visibility thresholds at the smallest cell
(:func:`rose_gen.pixel_assets.clears_visibility`), and (3) does not pop out: no
third-by-third block of the 120 px tile changes its mean colour by more than
:data:`POP_OUT_LIMIT` (:mod:`rose_gen.pixel_metrics`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import ndimage

from rose_gen import pixel_assets as px
from rose_gen.pixel_metrics import block_delta_e, lab_of
from rose_gen.rng import seed_sequence

COLOUR_KINDS: tuple[str, ...] = ("shade", "swap")
SHAPE_KINDS: tuple[str, ...] = ("add", "remove", "extend", "trim", "shift", "move", "erase", "mirror")
EDIT_KINDS: tuple[str, ...] = COLOUR_KINDS + SHAPE_KINDS
POP_OUT_LIMIT = 10.0  # the audit's pop-out line is 12; keep a margin
MAX_SHARE = 0.06  # an edit changes at most this share of the sprite's ink (and at least MIN_PIXELS)
MIN_PIXELS = 6
EDGE_MARGIN = 3  # no edit pixel this close (source pixels) to the canvas edge, i.e. the cell border
_CROSS = ndimage.generate_binary_structure(2, 1)
_DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))

Pixels = tuple[tuple[int, int, int, int, int, int], ...]


@dataclass(frozen=True)
class EditSpec:
    """One edit: its kind, the anchor it was drawn around (y, x) and the changed pixels."""

    kind: str
    anchor: tuple[int, int]
    pixels: Pixels  # (y, x, r, g, b, a) of every changed pixel, sorted

    @property
    def size(self) -> int:
        return len(self.pixels)

    @property
    def edit_class(self) -> str:
        return "colour" if self.kind in COLOUR_KINDS else "shape"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": self.edit_class, "anchor": list(self.anchor),
                "pixels": [list(p) for p in self.pixels]}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> EditSpec:
        pixels = tuple(tuple(int(v) for v in p) for p in d["pixels"])
        return EditSpec(str(d["kind"]), (int(d["anchor"][0]), int(d["anchor"][1])), pixels)  # type: ignore[arg-type]


def apply_edit(rgba: np.ndarray, edit: EditSpec) -> np.ndarray:
    """The edited copy of a sprite (the input is not modified)."""
    if edit.kind not in EDIT_KINDS:
        raise ValueError(f"unknown edit kind {edit.kind!r}; known: {', '.join(EDIT_KINDS)}")
    out = np.array(rgba, dtype=np.uint8)
    h, w = out.shape[:2]
    for y, x, r, g, b, a in edit.pixels:
        if not (0 <= y < h and 0 <= x < w):
            raise ValueError(f"edit pixel ({y}, {x}) lies outside the {w}x{h} sprite")
        out[y, x] = (r, g, b, a) if a else (0, 0, 0, 0)
    return out


def _spec(kind: str, anchor: tuple[int, int], before: np.ndarray, after: np.ndarray) -> EditSpec | None:
    """The EditSpec turning ``before`` into ``after`` (None when nothing changed)."""
    after = px.canonical(after)
    ys, xs = np.nonzero((px.canonical(before) != after).any(axis=-1))
    if ys.size == 0:
        return None
    pixels = tuple((int(y), int(x), *(int(v) for v in after[y, x])) for y, x in zip(ys, xs, strict=True))
    return EditSpec(kind, anchor, pixels)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- palette


@dataclass(frozen=True)
class Palette:
    """The sprite's opaque colours (RGB rows), their pixel counts and CIELAB values."""

    rgb: np.ndarray
    counts: np.ndarray
    lab: np.ndarray

    @staticmethod
    def of(rgba: np.ndarray) -> Palette:
        rgb, counts = np.unique(rgba[_opaque(rgba)][:, :3], axis=0, return_counts=True)
        return Palette(rgb, counts, lab_of(rgb) if len(rgb) else np.zeros((0, 3)))

    def index(self, colour: np.ndarray) -> int:
        return int(np.nonzero((self.rgb == colour).all(axis=1))[0][0])

    def neighbour_shade(self, i: int, lighter: bool, min_dl: float = 4.0) -> int | None:
        """The palette colour nearest to colour ``i`` (ΔE) among those lighter/darker by ``min_dl``."""
        dl = self.lab[:, 0] - self.lab[i, 0]
        ok = (dl >= min_dl) if lighter else (dl <= -min_dl)
        ok &= self.counts >= 2
        if not ok.any():
            return None
        dist = np.linalg.norm(self.lab - self.lab[i], axis=1)
        dist[~ok] = np.inf
        return int(np.argmin(dist))


# ---------------------------------------------------------------------------- helpers


def _opaque(rgba: np.ndarray) -> np.ndarray:
    """Fully opaque pixels: the only ones whose colour an edit rewrites (a semi-transparent pixel
    given a new RGB would show a blend the sprite never has)."""
    return rgba[..., 3] == 255


def _grow(allowed: np.ndarray, anchor: tuple[int, int], size: int) -> np.ndarray:
    return px.grow_patch(allowed, anchor, size)


def _budget(rgba: np.ndarray, rng: np.random.Generator) -> int:
    n = int(px.solid_mask(rgba).sum())
    return max(MIN_PIXELS, int(round(float(rng.uniform(0.025, MAX_SHARE)) * n)))


def _pick(mask: np.ndarray, rng: np.random.Generator) -> tuple[int, int] | None:
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    i = int(rng.integers(ys.size))
    return int(ys[i]), int(xs[i])


def _surround_colour(rgba: np.ndarray, region: np.ndarray) -> np.ndarray | None:
    """The most common opaque colour on the 4-neighbour ring around ``region`` (None: no ink there)."""
    ring = ndimage.binary_dilation(region, structure=_CROSS) & ~region & px.solid_mask(rgba)
    if not ring.any():
        return None
    colours, counts = np.unique(rgba[ring], axis=0, return_counts=True)
    return colours[int(np.argmax(counts))]


def _details(rgba: np.ndarray, max_size: int = 12) -> list[np.ndarray]:
    """Small one-colour spots inside the sprite (eyes, gems, highlights): 2..max_size pixels,
    every 4-neighbour of the spot opaque and of other colours."""
    solid = px.solid_mask(rgba)
    codes = (rgba[..., 0].astype(np.int64) << 16) | (rgba[..., 1].astype(np.int64) << 8) | rgba[..., 2]
    out = []
    for code in np.unique(codes[solid]):
        lab, k = ndimage.label(solid & (codes == code), structure=_CROSS)
        for i in range(1, k + 1):
            spot = lab == i
            n = int(spot.sum())
            if not 2 <= n <= max_size:
                continue
            ring = ndimage.binary_dilation(spot, structure=_CROSS) & ~spot
            if ring.any() and solid[ring].all():
                out.append(spot)
    return out


# ---------------------------------------------------------------------------- kinds


def _shade(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    pal = Palette.of(rgba)
    opaque = _opaque(rgba)
    anchor = _pick(opaque, rng)
    if anchor is None or len(pal.rgb) < 3:
        return None
    lighter = bool(rng.random() < 0.5)
    patch = _grow(opaque, anchor, _budget(rgba, rng))
    out = np.array(rgba)
    for colour in np.unique(rgba[patch][:, :3], axis=0):
        dst = pal.neighbour_shade(pal.index(colour), lighter)
        if dst is not None:
            out[patch & (rgba[..., :3] == colour).all(axis=-1), :3] = pal.rgb[dst]
    return _spec("shade", anchor, rgba, out)


def _swap(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    opaque = _opaque(rgba)
    anchor = _pick(opaque, rng)
    if anchor is None:
        return None
    patch = _grow(opaque, anchor, 2 * _budget(rgba, rng))
    colours, counts = np.unique(rgba[patch][:, :3], axis=0, return_counts=True)
    if len(colours) < 2:
        return None
    top = np.argsort(-counts, kind="stable")[:2]
    if counts[top[1]] < 2:
        return None
    c1, c2 = colours[top[0]], colours[top[1]]
    if float(np.linalg.norm(lab_of(c1) - lab_of(c2))) < 10.0:
        return None
    out = np.array(rgba)
    m1 = patch & (rgba[..., :3] == c1).all(axis=-1)
    m2 = patch & (rgba[..., :3] == c2).all(axis=-1)
    out[m1, :3], out[m2, :3] = c2, c1
    return _spec("swap", anchor, rgba, out)


def _add(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    solid = px.solid_mask(rgba)
    free = rgba[..., 3] == 0
    free[[0, -1], :] = False
    free[:, [0, -1]] = False
    anchor = _pick(free & ndimage.binary_dilation(solid, structure=_CROSS), rng)
    if anchor is None:
        return None
    patch = _grow(free, anchor, _budget(rgba, rng))
    opaque = _opaque(rgba)
    if not opaque.any():
        return None
    _, (iy, ix) = ndimage.distance_transform_edt(~opaque, return_indices=True)
    out = np.array(rgba)
    out[patch] = rgba[iy[patch], ix[patch]]
    return _spec("add", anchor, rgba, out)


def _remove(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    solid = px.solid_mask(rgba)
    edge = solid & ndimage.binary_dilation(~solid, structure=_CROSS)
    anchor = _pick(edge, rng)
    if anchor is None:
        return None
    patch = _grow(solid, anchor, _budget(rgba, rng))
    out = np.array(rgba)
    out[patch] = 0
    return _spec("remove", anchor, rgba, out)


def _tips(rgba: np.ndarray, d: tuple[int, int]) -> np.ndarray:
    """Ink pixels whose neighbour in direction ``d`` is transparent (the edge facing ``d``)."""
    solid = px.solid_mask(rgba)
    h, w = solid.shape
    pad = np.pad(solid, 1)
    return solid & ~pad[1 + d[0]:1 + d[0] + h, 1 + d[1]:1 + d[1] + w]


def _features(rgba: np.ndarray, d: tuple[int, int], max_width: int = 3) -> list[list[tuple[int, int]]]:
    """Runs of 1..``max_width`` edge pixels facing ``d``, laid across ``d``, with no ink just
    beyond either end: the tips of thin features (horns, limbs, handles, spikes)."""
    solid = px.solid_mask(rgba)
    line, side = (_tips(rgba, d), solid) if d[0] else (_tips(rgba, d).T, solid.T)
    runs = []
    for r in range(line.shape[0]):
        row, srow = line[r], side[r]
        c = 0
        while c < row.size:
            if not row[c]:
                c += 1
                continue
            start = c
            while c < row.size and row[c]:
                c += 1
            ends_free = (start == 0 or not srow[start - 1]) and (c == row.size or not srow[c])
            if c - start <= max_width and ends_free:
                runs.append([(r, k) if d[0] else (k, r) for k in range(start, c)])
    return runs


def _extend(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    d = _DIRS[int(rng.integers(4))]
    runs = _features(rgba, d)
    if not runs:
        return None
    run = runs[int(rng.integers(len(runs)))]
    length = int(rng.integers(2, 6))
    h, w = rgba.shape[:2]
    out = np.array(rgba)
    for y, x in run:
        by, bx = y - d[0], x - d[1]
        inside = 0 <= by < h and 0 <= bx < w and rgba[by, bx, 3] >= px.SOLID_ALPHA
        body = rgba[by, bx] if inside else rgba[y, x]
        for k in range(1, length + 1):
            ny, nx = y + k * d[0], x + k * d[1]
            if not (1 <= ny < h - 1 and 1 <= nx < w - 1) or rgba[ny, nx, 3] != 0:
                return None
            out[ny, nx] = rgba[y, x] if k == length else body
        out[y, x] = body
    return _spec("extend", run[0], rgba, out)


def _trim(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    solid = px.solid_mask(rgba)
    thin = solid & ~ndimage.binary_opening(solid, structure=np.ones((3, 3), dtype=bool))
    neighbours = ndimage.convolve(solid.astype(np.int8), np.ones((3, 3), dtype=np.int8), mode="constant") - 1
    anchor = _pick(thin & (neighbours <= 2), rng)  # the end of a feature at most two pixels wide
    if anchor is None:
        return None
    patch = _grow(thin, anchor, int(rng.integers(4, 13)))
    out = np.array(rgba)
    out[patch] = 0
    return _spec("trim", anchor, rgba, out)


def _relocate(rgba: np.ndarray, rng: np.random.Generator, kind: str, reach: tuple[int, int]) -> EditSpec | None:
    spots = _details(rgba)
    if not spots:
        return None
    spot = spots[int(rng.integers(len(spots)))]
    fill = _surround_colour(rgba, spot)
    if fill is None:
        return None
    solid = px.solid_mask(rgba)
    for _ in range(6):
        dy, dx = (int(v) for v in rng.integers(-reach[1], reach[1] + 1, size=2))
        if max(abs(dy), abs(dx)) < reach[0]:
            continue
        ys, xs = np.nonzero(spot)
        ny, nx = ys + dy, xs + dx
        if ny.min() < 0 or nx.min() < 0 or ny.max() >= solid.shape[0] or nx.max() >= solid.shape[1]:
            continue
        moved = np.zeros_like(spot)
        moved[ny, nx] = True
        if not solid[moved].all():
            continue
        out = np.array(rgba)
        colour = rgba[spot][0]
        out[spot] = fill
        out[moved] = colour
        return _spec(kind, (int(ys[0]), int(xs[0])), rgba, out)
    return None


def _shift(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    return _relocate(rgba, rng, "shift", (1, 2))


def _move(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    return _relocate(rgba, rng, "move", (3, 5))


def _erase(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    spots = _details(rgba)
    if not spots:
        return None
    spot = spots[int(rng.integers(len(spots)))]
    fill = _surround_colour(rgba, spot)
    if fill is None:
        return None
    out = np.array(rgba)
    out[spot] = fill
    ys, xs = np.nonzero(spot)
    return _spec("erase", (int(ys[0]), int(xs[0])), rgba, out)


def _mirror(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    solid = px.solid_mask(rgba)
    edge = solid & ndimage.binary_dilation(~solid, structure=_CROSS)
    anchor = _pick(edge, rng)
    if anchor is None:
        return None
    half = int(rng.integers(2, 4))
    y, x = anchor
    h, w = solid.shape
    y0, y1, x0, x1 = max(0, y - half), min(h, y + half + 1), max(0, x - half), min(w, x + half + 1)
    out = np.array(rgba)
    window = rgba[y0:y1, x0:x1]
    out[y0:y1, x0:x1] = window[:, ::-1] if rng.random() < 0.5 else window[::-1, :]
    return _spec("mirror", anchor, rgba, out)


KIND_PLANNERS: Mapping[str, Callable[[np.ndarray, np.random.Generator], EditSpec | None]] = {
    "shade": _shade, "swap": _swap, "add": _add, "remove": _remove, "extend": _extend, "trim": _trim,
    "shift": _shift, "move": _move, "erase": _erase, "mirror": _mirror,
}


# ---------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlannedEdit:
    """A verified edit and what it measured at the smallest cell size."""

    edit: EditSpec
    changed_pixels: int
    changed_fraction: float
    ssim: float
    block_delta_e: float


def check_edit(rgba: np.ndarray, edit: EditSpec, *, cell_size: int = px.MIN_CELL_SIZE,
               margin: float = px.EDIT_MARGIN, pop_out: float = POP_OUT_LIMIT) -> PlannedEdit | None:
    """The edit's measurements when it is local, off the cell border (:data:`EDGE_MARGIN`),
    visible and does not pop out (else None)."""
    n_solid = int(px.solid_mask(rgba).sum())
    if not MIN_PIXELS <= edit.size <= max(MIN_PIXELS, int(np.ceil(MAX_SHARE * n_solid))):
        return None
    h, w = rgba.shape[:2]
    if any(not (EDGE_MARGIN <= y < h - EDGE_MARGIN and EDGE_MARGIN <= x < w - EDGE_MARGIN)
           for y, x, *_ in edit.pixels):
        return None  # at the cell border an edit reads as part of the neighbouring cell
    edited = apply_edit(rgba, edit)
    a, b = px.render_sprite(rgba, cell_size), px.render_sprite(edited, cell_size)
    diff = px.tile_difference(a, b)
    if not px.clears_visibility(diff, margin):
        return None
    worst = block_delta_e(np.asarray(a), np.asarray(b))
    if worst > pop_out:
        return None
    return PlannedEdit(edit, edit.size, round(diff.changed_fraction, 6), round(diff.ssim, 6), round(worst, 3))


def plan_edit(rgba: np.ndarray, rng: np.random.Generator, kinds: Sequence[str] = EDIT_KINDS, *,
              attempts: int = 12, cell_size: int = px.MIN_CELL_SIZE, margin: float = px.EDIT_MARGIN,
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
    if expected and px.pixel_sha256(arr) != expected:
        raise px.PixelAssetError(f"sprite {render.get('sprite')}: edited pixels do not match the manifest's "
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
                                 planned, px.pixel_sha256(edited)))
    return bases, failed
