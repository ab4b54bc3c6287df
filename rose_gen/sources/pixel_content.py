"""ROSE-PixelContent: two related but distinct pixel-art sprites.

Pairs come from ``assets_manifest/pixel_content_pairs.json``: two sprites of one family
(Dungeon Crawl atlas neighbours with similar silhouette and palette, or members of one
procedural family) whose similarity lies inside the band recorded there and whose
rendered tiles differ visibly at 120 px, chosen for similar palettes and different
shapes (:mod:`rose_gen.assets.pixel.pairs`). Palette swaps (one silhouette, recoloured) are
left out unless the option ``colour_only_pairs: true`` keeps them, and so are pairs that
differ at a glance (some third-by-third block of the 120 px tile changes its mean colour
by more than ``max_block_delta_e``, default 20; ``null`` keeps them). A user's folder gives pairs from its list file
(two names a line), checked the same way. Tiles are nearest-neighbour "stretch" upscales
on a neutral background.

Options (``SubsetPlan.source_options``): see :class:`rose_gen.assets.pixel.library.PixelPoolOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel import user as px_user
from rose_gen.sources import pixel_common as px_pools
from rose_gen.sources.base import SOURCES, AssetPair, SourceInfo


def _pair(a: str, b: str, source: str, family: str, similarity: float, render: dict[str, Any],
          visibility: Mapping[str, Any]) -> AssetPair:
    row_fields = {
        "pair_key": f"{a}__{b}",
        "asset_resize_mode": "stretch",
        "sprite_source": source,
        "sprite_family": family,
        "background_sprite": a,
        "target_sprite": b,
        "similarity": similarity,
        "pair_visibility": {"cell_size": px_sprite.MIN_CELL_SIZE, **visibility},
    }
    return AssetPair(source="pixel_content", majority=a, target=b, pair_key=f"{a}__{b}", row_fields=row_fields,
                     render=render, similarity=similarity)


class PixelContentSource(px_pools.PixelPoolSource):
    """The ``pixel_content`` visual source (see the module docstring).

    Pool: related pairs, manifest order per sprite source; a user folder's pairs by pair key.
    """

    info = SourceInfo(
        name="pixel_content",
        subset="ROSE-PixelContent",
        id_prefix=SUBSET_ID_PREFIX["ROSE-PixelContent"],
        primitive_type="PIXEL_CONTENT",
        item_seed_base=202700000000,
        layout_family="pixel_content",
    )
    manifests = ("pixel_sprites", "pixel_content_pairs")

    @staticmethod
    def _manifest_pool(kind: str, opts: px_pools.PixelPoolOptions) -> list[AssetPair]:
        library = px.default_library()
        out = []
        for p in px.load_pixel_manifest("pixel_content_pairs")["pairs"]:
            if p["source"] != kind or (p["colour_only"] and not opts.colour_only_pairs):
                continue
            if opts.max_block_delta_e is not None and p["block_delta_e"] > opts.max_block_delta_e:
                continue
            for sprite in (p["a"], p["b"]):
                library.entry_named_by("pixel_content_pairs", sprite)
            render = {"a": {"library": "manifest", "sprite": p["a"]}, "b": {"library": "manifest", "sprite": p["b"]}}
            vis = {"changed_fraction": p["changed_fraction"], "ssim": p["ssim"]}
            out.append(_pair(p["a"], p["b"], kind, p["family"], float(p["similarity"]), render, vis))
        return out

    @staticmethod
    def _user_pool(opts: px_pools.PixelPoolOptions) -> list[AssetPair]:
        listing = px_user.read_user_list(opts.user_folder or "", opts.user_list or "")
        if not listing.pairs:
            raise px_sprite.PixelAssetError(f"{opts.user_list}: no pair lines; PixelContent needs two file names a line")
        folder = Path(listing.folder)
        out, seen = [], set()
        for first, second in listing.pairs:
            a, b = sorted((first, second))
            if (a, b) in seen:
                continue
            seen.add((a, b))
            pa, pb = px_user.load_user_sprite(folder, a), px_user.load_user_sprite(folder, b)
            if pa.shape != pb.shape:
                raise px_sprite.PixelAssetError(f"{opts.user_list}: {a} ({pa.shape[1]}x{pa.shape[0]}) and {b} "
                                         f"({pb.shape[1]}x{pb.shape[0]}) differ in size; pair sprites of one size")
            diff = px_sprite.edit_difference(pa, pb)
            if not px_sprite.clears_visibility(diff, px_sprite.EDIT_MARGIN):
                raise px_sprite.PixelAssetError(f"{opts.user_list}: {a} and {b} are not visibly different at "
                                         f"{px_sprite.MIN_CELL_SIZE} px cells; drop the pair")
            render = {"a": {"library": "user", "folder": str(folder), "file": a},
                      "b": {"library": "user", "folder": str(folder), "file": b}}
            vis = {"changed_fraction": round(diff.changed_fraction, 6), "ssim": round(diff.ssim, 6)}
            out.append(_pair(a, b, "user", "user", px_sprite.sprite_similarity(pa, pb), render, vis))
        return sorted(out, key=lambda p: p.pair_key)

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Either sprite is the majority (one fair draw)."""
        if rng.random() < 0.5:
            return pair
        fields = {**pair.row_fields, "background_sprite": pair.target, "target_sprite": pair.majority}
        return replace(pair, majority=pair.target, target=pair.majority, row_fields=fields)

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        """The majority or target sprite, nearest-neighbour stretched to ``cell_size``."""
        name = self.role_name(pair, role)
        side = "a" if name == pair.render["a"].get("sprite", pair.render["a"].get("file")) else "b"
        return px_sprite.render_sprite(px.render_pixels(pair.render[side]), cell_size)


SOURCES.add("pixel_content", PixelContentSource())
