"""Font faces: resolution from the fonts manifest, checksums, glyph verification, rendering.

A face is one (file, face index[, variable weight]) entry of ``assets_manifest/fonts.json``.
Faces come in pools (:data:`FONT_POOLS`): ``debian`` (system fonts from Debian packages, absolute
paths; the default) and ``pip`` (Noto Sans CJK SC from the PyPI package ``manimgx-fonts-cjk``,
a variable font at explicit weights; its ``file`` is relative to the installed Python package,
so nothing host-specific is recorded). :func:`font_path` finds the installed file either way.
Everything here renders with Pillow's BASIC layout (one character -> one glyph from the cmap),
so a missing character is drawn as the face's ``.notdef`` and can be caught, instead of being
decomposed or substituted by a shaping engine.

Glyph verification (:func:`check_glyph`) asks four questions of one character in one face:
the character is in the cmap (fontTools); its rendering differs from the ``.notdef``
rendering; it has ink; its ink fits inside the cell at the scene's cell size.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont

from assets_manifest import ManifestError, check_file, load_manifest
from rose_eval.registry import Registry
from rose_gen.core.errors import AssetError

# Font size as a share of the cell side (v0.1 drew glyphs at about this scale).
FONT_SCALE = 0.72
# Pixel values above this count as ink in an 8-bit coverage mask.
INK_LEVEL = 32
# A codepoint no CJK font maps (plane-16 private use); used to render .notdef.
_NOTDEF_PROBES = (0x10FFFD, 0x10FFFC, 0x10FFFB, 0xFFFFD)


@dataclass(frozen=True)
class FontFace:
    """One verified-able face, as recorded in the fonts manifest."""

    name: str  # PostScript name; the ``font_name`` on glyph rows
    family: str
    style: str
    weight: int  # OS/2 usWeightClass (or the variable instance's weight)
    script_form: str  # "mainland" (simplified, PRC forms) or e.g. "taiwan"
    file: str
    face_index: int
    sha256: str
    package: str
    licence: str
    variation_weight: float | None = None
    installer: str = "debian"  # how the file is installed: a key of FONT_INSTALLERS

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict (manifest entry)."""
        return asdict(self)


@dataclass(frozen=True)
class GlyphCheck:
    """Result of verifying one character in one face at one cell size."""

    char: str
    face: str
    cell_size: int
    in_cmap: bool
    differs_from_notdef: bool
    has_ink: bool
    inside_cell: bool

    @property
    def ok(self) -> bool:
        """All four checks passed."""
        return self.in_cmap and self.differs_from_notdef and self.has_ink and self.inside_cell

    def reason(self) -> str:
        """Short reason for a failure ('' when ok)."""
        for flag, why in ((self.in_cmap, "not in cmap"), (self.differs_from_notdef, "renders as .notdef"),
                          (self.has_ink, "no ink"), (self.inside_cell, "ink outside the cell")):
            if not flag:
                return why
        return ""


def face_from_entry(entry: Mapping[str, Any]) -> FontFace:
    """Build a :class:`FontFace` from one manifest entry (unknown keys are ignored)."""
    fields = FontFace.__dataclass_fields__
    try:
        return FontFace(**{k: entry[k] for k in fields if k in entry})
    except TypeError as exc:
        raise ManifestError(f"fonts manifest entry {entry.get('name', '?')!r} is incomplete: {exc}") from None


@dataclass(frozen=True)
class FontInstaller:
    """How the files of one kind of font package are found and installed."""

    locate: Callable[[str], Path | None]  # manifest ``file`` -> installed path (None: package absent)
    install_hint: Callable[[str], str]  # package -> the command that installs it


def _debian_file(file: str) -> Path | None:
    return Path(file)


def _python_package_file(file: str) -> Path | None:
    """``<import package>/<file inside it>`` -> the path in the installed package (no import)."""
    top, _, rest = file.partition("/")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / rest


FONT_INSTALLERS: Registry[FontInstaller] = Registry("font installer")
FONT_INSTALLERS.add("debian", FontInstaller(_debian_file, lambda pkg: f"Debian package {pkg}: apt-get install {pkg}"))
FONT_INSTALLERS.add("pip", FontInstaller(
    _python_package_file,
    lambda pkg: f"PyPI package {pkg}: pip install {pkg} (or pip install 'rose-toolkit[pipfonts]')"))

