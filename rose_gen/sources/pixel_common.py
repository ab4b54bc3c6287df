"""What the two pixel-art sources share: pool options, the pool built from the sprite
library, tiles, asset versions and licences (:class:`PixelPoolSource`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_gen.assets.pixel.library import default_library, licence_records
from rose_gen.assets.pixel.slicing import CRAWL_PACKAGE
from rose_gen.assets.pixel.sprite import PixelAssetError
from rose_gen.core.schema import AssetPair
from rose_gen.sources.base import ROLES

POOL_SOURCES: tuple[str, ...] = ("crawl", "cdda", "procedural", "user")

DEFAULT_SPRITES: tuple[str, ...] = ("crawl", "cdda")

CONTENT_MAX_BLOCK_DELTA_E = 20.0  # PixelContent pool: pairs that do not differ at a glance (see pixel_metrics)


@dataclass(frozen=True)
class PixelPoolOptions:
    """Which sprites a pixel source draws from (parsed from a source's ``options``).

    ``sprites``: any of ``crawl``, ``cdda`` (both by default), ``procedural``, ``user``, in pool order.
    ``user_folder`` / ``user_list``: the user's PNG folder and list file (for ``user``).
    ``max_pairs``: an explicit, recorded reduction of the pool to its first entries.
    ``colour_only_pairs``: PixelContent keeps the palette-swap pairs (same silhouette,
    recoloured) that the standard pool leaves out.
    ``max_block_delta_e``: PixelContent keeps only pairs whose 120 px tiles change no
    third-by-third block's mean colour by more than this CIELAB ΔE (default
    :data:`CONTENT_MAX_BLOCK_DELTA_E`; ``null`` keeps every pair): pairs that differ
    in detail rather than at a glance.
    """

    sprites: tuple[str, ...] = DEFAULT_SPRITES
    user_folder: str | None = None
    user_list: str | None = None
    max_pairs: int | None = None
    colour_only_pairs: bool = False
    max_block_delta_e: float | None = CONTENT_MAX_BLOCK_DELTA_E

KNOWN_POOL_OPTIONS = frozenset({"sprites", "user_folder", "user_list", "max_pairs", "colour_only_pairs",
                                "max_block_delta_e"})


def parse_pool_options(options: Mapping[str, Any]) -> PixelPoolOptions:
    """Validate pixel pool options; unknown values are one clear line."""
    raw = options.get("sprites", DEFAULT_SPRITES)
    sprites = (raw,) if isinstance(raw, str) else tuple(raw)
    bad = [s for s in sprites if s not in POOL_SOURCES]
    if bad or not sprites or len(set(sprites)) != len(sprites):
        raise PixelAssetError(f"pixel source option sprites={list(sprites)!r} is invalid; "
                              f"use distinct values from {', '.join(POOL_SOURCES)}")
    folder, listing = options.get("user_folder"), options.get("user_list")
    if "user" in sprites and (not folder or not listing):
        raise PixelAssetError("pixel source option sprites includes 'user' but user_folder or user_list is not set")
    max_pairs = options.get("max_pairs")
    if max_pairs is not None and (not isinstance(max_pairs, int) or max_pairs < 1):
        raise PixelAssetError(f"pixel source option max_pairs={max_pairs!r} must be a positive integer")
    colour_only = options.get("colour_only_pairs", False)
    if not isinstance(colour_only, bool):
        raise PixelAssetError(f"pixel source option colour_only_pairs={colour_only!r} must be true or false")
    cap = options.get("max_block_delta_e", PixelPoolOptions.max_block_delta_e)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int | float) or cap <= 0):
        raise PixelAssetError(f"pixel source option max_block_delta_e={cap!r} must be a positive number or null")
    unknown = sorted(set(options) - KNOWN_POOL_OPTIONS)
    if unknown:
        raise PixelAssetError(f"unknown pixel source option(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(KNOWN_POOL_OPTIONS))}")
    return PixelPoolOptions(sprites, str(folder) if folder else None, str(listing) if listing else None, max_pairs,
                            colour_only, None if cap is None else float(cap))

SHEET_PACKAGES = {"crawl": CRAWL_PACKAGE, "cdda": "cataclysm-dda-data"}


def asset_versions(manifests: Sequence[str]) -> dict[str, str]:
    """sha256 of the sprite sheets in the library (and tileset configs) and of the given pixel manifests."""
    from assets_manifest import manifest_path, sha256_file

    lib = default_library()
    out = {f"{SHEET_PACKAGES[s['source']]}:{s['file']}": s["sha256"] for s in lib.manifest["sheets"] if s["in_library"]}
    out.update({f"{SHEET_PACKAGES[s['source']]}:{s['config']}": s["config_sha256"]
                for s in lib.manifest["sheets"] if s.get("config")})
    for name in manifests:
        out[f"assets_manifest:{name}.json"] = sha256_file(manifest_path(name))
    return dict(sorted(out.items()))

SPRITE_SOURCES = ("crawl", "cdda", "procedural")  # licence records every pixel subset names



class PixelPoolSource:
    """What the two pixel-art sources share: the pool walk over sprite sources, the role
    check, asset versions and licences.

    A subclass sets ``info`` and ``manifests`` (the pixel manifests it reads besides the
    atlases) and supplies ``_manifest_pool(kind)`` and ``_user_pool(opts)``.
    """

    option_keys = KNOWN_POOL_OPTIONS

    manifests: tuple[str, ...] = ()
    fills_cell = True  # stretched edge to edge: rose_gen.render.compose insets every tile to keep the frame margin

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        """Pool entries in a stable order: sprite sources in option order, then each source's order."""
        opts = parse_pool_options(options)
        pairs: list[AssetPair] = []
        for kind in opts.sprites:
            pairs.extend(self._user_pool(opts) if kind == "user" else self._manifest_pool(kind, opts))
        return pairs[: opts.max_pairs] if opts.max_pairs else pairs

    @staticmethod
    def _manifest_pool(kind: str, opts: PixelPoolOptions) -> list[AssetPair]:
        raise NotImplementedError

    @staticmethod
    def _user_pool(opts: PixelPoolOptions) -> list[AssetPair]:
        raise NotImplementedError

    @staticmethod
    def role_name(pair: AssetPair, role: str) -> str:
        """The pair's majority or target name (ValueError for any other role)."""
        if role not in ROLES:
            raise ValueError(f"role must be 'majority' or 'target', got {role!r}")
        return pair.majority if role == "majority" else pair.target

    def asset_versions(self) -> dict[str, str]:
        """sha256 of the atlases and manifests this source reads (recorded in the release)."""
        return asset_versions(self.manifests)

    def licences(self) -> list[dict[str, Any]]:
        """Licence records of the sprite sources this subset can draw from."""
        return licence_records(default_library().manifest, SPRITE_SOURCES)
