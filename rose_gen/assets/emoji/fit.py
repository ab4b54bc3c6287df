"""Emoji art scaled to one ink-box area: the vendor drawing an identity never shows in its size.

Vendors draw the same emoji at different sizes on their canvases (OpenMoji leaves a wide
built-in margin, Noto fills its box), so tiles drawn canvas-to-cell differ in size and a
model can find an EmojiStyle exception by size alone. Here every vendor's drawing of an
identity is scaled so that its *ink box* (the bounding box of the pixels
:func:`rose_gen.assets.shortcuts.ink_mask` calls ink on white, the box ``rose-audit`` measures)
covers the same share of the tile's art square:

- :func:`ink_box_fractions` measures each vendor's ink box on a :data:`FIT_PROBE` px
  render (recorded per identity in ``assets_manifest/emoji_style_identities.json``);
- :func:`fit_share` is the largest area share every vendor can reach without its longer
  side leaving the art square: the smallest short/long side ratio over the vendors (equal
  *longest* sides would not give equal areas when aspect ratios differ);
- :func:`fitted_tile` crops the probe render to its ink box and resizes it (premultiplied
  alpha, Lanczos) so the box has that area, trying a few scales 1 % apart and keeping the
  one whose box, measured in the finished tile, is nearest the target area (whole pixels
  make a box's measured area move in steps). The art keeps its aspect ratio and is centred
  in the art square.

Speed (the same tiles, byte for byte): the crop is cut and premultiplied once per asset
(:func:`fit_crop`, cached by the caller); a scale is tried only when it could beat the best
so far (a box never exceeds its resized crop, and equal sizes give equal boxes); the ink of
a try is read from its premultiplied pixels through a table made by Pillow's own
conversions (:func:`premultiplied_ink`), not by compositing each try on white.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np
from PIL import Image

from rose_gen.assets.shortcuts import art_box_area, ink_mask

FIT_PROBE = 256  # side (px) of the render an ink box is measured on and fitted tiles are cut from
FIT_VERSION = "ink_box_area_v1"  # recorded in the manifest; a change makes it stale
SCALE_STEP = 0.01
SCALE_TRIES = (0, -1, 1, -2, 2, -3, 3, -4, 4)  # candidate scales (in SCALE_STEP), nearest first
WHITE = np.array([255.0, 255.0, 255.0])


def on_white(rgba: Image.Image) -> np.ndarray:
    """RGB uint8 array of an RGBA image composited on white."""
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return np.asarray(Image.alpha_composite(white, rgba.convert("RGBA")).convert("RGB"))


def ink_bounds(rgb: np.ndarray) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right), half-open, of the ink on white; None when there is none."""
    mask = ink_mask(rgb, WHITE)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def ink_box_fractions(probe: Image.Image) -> list[float] | None:
    """The ink box of a square probe render as [top, bottom, left, right] fractions of its side."""
    box = ink_bounds(on_white(probe))
    side = probe.size[0]
    return None if box is None else [round(v / side, 6) for v in box]


def fit_share(boxes: Iterable[Sequence[float]]) -> float:
    """The ink-box area share (of the art square) every box can be scaled to: min short/long side."""
    ratios = []
    for top, bottom, left, right in boxes:
        h, w = bottom - top, right - left
        if h <= 0 or w <= 0:
            raise ValueError(f"empty ink box {[top, bottom, left, right]}")
        ratios.append(min(h, w) / max(h, w))
    if not ratios:
        raise ValueError("no ink boxes to fit")
    return round(min(ratios), 6)


@cache  # two modes
def _ink_table(mode: str) -> np.ndarray:
    """(256, 256) bool: is a channel value ``c`` at alpha ``a`` (``[a, c]``) of an image in
    ``mode`` (``RGBA`` or premultiplied ``RGBa``) ink once composited on white?

    Made by Pillow itself (conversion to RGBA, then :func:`on_white`) over every (a, c) pair,
    so it reproduces its rounding exactly; both steps treat each channel on its own.
    """
    a, c = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8), indexing="ij")
    pixels = np.stack([c, c, c, a], axis=-1)
    image = Image.frombytes(mode, (256, 256), pixels.tobytes())
    return ink_mask(on_white(image.convert("RGBA")), WHITE)


