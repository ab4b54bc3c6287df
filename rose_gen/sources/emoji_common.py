"""What the two emoji sources share: the render spec of a pair's side, the fitted share of a
pair, drawing a side, and :class:`EmojiPairSource` (pool, orientation, tiles, licences).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PIL import Image

from rose_gen.assets.emoji.artwork import EmojiAsset, render_asset
from rose_gen.assets.emoji.fit import fit_share
from rose_gen.assets.emoji.manifest import manifest_versions, vendor_licences
from rose_gen.assets.emoji.vendors import STYLE_VENDORS
from rose_gen.core.schema import AssetPair
from rose_gen.sources.base import ROLES


def asset_spec(record: Mapping[str, Any], vendor: str, *, fit: float | None = None) -> dict[str, Any]:
    """The render entry of an identity record drawn by ``vendor``: vendor, key, path, sha256,
    and ``fit``, the ink-box area share the art is scaled to, when given."""
    f = record["files"][vendor]
    spec: dict[str, Any] = {"vendor": vendor, "key": record["key"], "path": f["path"], "sha256": f["sha256"]}
    if fit is not None:
        spec["fit"] = fit
    return spec


def pair_fit(record: Mapping[str, Any], vendors: Iterable[str]) -> float:
    """The ink-box area share an identity's drawings by ``vendors`` can all be scaled to
    (:func:`rose_gen.assets.emoji.fit.fit_share` of their recorded ink boxes)."""
    boxes = record["art_fit"]["ink_box"]
    return fit_share(boxes[v] for v in vendors)


def render_role(pair: AssetPair, role: str, cell_size: int) -> Image.Image:
    """Render the ``majority`` or ``target`` asset of an emoji pair (checksum-checked, cached)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    spec = pair.render[role]
    return render_asset(EmojiAsset(vendor=spec["vendor"], key=spec["key"], path=spec["path"],
                                   sha256=spec["sha256"]), cell_size, fit=spec.get("fit"))


class EmojiPairSource:
    """What the two emoji sources share: role tiles, vendor licences and manifest versions.

    A subclass sets ``info`` and ``manifests`` (the manifests that pin its emoji files) and
    supplies ``pool`` and ``orient``.
    """

    manifests: tuple[str, ...] = ()

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The role's asset (``pair.render[role]``): ``cell_size`` square RGB on white."""
        return render_role(pair, role, cell_size)

    def vendors_used(self, options: Mapping[str, Any]) -> list[str]:
        """The vendors whose artwork scenes drawn with ``options`` can show (sorted)."""
        return sorted(STYLE_VENDORS)

    def licences(self, options: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
        """Licence entries of the vendors ``options`` draw from (all three without options)."""
        return vendor_licences(STYLE_VENDORS if options is None else self.vendors_used(options))

    def attribution(self, options: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
        """Same as :meth:`licences` (the name the pipeline asks for)."""
        return self.licences(options)

    def asset_versions(self) -> dict[str, str]:
        """sha256 of the manifests that pin every emoji file's sha256."""
        return manifest_versions(list(self.manifests))
