"""The second sprite family: Cataclysm: Dark Days Ahead's MshockXotto+ tileset (Debian).

Debian's ``cataclysm-dda-data`` ships the game's tilesets as regular 32 px grids with a
``tile_config.json`` that names every sprite by game id. Unlike Crawl's packed atlases,
nothing has to be guessed: each grid cell is one drawing. We take the monsters
(``mon_*``) and the items (ids without a terrain, furniture, vehicle, field, trap,
overlay or effect prefix, and not a puddle of liquid) of ``MshockXotto+/tiles.png``, each sprite's first foreground
cell, keep those that pass the near-empty test and the whole-object shape screen
(:func:`rose_gen.assets.pixel.pool.shape_rejection`), and drop duplicate pixels. Sprites are
named ``cdda-<cell index>``; the manifest records the game id as ``name``.

Licence: the package's copyright file puts every file (``Files: *``) under CC-BY-SA-3.0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.pixel import slicing as px_slice
from rose_gen.assets.pixel import sprite as px_sprite

CDDA_GFX_DIR = Path("/usr/share/games/cataclysm-dda/gfx")
CDDA_PACKAGE = "cataclysm-dda-data"
CDDA_TILESET = "MshockXotto+"
CDDA_SHEET = f"{CDDA_TILESET}/tiles.png"
CDDA_CONFIG = f"{CDDA_TILESET}/tile_config.json"
# Game ids that are not one object: terrain, furniture, vehicle parts, fields, traps,
# overlays (worn items, mutations), corpses, effects and interface marks.
NON_OBJECT_PREFIXES: tuple[str, ...] = (
    "overlay_", "t_", "f_", "vp_", "fd_", "tr_", "corpse", "explosion", "lighting", "cursor", "highlight",
    "footstep", "animation", "weather", "unknown", "player_", "npc_", "shadow", "line_", "infrared", "unseen",
    "hit_",
)
# Ids that carry a sort number in front of a terrain or furniture id ("1585_f_table_0"), and
# liquids the tileset draws as an opaque puddle (translucent ones fail the shape screen).
NUMBERED_NON_OBJECT = re.compile(r"^\d+_[ft]_")
PUDDLES: frozenset[str] = frozenset({"blood"})


def cdda_path(relative: str, gfx_dir: Path = CDDA_GFX_DIR) -> Path:
    """A file of the tileset folder; a missing one names the Debian package to install."""
    path = gfx_dir / relative
    if not path.is_file():
        raise px_sprite.PixelAssetError(f"Cataclysm DDA tileset file {path} is missing; install it: "
                                 f"apt-get install {CDDA_PACKAGE}")
    return path


def _first_foreground(entry: Mapping[str, Any]) -> int | None:
    fg = entry.get("fg")
    if isinstance(fg, int):
        return fg
    if isinstance(fg, list) and fg:
        first = fg[0]
        return first if isinstance(first, int) else first.get("sprite")
    return None


def object_cells(config: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(game id, cell index) of every monster and item drawn in the tileset's first file."""
    out = []
    for entry in config["tiles-new"][0]["tiles"]:
        ids = entry["id"] if isinstance(entry["id"], list) else [entry["id"]]
        name = str(ids[0])
        if name.startswith(NON_OBJECT_PREFIXES) or "_season_" in name or NUMBERED_NON_OBJECT.match(name) \
                or name in PUDDLES:
            continue
        cell = _first_foreground(entry)
        if cell is not None:
            out.append((name, int(cell)))
    return out


def cell_box(cell: int, sheet_width: int, size: int = px_sprite.TILE) -> tuple[int, int]:
    """(x, y) of grid cell ``cell`` in a sheet ``sheet_width`` pixels wide."""
    cols = sheet_width // size
    return (cell % cols) * size, (cell // cols) * size


def cdda_library(gfx_dir: Path = CDDA_GFX_DIR) -> tuple[dict[str, Any], list[px.LibrarySprite], list[dict[str, Any]]]:
    """The tileset's sheet record, its whole-object sprites (cell order) and the rejected ones."""
    from assets_manifest import sha256_file

    sheet_path = cdda_path(CDDA_SHEET, gfx_dir)
    config_path = cdda_path(CDDA_CONFIG, gfx_dir)
    config = json.loads(config_path.read_text(encoding="utf-8"))
    rgba = px_sprite.load_rgba(sheet_path)
    sprites: list[px.LibrarySprite] = []
    rejected: list[dict[str, Any]] = []
    seen: set[str] = set()
    cells = object_cells(config)
    for name, cell in sorted(cells, key=lambda t: t[1]):
        x, y = cell_box(cell, rgba.shape[1])
        if y + px_sprite.TILE > rgba.shape[0]:
            continue
        pixels = px_sprite.canonical(rgba[y:y + px_sprite.TILE, x:x + px_sprite.TILE])
        digest = px_sprite.pixel_sha256(pixels)
        if digest in seen or not px_sprite.is_substantial(pixels):
            continue
        seen.add(digest)
        sprite_id = f"cdda-{cell:05d}"
        reason = pixel_pool.shape_rejection(pixels)
        if reason is not None:
            rejected.append({"id": sprite_id, "sheet": CDDA_SHEET, "offset": [x, y], "size": [px_sprite.TILE, px_sprite.TILE],
                             "name": name, "reason": reason})
            continue
        sprites.append(px.LibrarySprite({
            "id": sprite_id, "source": "cdda", "sheet": CDDA_SHEET, "offset": [x, y], "size": [px_sprite.TILE, px_sprite.TILE],
            "mask": None, "sha256": digest, "licence": CDDA_PACKAGE,
            "solid_pixels": int(px_sprite.solid_mask(pixels).sum()), "name": name,
        }, pixels))
    sheet = {"source": "cdda", "sheet": CDDA_SHEET, "file": CDDA_SHEET, "method": "grid", "config": CDDA_CONFIG,
             "config_sha256": sha256_file(config_path), "sha256": sha256_file(sheet_path),
             "object_cells": len(cells), "whole_objects": len(sprites), "in_library": True}
    return sheet, sprites, rejected


def cdda_sprite_pixels(entry: Mapping[str, Any], gfx_dir: Path = CDDA_GFX_DIR) -> np.ndarray:
    """The canvas of a cdda manifest entry, refused unless its sha256 matches."""
    x, y = entry["offset"]
    sheet = px_slice.sheet_file_pixels(cdda_path(entry["sheet"], gfx_dir))
    pixels = px_sprite.canonical(np.array(sheet[y:y + px_sprite.TILE, x:x + px_sprite.TILE], dtype=np.uint8))
    got = px_sprite.pixel_sha256(pixels)
    if got != entry["sha256"]:
        raise px_sprite.PixelAssetError(
            f"sprite {entry['id']}: pixel checksum mismatch in {entry['sheet']} at {x},{y} (manifest "
            f"{entry['sha256'][:12]}…, sheet gives {got[:12]}…); reinstall {CDDA_PACKAGE} or regenerate "
            "assets_manifest with assets_manifest/build/build_pixel.py")
    return pixels