# Face pools of the fonts manifest: pool name -> manifest key listing its faces.
FONT_POOLS: Registry[str] = Registry("font pool")
FONT_POOLS.add("debian", "faces")
FONT_POOLS.add("pip", "pip_faces")
DEFAULT_FONT_POOL = "debian"


def manifest_faces(manifest: Mapping[str, Any] | None = None, pool: str = DEFAULT_FONT_POOL) -> list[FontFace]:
    """The usable faces of one pool of the fonts manifest (default: the Debian pool), in order."""
    data = load_manifest("fonts") if manifest is None else manifest
    return [face_from_entry(e) for e in data.get(FONT_POOLS.get(pool), [])]


def all_manifest_faces(manifest: Mapping[str, Any] | None = None) -> list[FontFace]:
    """The faces of every pool, pool by pool (for licences and asset versions)."""
    data = load_manifest("fonts") if manifest is None else manifest
    return [face for pool in FONT_POOLS.names() for face in manifest_faces(data, pool)]


@lru_cache(maxsize=64)
def _located(installer: str, file: str) -> Path | None:
    return FONT_INSTALLERS.get(installer).locate(file)


def font_path(face: FontFace) -> Path:
    """Where ``face``'s file is installed (no checksum); :class:`AssetError` if its package is absent."""
    path = _located(face.installer, face.file)
    if path is None:
        hint = FONT_INSTALLERS.get(face.installer).install_hint(face.package)
        raise AssetError(f"font {face.name}: {face.file} is not installed; it is provided by {hint}")
    return path


def resolve_face(face: FontFace) -> Path:
    """The installed file of ``face``, checksum-checked; else :class:`AssetError` (one line)."""
    path = font_path(face)
    hint = FONT_INSTALLERS.get(face.installer).install_hint(face.package)
    try:
        return check_file(path, face.sha256, what=f"font {face.name}", package=hint)
    except ManifestError as exc:
        raise AssetError(str(exc)) from None


# A CJK face costs ~2.3 MB per loaded size: keep enough for every face of a pool at one size
# (pool checks) but not every (face, size) a release meets, so memory does not grow with the
# release (bench/bench_gen.py --scale 4: 256 cached fonts were ~600 MB per process).
@lru_cache(maxsize=32)
def _load_font(file: str, face_index: int, size: int, variation_weight: float | None) -> ImageFont.FreeTypeFont:
    font = ImageFont.truetype(file, size=size, index=face_index, layout_engine=ImageFont.Layout.BASIC)
    if variation_weight is not None:
        axes = font.get_variation_axes()
        values = [variation_weight if a.get("name") in (b"Weight", "Weight") else a["default"] for a in axes]
        font.set_variation_by_axes(values)
    return font


def load_font(face: FontFace, size: int) -> ImageFont.FreeTypeFont:
    """Pillow font for ``face`` at pixel ``size`` with BASIC layout (cached; no checksum)."""
    return _load_font(str(font_path(face)), face.face_index, int(size), face.variation_weight)


@lru_cache(maxsize=64)
def _cmap(file: str, face_index: int) -> frozenset[int]:
    with TTFont(file, fontNumber=face_index, lazy=True) as tt:
        return frozenset(tt.getBestCmap() or {})


def cmap_codepoints(face: FontFace) -> frozenset[int]:
    """Codepoints mapped by the face's best cmap (fontTools)."""
    return _cmap(str(font_path(face)), face.face_index)


def _ink_mask(font: ImageFont.FreeTypeFont, text: str, canvas: int) -> np.ndarray:
    """Coverage (uint8) of ``text`` drawn around the centre of a square canvas."""
    img = Image.new("L", (canvas, canvas), 0)
    ImageDraw.Draw(img).text((canvas / 2, canvas / 2), text, font=font, fill=255, anchor="mm")
    return np.asarray(img)


def _crop_ink(mask: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(mask.max(axis=1) > INK_LEVEL)
    cols = np.flatnonzero(mask.max(axis=0) > INK_LEVEL)
    if rows.size == 0:
        return mask[:0, :0]
    return mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]


@lru_cache(maxsize=8192)
def glyph_ink(face: FontFace, char: str, font_size: int) -> np.ndarray:
    """The character's ink, cropped to its bounding box (read-only uint8 coverage; cached)."""
    font = load_font(face, font_size)
    ink = _crop_ink(_ink_mask(font, char, font_size * 3)).copy()
    ink.flags.writeable = False
    return ink


