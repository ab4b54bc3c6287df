"""Visual sources, registered by name. Import a source module to register it."""

from rose_gen.sources.base import (
    SOURCES,
    AssetError,
    AssetPair,
    SourceInfo,
    VisualSource,
    load_plugin_sources,
)

__all__ = [
    "SOURCES",
    "AssetError",
    "AssetPair",
    "SourceInfo",
    "VisualSource",
    "load_plugin_sources",
]
