"""Errors shared across stages (the bottom layer: imports nothing from rose_gen).

Each stage keeps its own error class beside its code (``PlanError``, ``RenderError``,
``ReleaseError`` ...); only errors raised low and caught high live here.
"""

from __future__ import annotations


class AssetError(RuntimeError):
    """An asset is missing, unreadable or fails its checksum; the message is one line."""
