"""Pixel-art sprite library for ROSE-PixelEdit and ROSE-PixelContent: every sprite the pools
draw from, with its family, checked against ``assets_manifest/pixel_sprites.json``.

Four clearly separated sprite sources, all reduced to RGBA ``uint8`` arrays
(:mod:`rose_gen.assets.pixel.sprite`):

- ``crawl``: Dungeon Crawl Stone Soup tiles from Debian's ``crawl-tiles-data``. The
  atlases are packed by Crawl's tile packer: each 32x32 tile is trimmed to its bounding
  box and the boxes are stacked in shelves with no gap between them. We slice regular
  sheets (``floor``, ``wall``) on the 32 px grid and packed sheets (``main``, ``player``,
  ``feat``) by alpha connected components, splitting components larger than one tile
  with guillotine cuts along the line that crosses the fewest opaque pixel contacts
  (:mod:`rose_gen.assets.pixel.slicing`).
  Pieces are centred on a 32x32 canvas, near-empty pieces are dropped and duplicates
  (same canonical pixels) removed; what is not one whole object is screened out
  (:mod:`rose_gen.assets.pixel.pool`).
- ``cdda``: the Cataclysm DDA MshockXotto+ tileset from Debian's ``cataclysm-dda-data``,
  a named 32 px grid (:mod:`rose_gen.assets.pixel.cdda`).
- ``procedural``: a deterministic family generator (palette ramps, mirrored silhouette,
  outline, light-from-top-left shading; :mod:`rose_gen.assets.pixel.procedural`); every draw
  comes from :mod:`rose_gen.core.rng`.
- ``user``: a folder of PNGs plus a list file, checked the same way (readable, not
  near-empty, optional ``SHA256SUMS`` checksums; :mod:`rose_gen.assets.pixel.user`).

Local edits (PixelEdit) live in :mod:`rose_gen.assets.pixel.edits`, PixelContent pair choice in
:mod:`rose_gen.assets.pixel.pairs`, the shortcut measures in :mod:`rose_gen.assets.pixel.metrics`;
the pool both pixel sources draw from in :mod:`rose_gen.sources.pixel_common`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.pixel.procedural import procedural_family, procedural_sprite_pixels
from rose_gen.assets.pixel.slicing import (
    CRAWL_PACKAGE,
    CRAWL_SHEETS,
    CRAWL_TILE_DIR,
    crawl_sheet_path,
    crawl_sprite_pixels,
    sheet_pixels,
    slice_sheet,
)
from rose_gen.assets.pixel.sprite import (
    TILE,
    PixelAssetError,
    encode_mask,
    pixel_sha256,
    solid_mask,
    sprite_similarity,
)
from rose_gen.assets.pixel.user import cached_user_pixels


class SpriteLibrary:
    """Manifest-backed sprites: id -> entry, and verified pixels on demand (cached)."""

    def __init__(self, manifest: Mapping[str, Any], tile_dir: Path = CRAWL_TILE_DIR) -> None:
        self.manifest = manifest
        self.tile_dir = tile_dir
        self.entries: dict[str, Mapping[str, Any]] = {e["id"]: e for e in manifest["sprites"]}
        self.procedural_seed = int(manifest.get("procedural", {}).get("seed", 0))
        self._pixels: dict[str, np.ndarray] = {}
        self._checked_sheets: set[str] = set()

    def entry_named_by(self, manifest_name: str, sprite_id: str) -> Mapping[str, Any]:
        """The entry of a sprite another pixel manifest names (one line saying how to rebuild if absent)."""
        entry = self.entries.get(sprite_id)
        if entry is None:
            raise PixelAssetError(f"{manifest_name}.json names sprite {sprite_id} missing from "
                                  "pixel_sprites.json; regenerate with assets_manifest/build/build_pixel.py")
        return entry

    def check_sheet(self, sheet: str) -> None:
        """Refuse a sprite sheet (Crawl atlas or Cataclysm tileset) whose file checksum differs
        from the manifest."""
        if sheet in self._checked_sheets:
            return
        from assets_manifest import ManifestError, check_file

        info = next((s for s in self.manifest["sheets"] if s["sheet"] == sheet), None)
        if info is None:
            raise PixelAssetError(f"sheet {sheet!r} is not in the pixel sprite manifest")
        try:
            if info["source"] == "cdda":
                from rose_gen.assets.pixel.cdda import CDDA_GFX_DIR, CDDA_PACKAGE

                check_file(CDDA_GFX_DIR / sheet, info["sha256"], what=f"Cataclysm DDA tileset {sheet}",
                           package=CDDA_PACKAGE)
            else:
                check_file(crawl_sheet_path(sheet, self.tile_dir), info["sha256"],
                           what=f"Dungeon Crawl atlas {sheet}", package=CRAWL_PACKAGE)
        except ManifestError as exc:
            raise PixelAssetError(str(exc)) from None
        self._checked_sheets.add(sheet)

    def pixels(self, sprite_id: str) -> np.ndarray:
        """Verified 32x32 RGBA canvas of a sprite."""
        if sprite_id not in self._pixels:
            entry = self.entries.get(sprite_id)
            if entry is None:
                raise PixelAssetError(f"sprite {sprite_id!r} is not in the pixel sprite manifest")
            if entry["source"] == "crawl":
                self.check_sheet(entry["sheet"])
                arr = crawl_sprite_pixels(entry, self.tile_dir)
            elif entry["source"] == "cdda":
                from rose_gen.assets.pixel.cdda import cdda_sprite_pixels

                self.check_sheet(entry["sheet"])
                arr = cdda_sprite_pixels(entry)
            elif entry["source"] == "procedural":
                arr = procedural_sprite_pixels(entry, self.procedural_seed)
            else:
                raise PixelAssetError(f"sprite {sprite_id!r} has unknown source {entry['source']!r}")
            arr.setflags(write=False)
            self._pixels[sprite_id] = arr
        return self._pixels[sprite_id]


def licence_records(manifest: Mapping[str, Any], sources: Iterable[str]) -> list[dict[str, Any]]:
    """The manifest's licence records for the given sprite sources (stable order)."""
    wanted = set(sources)
    return [dict(rec) for rec in manifest["licences"] if rec["source"] in wanted]

