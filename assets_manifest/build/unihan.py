"""Readers for Debian's Unihan files (package ``unicode-data``, /usr/share/unicode).

Used by the manifest build scripts only: the character list (Table of General Standard
Chinese Characters, field kTGH), variant relations and radical/stroke counts.
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Iterator
from pathlib import Path

UNICODE_DIR = Path("/usr/share/unicode")
# Variant fields: two characters related by any of these are one character, not a pair.
VARIANT_FIELDS = ("kZVariant", "kSemanticVariant", "kSpecializedSemanticVariant", "kSpoofingVariant",
                  "kSimplifiedVariant", "kTraditionalVariant")
# kTGH ranks: level 1 (common) 1-3500, level 2 3501-6500, level 3 6501-8105.
TGH_LEVEL_ENDS = (3500, 6500, 8105)

_CP = re.compile(r"U\+([0-9A-F]{4,6})")


def _records(name: str) -> Iterator[tuple[str, str, str]]:
    path = UNICODE_DIR / name
    if not path.is_file():
        raise SystemExit(f"{path} is missing: install the Debian package unicode-data")
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            cp, field, value = line.rstrip("\n").split("\t", 2)
            yield chr(int(cp[2:], 16)), field, value


def tgh_chars() -> list[tuple[str, int]]:
    """(character, kTGH rank) for the 8,105 characters of the 2013 table, in rank order."""
    ranked = [(ch, int(v.split(":")[1])) for ch, f, v in _records("Unihan_OtherMappings.txt.bz2") if f == "kTGH"]
    return sorted(ranked, key=lambda t: t[1])


def tgh_level(rank: int) -> int:
    """Level (1-3) of a kTGH rank."""
    return next(i + 1 for i, end in enumerate(TGH_LEVEL_ENDS) if rank <= end)


def variant_pairs() -> set[frozenset[str]]:
    """Unordered character pairs related by any Unihan variant field."""
    out: set[frozenset[str]] = set()
    for ch, field, value in _records("Unihan_Variants.txt.bz2"):
        if field in VARIANT_FIELDS:
            for m in _CP.finditer(value):
                other = chr(int(m.group(1), 16))
                if other != ch:
                    out.add(frozenset((ch, other)))
    return out


def radicals() -> dict[str, str]:
    """Character -> its (first) kRSUnicode radical number, e.g. '木' -> '75'."""
    return {ch: value.split()[0].split(".")[0] for ch, field, value in _records("Unihan_IRGSources.txt.bz2")
            if field == "kRSUnicode"}


def unihan_version() -> str:
    """The Unicode version of the installed Unihan files (from ReadMe.txt)."""
    text = (UNICODE_DIR / "ReadMe.txt").read_text(encoding="utf-8", errors="replace")
    m = re.search(r"/versions/Unicode([0-9.]+)/", text)
    return m.group(1) if m else "unknown"
