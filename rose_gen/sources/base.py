"""The visual-source contract. A source supplies verified asset pairs and renders tiles.

A source is registered by name in :data:`SOURCES` (built-ins at import time, third-party
packages through the ``rose_gen.sources`` entry-point group). The pipeline never asks
which source it holds: everything subset-specific goes through this interface.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image

from rose_eval.registry import Registry

# AssetPair and AssetError live at the bottom (rose_gen.core) so that assets and rendering
# need not import the sources layer; they are re-exported here as part of the plug-in API.
from rose_gen.core.errors import AssetError
from rose_gen.core.schema import AssetPair


@dataclass(frozen=True)
class SourceInfo:
    """What a source declares about the subset it feeds."""

    name: str  # registry key, e.g. "glyph"
    subset: str  # e.g. "ROSE-ChineseGlyph"
    id_prefix: str  # e.g. "CH" -> CHSCENE_000001, CHITEM_..., CHIMG_...
    primitive_type: str  # e.g. "CHINESE_GLYPH"
    item_seed_base: int  # e.g. 202600000000
    layout_family: str  # key of the grid-size profile family, e.g. "glyph_emoji", "pixel_edit"
    image_split: str = "main"


@runtime_checkable
class VisualSource(Protocol):
    """What every visual source provides.

    Required: ``info``, :meth:`pool`, :meth:`orient`, :meth:`render_tile`.

    Optional hooks (not part of the protocol type; the pipeline looks them up with
    ``getattr`` and works without them). A hook that takes one argument is given the
    subset's ``source_options`` (the same mapping ``pool`` gets), so it can describe
    just the assets of the pool the release used:

    - ``asset_versions() -> dict[str, str]``: asset file or manifest name -> sha256 of
      every file the source reads; recorded per source under ``assets`` in
      ``export_summary.json`` (sorted by key). Absent: an empty mapping is recorded.
    - ``attribution() -> list[dict]``: the asset families the source draws from, with
      their licences, for the release's ``LICENSES.md``. Each record may use
      ``family`` or ``package`` (+ ``package_version``) or ``id``; ``license`` or
      ``licence``; ``url`` or ``upstream``; ``notes``, ``note``, ``copyright`` and
      ``faces`` (see ``rose_gen.release.provenance.normalise_attribution``). Records are merged
      across sources by family.
    - ``licences() -> list[dict]``: the same records under another name; read only when
      ``attribution`` is absent. A source with neither is listed as
      "assets of source <name>" with no licence declared.
    - ``option_keys: frozenset[str]`` (an attribute): the ``source_options`` keys the source
      reads. When present, rose-gen refuses any other key in one line before it draws
      anything (:func:`rose_gen.release.pipeline.check_source_options`).
    """

    info: SourceInfo

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        """All verified undirected pairs usable under ``options``, in a stable order.

        Deterministic: the same options and asset files give the same list. Raises
        ``AssetError`` (one line, naming the missing asset and its package) when an
        asset is not installed.
        """
        ...

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Choose which side is the majority for one scene (draws from ``rng`` only)."""
        ...

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """Render one ``cell_size`` x ``cell_size`` RGB tile; ``role`` is 'majority' or 'target'."""
        ...


#: The two sides of a pair, as ``render_tile`` names them.
ROLES: tuple[str, ...] = ("majority", "target")

__all__ = [
    "ENTRY_POINT_GROUP", "ROLES", "SOURCES", "AssetError", "AssetPair", "SourceInfo", "VisualSource",
    "load_plugin_sources",
]

SOURCES: Registry[VisualSource] = Registry("visual source")

ENTRY_POINT_GROUP = "rose_gen.sources"


def load_plugin_sources() -> list[str]:
    """Register sources advertised by installed packages; returns the names added."""
    from importlib.metadata import entry_points

    added: list[str] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in SOURCES:
            continue
        obj = ep.load()
        source = obj() if isinstance(obj, type) or callable(obj) and not hasattr(obj, "info") else obj
        SOURCES.add(ep.name, source)
        added.append(ep.name)
    return added
