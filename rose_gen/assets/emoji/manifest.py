"""The emoji manifests (``assets_manifest/emoji_*.json``): identity records, their recorded
verification, vendor records and licences, and the manifests' checksums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from assets_manifest import ManifestError, load_manifest, manifest_path, sha256_file
from rose_gen.assets.emoji.artwork import ART_MARGIN
from rose_gen.assets.emoji.catalogue import EmojiAssetError
from rose_gen.assets.emoji.fit import FIT_VERSION
from rose_gen.assets.emoji.vendors import ARTWORK_NAMES, LICENCE_NOTES, VENDOR_URLS


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


def identity_records() -> Mapping[str, dict[str, Any]]:
    """Key -> identity record of ``emoji_style_identities.json`` (read-only; indexed once per
    parsed manifest: sources ask for it once a scene)."""
    doc = emoji_manifest("emoji_style_identities")
    indexed = _INDEXED.get("emoji_style_identities")
    if indexed is None or indexed[0] is not doc:
        indexed = (doc, MappingProxyType(_identity_records(doc)))
        _INDEXED["emoji_style_identities"] = indexed
    return indexed[1]


# Manifest name -> (the parsed document, its index): one entry per manifest, replaced when the file changes.
_INDEXED: dict[str, tuple[Any, Mapping[str, dict[str, Any]]]] = {}


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


def manifest_versions(names: Iterable[str]) -> dict[str, str]:
    """sha256 of the emoji manifests a source reads (they pin every asset file's sha256)."""
    return {f"assets_manifest/{n}.json": sha256_file(manifest_path(n)) for n in names}
