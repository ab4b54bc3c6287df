"""ROSE-PixelEdit: a pixel-art sprite beside a copy with one localized edit.

Each pool entry is one base sprite and its verified edit (one contiguous patch of a few
percent of the sprite's pixels recoloured, added or removed, visible at 120 px cells):
from ``assets_manifest/pixel_edit_bases.json`` for the Dungeon Crawl and procedural
sprites, or planned on the fly for a user's folder. Tiles are the sprite stretched to the
cell with nearest-neighbour sampling on a neutral background (``asset_resize_mode``
``stretch``, as in v0.1). A pair's ``similarity`` is the SSIM of the two 120 px tiles
measured when the edit was verified.

Options (``SubsetPlan.source_options``): see :class:`rose_gen.pixel_assets.PixelPoolOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen import pixel_assets as px
from rose_gen.sources.base import SOURCES, AssetPair, SourceInfo

EDITED_SUFFIX = "+edit"


def _pair(sprite: str, source: str, family: str, render: dict[str, Any], base: Mapping[str, Any],
          solid: int) -> AssetPair:
    edit = base["edit"]
    row_fields = {
        "pair_key": sprite,
        "asset_resize_mode": "stretch",
        "sprite_source": source,
        "sprite_family": family,
        "majority_variant": "original",
        "edit_kind": edit["kind"],
        "edit_pixels": int(base["changed_pixels"]),
        "edit_fraction": round(int(base["changed_pixels"]) / max(solid, 1), 6),
        "edit_anchor": list(edit["anchor"]),
        "edit_visibility": {"cell_size": px.MIN_CELL_SIZE, "changed_fraction": base["changed_fraction"],
                            "ssim": base["ssim"]},
    }
    return AssetPair(source="pixel_edit", majority=sprite, target=sprite + EDITED_SUFFIX, pair_key=sprite,
                     row_fields=row_fields, render={**render, "edit": dict(edit)}, similarity=float(base["ssim"]))


class PixelEditSource(px.PixelPoolSource):
    """The ``pixel_edit`` visual source (see the module docstring).

    Pool: base sprites with their edits, manifest order per sprite source; a user folder's
    sprites by file name.
    """

    info = SourceInfo(
        name="pixel_edit",
        subset="ROSE-PixelEdit",
        id_prefix=SUBSET_ID_PREFIX["ROSE-PixelEdit"],
        primitive_type="PIXEL_EDIT",
        item_seed_base=202700000000,
        layout_family="pixel_edit",
    )
    manifests = ("pixel_sprites", "pixel_edit_bases")

    @staticmethod
    def _manifest_pool(kind: str) -> list[AssetPair]:
        library = px.default_library()
        out = []
        for base in px.load_pixel_manifest("pixel_edit_bases")["bases"]:
            if base["source"] != kind:
                continue
            entry = library.entry_named_by("pixel_edit_bases", base["sprite"])
            render = {"library": "manifest", "sprite": base["sprite"], "edited_sha256": base["edited_sha256"]}
            out.append(_pair(base["sprite"], kind, entry["family"], render, base, int(entry["solid_pixels"])))
        return out

    @staticmethod
    def _user_pool(opts: px.PixelPoolOptions) -> list[AssetPair]:
        listing = px.read_user_list(opts.user_folder or "", opts.user_list or "")
        if not listing.singles:
            raise px.PixelAssetError(f"{opts.user_list}: no single-file lines; PixelEdit needs one sprite file per line")
        folder = Path(listing.folder)
        out, seen = [], {}
        for name in sorted(set(listing.singles)):
            pixels = px.load_user_sprite(folder, name)
            digest = px.pixel_sha256(pixels)
            if digest in seen:
                raise px.PixelAssetError(f"{opts.user_list}: {name} has the same pixels as {seen[digest]}; "
                                         "list each sprite once")
            seen[digest] = name
            planned = px.plan_edit(pixels, px.edit_rng(0, f"user-{name}"))
            if planned is None:
                raise px.PixelAssetError(f"{folder / name}: no local edit of this sprite is visible at "
                                         f"{px.MIN_CELL_SIZE} px cells; remove it from {opts.user_list}")
            base = {"edit": planned.edit.to_json(), "changed_pixels": planned.changed_pixels,
                    "changed_fraction": planned.changed_fraction, "ssim": planned.ssim}
            render = {"library": "user", "folder": str(folder), "file": name}
            solid = int(px.solid_mask(pixels).sum())
            out.append(_pair(name, "user", f"user-{name}", render, base, solid))
        return out

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Either the original or the edited copy is the majority (one fair draw)."""
        if rng.random() < 0.5:
            return pair
        return replace(pair, majority=pair.target, target=pair.majority,
                       row_fields={**pair.row_fields, "majority_variant": "edited"})

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The majority or target sprite, nearest-neighbour stretched to ``cell_size``."""
        name = self.role_name(pair, role)
        if name.endswith(EDITED_SUFFIX):
            pixels = px.edited_pixels(pair.render, px.EditSpec.from_json(pair.render["edit"]))
        else:
            pixels = px.render_pixels(pair.render)
        return px.render_sprite(pixels, cell_size)


SOURCES.add("pixel_edit", PixelEditSource())
