"""The ten kinds of PixelEdit edit, each drawn from a sprite and its own colours.

Every kind changes a few source pixels and uses only colours the sprite already has
(RGB and alpha as they occur in it, or transparency):

- colour: ``shade`` (a patch moves to the neighbouring shade of the sprite's palette,
  lighter or darker) and ``swap`` (two of the sprite's colours are exchanged inside a
  patch);
- shape: ``add`` (ink grows from the edge, each new pixel taking its nearest opaque
  pixel's colour), ``remove`` (a patch of ink is cleared), ``extend`` / ``trim`` (a
  feature 1-3 source pixels wide grows by a few pixels, its tip colour kept, or loses the
  last few pixels of its end), ``shift`` / ``move`` (a small detail of its own colour, an
  eye, a gem, a highlight, moves by 1-2 or 3-5 pixels, its old place filled with the
  surrounding colour), ``erase`` (such a detail is painted over with the surrounding
  colour) and ``mirror`` (a small window on the outline is flipped).

An edit is an :class:`EditSpec`: its kind, its anchor and the explicit list of changed
pixels (``[y, x, r, g, b, a]``), so applying it is exact. :data:`KIND_PLANNERS` maps a
kind to its drawing function (``(rgba, rng) -> EditSpec | None``); checking and choosing
edits is :mod:`rose_gen.assets.pixel.edits`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import ndimage

from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import lab_of

COLOUR_KINDS: tuple[str, ...] = ("shade", "swap")
SHAPE_KINDS: tuple[str, ...] = ("add", "remove", "extend", "trim", "shift", "move", "erase", "mirror")
EDIT_KINDS: tuple[str, ...] = COLOUR_KINDS + SHAPE_KINDS
MAX_SHARE = 0.06  # an edit changes at most this share of the sprite's ink (and at least MIN_PIXELS)
MIN_PIXELS = 6
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
    after = px_sprite.canonical(after)
    ys, xs = np.nonzero((px_sprite.canonical(before) != after).any(axis=-1))
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
    return px_sprite.grow_patch(allowed, anchor, size)


def _budget(rgba: np.ndarray, rng: np.random.Generator) -> int:
    n = int(px_sprite.solid_mask(rgba).sum())
    return max(MIN_PIXELS, int(round(float(rng.uniform(0.025, MAX_SHARE)) * n)))


def _pick(mask: np.ndarray, rng: np.random.Generator) -> tuple[int, int] | None:
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    i = int(rng.integers(ys.size))
    return int(ys[i]), int(xs[i])


def _surround_colour(rgba: np.ndarray, region: np.ndarray) -> np.ndarray | None:
    """The most common opaque colour on the 4-neighbour ring around ``region`` (None: no ink there)."""
    ring = ndimage.binary_dilation(region, structure=_CROSS) & ~region & px_sprite.solid_mask(rgba)
    if not ring.any():
        return None
    colours, counts = np.unique(rgba[ring], axis=0, return_counts=True)
    return colours[int(np.argmax(counts))]


def _details(rgba: np.ndarray, max_size: int = 12) -> list[np.ndarray]:
    """Small one-colour spots inside the sprite (eyes, gems, highlights): 2..max_size pixels,
    every 4-neighbour of the spot opaque and of other colours."""
    solid = px_sprite.solid_mask(rgba)
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
    solid = px_sprite.solid_mask(rgba)
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


def _edge_anchor(rgba: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The sprite's solid mask and a pixel drawn on its outer edge (None: no edge pixel)."""
    solid = px_sprite.solid_mask(rgba)
    anchor = _pick(solid & ndimage.binary_dilation(~solid, structure=_CROSS), rng)
    return None if anchor is None else (solid, anchor)


def _remove(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    picked = _edge_anchor(rgba, rng)
    if picked is None:
        return None
    solid, anchor = picked
    patch = _grow(solid, anchor, _budget(rgba, rng))
    out = np.array(rgba)
    out[patch] = 0
    return _spec("remove", anchor, rgba, out)


def _tips(rgba: np.ndarray, d: tuple[int, int]) -> np.ndarray:
    """Ink pixels whose neighbour in direction ``d`` is transparent (the edge facing ``d``)."""
    solid = px_sprite.solid_mask(rgba)
    h, w = solid.shape
    pad = np.pad(solid, 1)
    return solid & ~pad[1 + d[0]:1 + d[0] + h, 1 + d[1]:1 + d[1] + w]


def _features(rgba: np.ndarray, d: tuple[int, int], max_width: int = 3) -> list[list[tuple[int, int]]]:
    """Runs of 1..``max_width`` edge pixels facing ``d``, laid across ``d``, with no ink just
    beyond either end: the tips of thin features (horns, limbs, handles, spikes)."""
    solid = px_sprite.solid_mask(rgba)
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
        inside = 0 <= by < h and 0 <= bx < w and rgba[by, bx, 3] >= px_sprite.SOLID_ALPHA
        body = rgba[by, bx] if inside else rgba[y, x]
        for k in range(1, length + 1):
            ny, nx = y + k * d[0], x + k * d[1]
            if not (1 <= ny < h - 1 and 1 <= nx < w - 1) or rgba[ny, nx, 3] != 0:
                return None
            out[ny, nx] = rgba[y, x] if k == length else body
        out[y, x] = body
    return _spec("extend", run[0], rgba, out)


def _trim(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    solid = px_sprite.solid_mask(rgba)
    thin = solid & ~ndimage.binary_opening(solid, structure=np.ones((3, 3), dtype=bool))
    neighbours = ndimage.convolve(solid.astype(np.int8), np.ones((3, 3), dtype=np.int8), mode="constant") - 1
    anchor = _pick(thin & (neighbours <= 2), rng)  # the end of a feature at most two pixels wide
    if anchor is None:
        return None
    patch = _grow(thin, anchor, int(rng.integers(4, 13)))
    out = np.array(rgba)
    out[patch] = 0
    return _spec("trim", anchor, rgba, out)


def _detail_and_fill(rgba: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """A detail drawn at random and the colour that surrounds it (None: no detail or no one colour)."""
    spots = _details(rgba)
    if not spots:
        return None
    spot = spots[int(rng.integers(len(spots)))]
    fill = _surround_colour(rgba, spot)
    return None if fill is None else (spot, fill)


def _relocate(rgba: np.ndarray, rng: np.random.Generator, kind: str, reach: tuple[int, int]) -> EditSpec | None:
    picked = _detail_and_fill(rgba, rng)
    if picked is None:
        return None
    spot, fill = picked
    solid = px_sprite.solid_mask(rgba)
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
    picked = _detail_and_fill(rgba, rng)
    if picked is None:
        return None
    spot, fill = picked
    out = np.array(rgba)
    out[spot] = fill
    ys, xs = np.nonzero(spot)
    return _spec("erase", (int(ys[0]), int(xs[0])), rgba, out)


def _mirror(rgba: np.ndarray, rng: np.random.Generator) -> EditSpec | None:
    picked = _edge_anchor(rgba, rng)
    if picked is None:
        return None
    solid, anchor = picked
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
