"""ROSE-PixelEdit: a pixel-art sprite beside a copy with one localized edit.

Each pool entry is one base sprite and its verified edit (:mod:`rose_gen.assets.pixel.edits`:
a colour edit in the sprite's own palette or a shape edit, a few source pixels, visible
at 120 px cells and not popping out): from ``assets_manifest/pixel_edit_bases.json`` for
the Dungeon Crawl and procedural sprites, or planned on the fly for a user's folder.
One direction: the majority is always the original asset and the exceptions carry the
edit (``majority_variant: original`` on every row). Tiles are the sprite stretched to the
cell with nearest-neighbour sampling on a neutral background (``asset_resize_mode``
``stretch``, as in v0.1). A pair's ``similarity`` is the SSIM of the two 120 px tiles
measured when the edit was verified.

Row fields: v0.1's ``pair_key`` and ``asset_resize_mode`` first, then ours:
``sprite_source``, ``sprite_family``, ``majority_variant``, ``edit_kind`` (one of
:data:`rose_gen.assets.pixel.edit_kinds.EDIT_KINDS`), ``edit_class`` (``colour`` / ``shape``),
``edit_pixels``, ``edit_fraction``, ``edit_anchor`` and ``edit_visibility``.

Options (``SubsetPlan.source_options``): see :class:`rose_gen.assets.pixel.library.PixelPoolOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen.assets.pixel import edits as pe
from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel import user as px_user
from rose_gen.assets.pixel.edit_kinds import EditSpec
from rose_gen.sources import pixel_common as px_pools
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
        "edit_class": edit["class"],
        "edit_pixels": int(base["changed_pixels"]),
        "edit_fraction": round(int(base["changed_pixels"]) / max(solid, 1), 6),
        "edit_anchor": list(edit["anchor"]),
        "edit_visibility": {"cell_size": px_sprite.MIN_CELL_SIZE, "changed_fraction": base["changed_fraction"],
                            "ssim": base["ssim"], "block_delta_e": base["block_delta_e"]},
    }
    return AssetPair(source="pixel_edit", majority=sprite, target=sprite + EDITED_SUFFIX, pair_key=sprite,
                     row_fields=row_fields, render={**render, "edit": dict(edit)}, similarity=float(base["ssim"]))


class PixelEditSource(px_pools.PixelPoolSource):
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
    def _manifest_pool(kind: str, opts: px_pools.PixelPoolOptions) -> list[AssetPair]:
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
    def _user_pool(opts: px_pools.PixelPoolOptions) -> list[AssetPair]:
        listing = px_user.read_user_list(opts.user_folder or "", opts.user_list or "")
        if not listing.singles:
            raise px_sprite.PixelAssetError(f"{opts.user_list}: no single-file lines; PixelEdit needs one sprite file per line")
        folder = Path(listing.folder)
        out, seen = [], {}
        for name in sorted(set(listing.singles)):
            pixels = px_user.load_user_sprite(folder, name)
            digest = px_sprite.pixel_sha256(pixels)
            if digest in seen:
                raise px_sprite.PixelAssetError(f"{opts.user_list}: {name} has the same pixels as {seen[digest]}; "
                                         "list each sprite once")
            seen[digest] = name
            planned = pe.plan_named_edit(pixels, name)
            if planned is None:
                raise px_sprite.PixelAssetError(f"{folder / name}: no local edit of this sprite is visible at "
                                         f"{px_sprite.MIN_CELL_SIZE} px cells; remove it from {opts.user_list}")
            solid = int(px_sprite.solid_mask(pixels).sum())
            base = pe.base_record(name, "user", f"user-{name}", solid, planned, None)
            render = {"library": "user", "folder": str(folder), "file": name}
            out.append(_pair(name, "user", f"user-{name}", render, base, solid))
        return out

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Always the original asset as the majority: the exceptions carry the edit.

        (Drawing the direction would put the edit on the majority half of the time, so the
        exceptions would be the *un*-edited sprite: the thing to find would be an absence
        spread over the whole grid rather than a local change in a few cells.)
        """
        return pair

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The majority or target sprite, nearest-neighbour stretched to ``cell_size``."""
        name = self.role_name(pair, role)
        if name.endswith(EDITED_SUFFIX):
            pixels = pe.edited_pixels(pair.render, EditSpec.from_json(pair.render["edit"]))
        else:
            pixels = px.render_pixels(pair.render)
        return px_sprite.render_sprite(pixels, cell_size)


SOURCES.add("pixel_edit", PixelEditSource())