def centred_mask(ink: np.ndarray, canvas: int) -> np.ndarray:
    """Place cropped ``ink`` centred on a ``canvas`` square (integer offsets; clipped if larger)."""
    out = np.zeros((canvas, canvas), dtype=np.uint8)
    h, w = ink.shape
    if h == 0:
        return out
    top, left = (canvas - h) // 2, (canvas - w) // 2
    src = ink[max(0, -top):h - max(0, top + h - canvas), max(0, -left):w - max(0, left + w - canvas)]
    out[max(0, top):max(0, top) + src.shape[0], max(0, left):max(0, left) + src.shape[1]] = src
    return out


def render_glyph_tile(face: FontFace, char: str, cell_size: int) -> Image.Image:
    """RGB tile: ``char`` black on white, ink-centred, font size ``int(cell_size * FONT_SCALE)``."""
    ink = glyph_ink(face, char, int(cell_size * FONT_SCALE))
    grey = 255 - centred_mask(ink, cell_size)
    return Image.fromarray(grey, mode="L").convert("RGB")


def _notdef_codepoint(face: FontFace) -> int:
    cmap = cmap_codepoints(face)
    for cp in _NOTDEF_PROBES:
        if cp not in cmap:
            return cp
    raise AssetError(f"font {face.name}: could not find an unmapped codepoint to render .notdef")


@lru_cache(maxsize=512)
def _notdef_ink(face: FontFace, font_size: int) -> bytes:
    ink = glyph_ink(face, chr(_notdef_codepoint(face)), font_size)
    return ink.shape[0].to_bytes(4, "little") + ink.shape[1].to_bytes(4, "little") + ink.tobytes()


def check_glyph(face: FontFace, char: str, cell_size: int) -> GlyphCheck:
    """Verify one character in one face at ``cell_size`` (see the module docstring)."""
    font_size = int(cell_size * FONT_SCALE)
    in_cmap = ord(char) in cmap_codepoints(face)
    ink = glyph_ink(face, char, font_size)
    key = ink.shape[0].to_bytes(4, "little") + ink.shape[1].to_bytes(4, "little") + ink.tobytes()
    has_ink = bool(ink.size) and int((ink > INK_LEVEL).sum()) >= 4
    return GlyphCheck(
        char=char, face=face.name, cell_size=cell_size, in_cmap=in_cmap,
        differs_from_notdef=key != _notdef_ink(face, font_size), has_ink=has_ink,
        inside_cell=has_ink and ink.shape[0] <= cell_size and ink.shape[1] <= cell_size,
    )


def face_fingerprint(face: FontFace, chars: Iterable[str], size: int = 48) -> np.ndarray:
    """Stacked centred renderings of ``chars`` (uint8), used to find duplicate faces."""
    return np.stack([centred_mask(glyph_ink(face, c, size), size * 2) for c in chars])


def dedupe_faces(faces: Sequence[FontFace], chars: Sequence[str], *, tolerance: float = 0.5) -> dict[str, str]:
    """Map each face that renders ``chars`` like an earlier face to that face's name.

    Two faces are duplicates when the mean absolute difference of their renderings is at
    most ``tolerance`` grey levels (Mono variants, re-packaged copies).
    """
    kept: list[tuple[str, np.ndarray]] = []
    duplicates: dict[str, str] = {}
    for face in faces:
        fp = face_fingerprint(face, chars).astype(np.int16)
        twin = next((name for name, other in kept if float(np.abs(fp - other).mean()) <= tolerance), None)
        if twin is None:
            kept.append((face.name, fp))
        else:
            duplicates[face.name] = twin
    return duplicates


def licences(manifest: Mapping[str, Any] | None = None, pool: str | None = None) -> list[dict[str, Any]]:
    """Licence records of the packages providing the faces of one pool, or of every pool (LICENSES.md)."""
    data = load_manifest("fonts") if manifest is None else manifest
    faces = all_manifest_faces(data) if pool is None else manifest_faces(data, pool)
    out = []
    for pkg in sorted({f.package for f in faces}):
        rec = dict(data["licences"][pkg])
        rec["package"] = pkg
        rec["faces"] = sorted(f.name for f in faces if f.package == pkg)
        out.append(rec)
    return out
