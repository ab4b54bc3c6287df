"""Helpers shared by this folder's tests."""

from __future__ import annotations

from rose_gen.assets.emoji.artwork import EmojiAsset, asset_from_record
from rose_gen.assets.emoji.manifest import identity_records

KNOWN = "1f9eb"  # petri dish: present in all three vendors

def asset(vendor: str, key: str = KNOWN) -> EmojiAsset:
    return asset_from_record(vendor, key, identity_records()[key]["files"][vendor])