@cache
def _ink_limits(mode: str) -> np.ndarray | None:
    """Per alpha, the channel values below which a channel is ink (``[a]``), when the ink
    values at each alpha are exactly those below some limit (compositing is monotone); else None."""
    table = _ink_table(mode)
    limits = table.sum(axis=1)
    prefix = np.arange(256)[None, :] < limits[:, None]
    return limits.astype(np.uint8) if np.array_equal(prefix, table) and limits.max() < 256 else None


def premultiplied_ink(image: Image.Image) -> np.ndarray:
    """Ink mask (:func:`rose_gen.assets.shortcuts.ink_mask` on white) of an ``RGBA`` or ``RGBa``
    image, without compositing it: equal to ``ink_mask(on_white(image.convert("RGBA")), WHITE)``.

    A pixel is ink when one channel is; compositing is monotone in the channel, so that is
    its darkest channel, compared with the limit at its alpha.
    """
    arr = np.asarray(image)
    limits = _ink_limits(image.mode)
    if limits is None:  # not monotone: look every channel up
        return _ink_table(image.mode)[arr[..., 3:4], arr[..., :3]].any(axis=-1)
    darkest = np.minimum(np.minimum(arr[..., 0], arr[..., 1]), arr[..., 2])
    return darkest < np.take(limits, arr[..., 3])


def ink_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """:func:`ink_bounds` of an ``RGBA`` or ``RGBa`` image on white, read through :func:`premultiplied_ink`."""
    mask = premultiplied_ink(image)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def fit_crop(probe: Image.Image) -> Image.Image:
    """The probe render cut to its ink box, premultiplied (``RGBa``): what every fitted size is
    resized from. Independent of the cell size, so a caller caches it per asset."""
    box = ink_box(probe.convert("RGBA"))
    if box is None:
        raise ValueError("the probe render has no ink")
    top, bottom, left, right = box
    return probe.crop((left, top, right, bottom)).convert("RGBa")


def fitted_tile(probe: Image.Image, size: int, pad: int, share: float) -> np.ndarray:
    """A ``size`` square RGB tile (on white) of ``probe``'s art, its ink box covering ``share``
    of the art square (``size - 2 * pad`` a side) as nearly as whole pixels allow."""
    return fitted_crop_tile(fit_crop(probe), size, pad, share)


def fitted_crop_tile(crop: Image.Image, size: int, pad: int, share: float) -> np.ndarray:
    """:func:`fitted_tile` from the probe's :func:`fit_crop` (premultiplied ink-box crop).

    Scales are tried in :data:`SCALE_TRIES` order and the first with the smallest miss is
    kept. A try is skipped when it cannot miss by less than the best so far: its size was
    tried already (same size, same box), or its box, at most the resized crop, cannot reach
    the target area closer than that; a miss of 0 ends the search.
    """
    side = size - 2 * pad
    target = share * side * side
    exact = (target / (crop.width * crop.height)) ** 0.5
    best: tuple[float, Image.Image] | None = None
    tried: set[tuple[int, int]] = set()
    for step in SCALE_TRIES:
        scale = exact * (1.0 + step * SCALE_STEP)
        width, height = round(crop.width * scale), round(crop.height * scale)
        if max(width, height) > side or min(width, height) < 1 or (width, height) in tried:
            continue
        tried.add((width, height))
        if best is not None and target - width * height >= best[0]:
            continue
        art = crop.resize((width, height), Image.Resampling.LANCZOS)
        # The art's ink box in the tile is its ink box on white: the rest of the cell is empty.
        miss = abs(art_box_area(premultiplied_ink(art)) - target)
        if best is None or miss < best[0]:
            best = (miss, art)
            if miss == 0:
                break
    if best is None:
        raise ValueError(f"no scale fits the art into {side} px")
    art = best[1].convert("RGBA")
    cell = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    cell.paste(art, (pad + (side - art.width) // 2, pad + (side - art.height) // 2))
    return on_white(cell)