LIBRARY_SHEETS: tuple[str, ...] = ("feat", "main", "player")  # component-sliced sprite sheets

FAMILY_RADIUS = (48, 40)  # max |dx|, |dy| between box centres of atlas neighbours

FAMILY_MIN_SIMILARITY = 0.6

CONTENT_BAND = (0.68, 0.95)  # PixelContent: related (>= lo) but distinct (<= hi, and visible)

EDIT_MIN_SOLID = 160  # edit bases need enough pixels for a patch of a few percent

PROCEDURAL_FAMILIES = 100

PROCEDURAL_MEMBERS = 4


@dataclass(frozen=True)
class LibrarySprite:
    """A manifest entry being built, with its canvas."""

    entry: dict[str, Any]
    pixels: np.ndarray


def crawl_library(tile_dir: Path = CRAWL_TILE_DIR) -> tuple[list[dict[str, Any]], list[LibrarySprite],
                                                          list[dict[str, Any]]]:
    """Slice every library sheet: per-sheet counts, the deduplicated sprites that pass the
    whole-object screen (:mod:`rose_gen.assets.pixel.pool`), in sheet order, and the rejected ones
    with their reasons."""
    from assets_manifest import sha256_file

    sheets: list[dict[str, Any]] = []
    sprites: list[LibrarySprite] = []
    rejected: list[dict[str, Any]] = []
    seen: set[str] = set()
    made: list[str] = []
    for spec in CRAWL_SHEETS:
        found, pieces = slice_sheet(spec, tile_dir)
        kept = screened = 0
        for i, s in enumerate(found):
            digest = pixel_sha256(s.pixels)
            if digest in seen:
                continue
            seen.add(digest)
            kept += 1
            if spec.name not in LIBRARY_SHEETS:
                continue
            sprite_id = f"crawl-{spec.name}-{i:04d}"
            made.append(sprite_id)
            reason = pixel_pool.screen(sprite_id, s.pixels)
            if reason is not None:
                rejected.append({"id": sprite_id, "sheet": spec.name, "offset": [s.x, s.y], "size": [s.w, s.h],
                                 "reason": reason})
                continue
            screened += 1
            box = sheet_pixels(spec.name, tile_dir)[s.y:s.y + s.h, s.x:s.x + s.w, 3] > 0
            needs_mask = s.mask is not None and bool((box & ~s.mask).any())
            entry = {
                "id": sprite_id, "source": "crawl", "sheet": spec.name,
                "offset": [s.x, s.y], "size": [s.w, s.h],
                "mask": encode_mask(s.mask) if needs_mask else None,
                "sha256": digest, "licence": "crawl-tiles-data",
                "solid_pixels": int(solid_mask(s.pixels).sum()),
            }
            sprites.append(LibrarySprite(entry, s.pixels))
        sheets.append({
            "source": "crawl", "sheet": spec.name, "file": f"{spec.name}.png", "method": spec.method,
            "sha256": sha256_file(crawl_sheet_path(spec.name, tile_dir)), "pieces": pieces,
            "substantial": len(found), "unique": kept, "in_library": spec.name in LIBRARY_SHEETS,
            "whole_objects": screened,
        })
    try:
        pixel_pool.check_listed_ids(made)
    except ValueError as exc:
        raise PixelAssetError(str(exc)) from None
    return sheets, sprites, rejected


