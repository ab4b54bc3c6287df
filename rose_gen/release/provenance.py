"""A release's provenance: library versions, the sources' asset checksums and licences.

What ``export_summary.json``, the card and ``LICENSES.md`` record besides rows and files;
``rose-verify`` compares a release's record with the installed versions and assets.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any

from rose_gen.sources import SOURCES

if TYPE_CHECKING:  # workers import the pipeline, which imports this module: keep Hydra and pyarrow out
    from rose_gen.release.config import GenConfig
    from rose_gen.release.export import ReleaseInfo

# Python packages whose versions can change the bytes of a release.
RENDER_LIBRARIES: tuple[str, ...] = ("numpy", "pillow", "pyarrow", "fonttools", "cairosvg", "cairocffi",
                                     "scikit-image", "scipy", "emoji", "pyyaml", "imagecodecs")



def library_versions() -> dict[str, str]:
    """Versions of the generator and of every library that can change output bytes."""
    from PIL import features

    versions = {"rose-toolkit": _version("rose-toolkit"), "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for name in RENDER_LIBRARIES:
        versions[name] = _version(name)
    versions["zlib (pillow)"] = str(features.version("zlib"))
    versions["freetype2 (pillow)"] = str(features.version("freetype2"))
    versions["cairo"] = cairo_version()
    versions["libpng (imagecodecs)"] = libpng_version()
    versions["zlib-ng (imagecodecs)"] = zlibng_version()
    return versions


def zlibng_version() -> str:
    """The zlib-ng that imagecodecs bundles (render.png_encoder=zlibng-up compresses with it)."""
    try:
        import imagecodecs
    except ImportError:
        return "not installed"
    return str(imagecodecs.zlibng_version())


def libpng_version() -> str:
    """The libpng that imagecodecs bundles (render.png_encoder=libpng-up writes with it)."""
    try:
        import imagecodecs
    except ImportError:
        return "not installed"
    return str(imagecodecs.png_version())


def cairo_version() -> str:
    """Version of the system cairo library (what cairosvg renders with), without importing cairocffi."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("cairo")
    if name is None:
        return "not installed"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return "not installed"
    lib.cairo_version_string.restype = ctypes.c_char_p
    return lib.cairo_version_string().decode()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


SourceUse = tuple[str, Mapping[str, Any]]


def source_uses(plans: Iterable[Any], used: Iterable[str]) -> list[SourceUse]:
    """(source name, source_options) of every subset plan whose source a release used."""
    used = set(used)
    return [(p.source, p.source_options) for p in plans if p.source in used]


def _call_source_hook(name: str, hooks: tuple[str, ...], options: Mapping[str, Any]) -> Any:
    """Call the first hook the source has; a hook taking an argument gets the subset's source_options."""
    source = SOURCES.get(name)
    for attr in hooks:
        hook: Callable[..., Any] | None = getattr(source, attr, None)
        if hook is not None:
            return hook(dict(options)) if inspect.signature(hook).parameters else hook()
    return None


def source_assets(uses: Iterable[SourceUse]) -> dict[str, dict[str, str]]:
    """Per source, sha256 of every asset file it declares for the options used (``asset_versions()``)."""
    out: dict[str, dict[str, str]] = {}
    for name, options in uses:
        declared = _call_source_hook(name, ("asset_versions",), options) or {}
        out[name] = dict(sorted({**out.get(name, {}), **declared}.items()))
    return dict(sorted(out.items()))


def normalise_attribution(entry: Mapping[str, Any], source: str) -> dict[str, Any]:
    """One licence record in the release's shape: family, license, url, notes.

    Sources describe licences in their own words (``family`` or ``package``, ``license``
    or ``licence``, ``url`` or ``upstream``, ``notes``/``note``/``copyright``).
    """
    family = entry.get("family") or entry.get("package") or entry.get("id") or f"assets of source {source}"
    if entry.get("package_version") and not entry.get("family"):
        family = f"{family} {entry['package_version']}"
    notes = [str(entry[k]) for k in ("notes", "note", "copyright") if entry.get(k)]
    if entry.get("faces"):
        notes.append("faces: " + ", ".join(map(str, entry["faces"])))
    return {"family": str(family),
            "license": str(entry.get("license") or entry.get("licence") or "licence not declared by the source"),
            "url": str(entry.get("url") or entry.get("upstream") or ""),
            "notes": " ".join(notes)}


def source_attributions(uses: Iterable[SourceUse]) -> list[dict[str, Any]]:
    """Asset families with licences, merged over sources (``attribution()`` or ``licences()``)."""
    merged: dict[str, dict[str, Any]] = {}
    for name, options in uses:
        entries = _call_source_hook(name, ("attribution", "licences"), options)
        for entry in entries or [{"family": f"assets of source {name}"}]:
            record = normalise_attribution(entry, name)
            slot = merged.setdefault(record["family"], {**record, "sources": []})
            if name not in slot["sources"]:
                slot["sources"].append(name)
    return [merged[k] for k in sorted(merged)]


def release_info(config: GenConfig) -> ReleaseInfo:
    """The release's provenance: recorded config, library versions, asset checksums, licences.

    It covers every subset of the config (each plans at least one scene), so every shard of
    a release records the same provenance.
    """
    from rose_gen.release.export import ReleaseInfo

    uses = source_uses(config.plans, (plan.source for plan in config.plans))
    return ReleaseInfo(config=config.recorded, versions=library_versions(), assets=source_assets(uses),
                       attributions=source_attributions(uses))
