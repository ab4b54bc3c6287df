"""Visual sources, registered by name in :data:`SOURCES`.

Built-in sources register themselves when their module is imported;
:func:`load_sources` imports every built-in module and the installed plug-ins
(entry-point group ``rose_gen.sources``) once.
"""

from __future__ import annotations

import importlib

from rose_gen.sources.base import (
    SOURCES,
    AssetError,
    AssetPair,
    SourceInfo,
    VisualSource,
    load_plugin_sources,
)

# Modules that register a built-in source on import (one per v0.1 subset).
BUILTIN_SOURCE_MODULES: tuple[str, ...] = (
    "rose_gen.sources.glyph",
    "rose_gen.sources.emoji_style",
    "rose_gen.sources.emoji_content",
    "rose_gen.sources.pixel_edit",
    "rose_gen.sources.pixel_content",
)

_loaded = False


def load_sources() -> list[str]:
    """Import built-in sources and installed plug-ins; return all registered names."""
    global _loaded
    if not _loaded:
        for module in BUILTIN_SOURCE_MODULES:
            importlib.import_module(module)
        load_plugin_sources()
        _loaded = True
    return SOURCES.names()


__all__ = [
    "BUILTIN_SOURCE_MODULES",
    "SOURCES",
    "AssetError",
    "AssetPair",
    "SourceInfo",
    "VisualSource",
    "load_plugin_sources",
    "load_sources",
]
