"""Text on contact sheets: one CJK-capable face from the fonts manifest, BASIC layout.

BASIC layout (no HarfBuzz/raqm) keeps the pixels identical whether or not libraqm is
installed. Characters the face cannot draw (emoji, joiners, variation selectors) are
written as ``U+XXXX`` instead of tofu, so every label says exactly what the row holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import ImageFont

from rose_gen.assets.fonts import cmap_codepoints, load_font, manifest_faces
from rose_gen.core.errors import AssetError

# Faces tried in order (names in the fonts manifest; Debian's pool, then the pip pool).
TEXT_FACES = ("NotoSansCJKsc-Regular", "NotoSansCJKsc-Medium")
BOLD_FACES = ("NotoSansCJKsc-Bold", "NotoSansCJKsc-Black", "NotoSansCJKsc-Medium", "NotoSansCJKsc-Regular")
FALLBACK = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@dataclass(frozen=True)
class TextFont:
    """A Pillow font at one size and the codepoints it can draw."""

    font: ImageFont.FreeTypeFont
    codepoints: frozenset[int]
    size: int

    def clean(self, text: str) -> str:
        """``text`` with every character the face lacks written as ``U+XXXX``."""
        return "".join(ch if ord(ch) in self.codepoints or ch == " " else f"U+{ord(ch):04X}" for ch in text)

    def width(self, text: str) -> float:
        return self.font.getlength(text)


@lru_cache(maxsize=16)
def text_font(size: int, bold: bool = False) -> TextFont:
    """The sheet font at ``size`` px; DejaVu Sans when no manifest face is installed."""
    faces = {f.name: f for f in manifest_faces()}
    for name in BOLD_FACES if bold else TEXT_FACES:
        face = faces.get(name)
        if face is None:
            continue
        try:
            return TextFont(load_font(face, size), cmap_codepoints(face), size)
        except (AssetError, OSError):
            continue
    if not FALLBACK.is_file():
        raise AssetError(f"no text font for contact sheets: install fonts-noto-cjk or fonts-dejavu-core ({FALLBACK})")
    from fontTools.ttLib import TTFont

    with TTFont(str(FALLBACK), lazy=True) as tt:
        cmap = frozenset(tt.getBestCmap() or {})
    return TextFont(ImageFont.truetype(str(FALLBACK), size, layout_engine=ImageFont.Layout.BASIC), cmap, size)


def value_text(value: Any) -> str:
    """A row value as one line: strings as they are, numbers as written, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def wrap(text: str, font: TextFont, width: float) -> Iterator[str]:
    """Lines of ``text`` (already cleaned) no wider than ``width``: breaks at spaces, else anywhere."""
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if font.width(candidate) <= width:
            line = candidate
            continue
        if line:
            yield line
        line = ""
        for ch in word:  # a word wider than the line is cut where it must be
            if font.width(line + ch) > width and line:
                yield line
                line = ""
            line += ch
    if line:
        yield line