def procedural_library(seed: int, families: int = PROCEDURAL_FAMILIES,
                       members: int = PROCEDURAL_MEMBERS) -> list[LibrarySprite]:
    """All procedural sprites, family by family (each sprite labelled source 'procedural')."""
    out: list[LibrarySprite] = []
    for f in range(families):
        for m, pixels in enumerate(procedural_family(seed, f, members)):
            out.append(LibrarySprite({
                "id": f"proc-f{f:03d}-m{m}", "source": "procedural", "sheet": "procedural",
                "offset": [0, 0], "size": [TILE, TILE], "mask": None, "sha256": pixel_sha256(pixels),
                "licence": "procedural", "solid_pixels": int(solid_mask(pixels).sum()),
                "family": f"proc-f{f:03d}", "family_index": f, "member": m, "members": members,
            }, pixels))
    return out


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def neighbour_edges(sprites: Sequence[LibrarySprite]) -> list[tuple[int, int, float]]:
    """(i, j, similarity) for atlas neighbours: same sheet, box centres within FAMILY_RADIUS."""
    cx = np.array([e.entry["offset"][0] + e.entry["size"][0] / 2 for e in sprites])
    cy = np.array([e.entry["offset"][1] + e.entry["size"][1] / 2 for e in sprites])
    sheet = np.array([e.entry["sheet"] for e in sprites])
    edges = []
    for i in range(len(sprites)):
        near = np.nonzero((sheet == sheet[i]) & (np.abs(cx - cx[i]) <= FAMILY_RADIUS[0])
                          & (np.abs(cy - cy[i]) <= FAMILY_RADIUS[1]))[0]
        for j in near[near > i]:
            edges.append((i, int(j), sprite_similarity(sprites[i].pixels, sprites[int(j)].pixels)))
    return edges


def assign_atlas_families(sprites: Sequence[LibrarySprite], edges: Sequence[tuple[int, int, float]]) -> None:
    """Set ``family`` on every entry: connected sheet neighbours of similarity >= the family minimum."""
    uf = _UnionFind(len(sprites))
    for i, j, sim in edges:
        if sim >= FAMILY_MIN_SIMILARITY:
            uf.union(i, j)
    for i, s in enumerate(sprites):
        root = sprites[uf.find(i)].entry["id"]
        s.entry["family"] = f"fam-{root}"


@lru_cache(maxsize=1)
def default_library() -> SpriteLibrary:
    """The sprite library of the committed manifest (loaded once per process)."""
    from assets_manifest import ManifestError, load_manifest

    try:
        return SpriteLibrary(load_manifest("pixel_sprites"))
    except ManifestError as exc:
        raise PixelAssetError(str(exc)) from None


@lru_cache(maxsize=4)
def load_pixel_manifest(name: str) -> Any:
    """A pixel manifest (``pixel_edit_bases`` / ``pixel_content_pairs``), as one-line errors."""
    from assets_manifest import ManifestError, load_manifest

    try:
        return load_manifest(name)
    except ManifestError as exc:
        raise PixelAssetError(str(exc)) from None


def render_pixels(render: Mapping[str, Any]) -> np.ndarray:
    """Verified pixels of the sprite a pair's ``render`` entry names (manifest or user folder)."""
    if render.get("library") == "user":
        return cached_user_pixels(str(render["folder"]), str(render["file"]))
    return default_library().pixels(str(render["sprite"]))
