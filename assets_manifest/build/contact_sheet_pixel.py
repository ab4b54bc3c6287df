"""Contact sheets of the pixel-art library, for a person to look at.

    .venv/bin/python assets_manifest/build/contact_sheet_pixel.py [--out out/pixel_contact] [--n 48]

Writes PNGs: ``pool_<source>_<page>.png`` (every library sprite of a source, 300 a page,
in id order: the whole pool, to look at), ``procedural.png`` (families as rows),
``pixel_edit.png`` (original | edited | changed pixels in red, at the 120 px cell size the
edit was verified for), ``pixel_edit_<kind>.png`` (the same, one kind a sheet) and
``pixel_content.png`` (pairs). The samples are evenly spaced over each pool, so every run
shows the same images.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.edit_kinds import EDIT_KINDS
from rose_gen.sources.pixel_content import PixelContentSource
from rose_gen.sources.pixel_edit import PixelEditSource

GAP = 4
POOL_PAGE = 300
PAPER = (255, 255, 255)


def grid(tiles: Sequence[Image.Image], cols: int, gap: int = GAP) -> Image.Image:
    """Tiles of one size in rows of ``cols`` on white paper."""
    w, h = tiles[0].size
    rows = (len(tiles) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * (w + gap) + gap, rows * (h + gap) + gap), PAPER)
    for i, tile in enumerate(tiles):
        sheet.paste(tile, (gap + (i % cols) * (w + gap), gap + (i // cols) * (h + gap)))
    return sheet


def evenly(items: Sequence, n: int) -> list:
    """``n`` items evenly spaced over ``items`` (all when there are fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[int(i)] for i in np.linspace(0, len(items) - 1, n)]


def diff_tile(a: Image.Image, b: Image.Image) -> Image.Image:
    """``b`` greyed out, with the pixels that differ from ``a`` in red."""
    aa, bb = np.asarray(a), np.asarray(b)
    grey = (bb.mean(axis=2, keepdims=True) * 0.35 + 160).astype(np.uint8).repeat(3, axis=2)
    grey[(aa != bb).any(axis=2)] = (230, 0, 0)
    return Image.fromarray(grey, "RGB")


def edit_tiles(edit: PixelEditSource, pairs: Sequence, cell: int) -> list[Image.Image]:
    """Original | edited | changed pixels, for each pair."""
    tiles = []
    for pair in pairs:
        a, b = edit.render_tile(pair, "majority", cell), edit.render_tile(pair, "target", cell)
        tiles += [a, b, diff_tile(a, b)]
    return tiles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/pixel_contact"))
    parser.add_argument("--n", type=int, default=48, help="samples per pool sheet")
    args = parser.parse_args(argv)
    try:
        library = px.default_library()
        args.out.mkdir(parents=True, exist_ok=True)
        by_source: dict[str, list[str]] = {}
        for sid, entry in sorted(library.entries.items()):
            by_source.setdefault(entry["source"], []).append(sid)
        for source, ids in by_source.items():
            if source == "procedural":
                tiles = [px_sprite.render_sprite(library.pixels(s), 64) for s in ids[: 4 * 30]]
                grid(tiles, 8).save(args.out / "procedural.png")
                continue
            for page in range(0, len(ids), POOL_PAGE):
                tiles = [px_sprite.render_sprite(library.pixels(s), 48) for s in ids[page:page + POOL_PAGE]]
                grid(tiles, 20).save(args.out / f"pool_{source}_{page // POOL_PAGE:02d}.png")

        edit = PixelEditSource()
        cell = px_sprite.MIN_CELL_SIZE
        pool = edit.pool({"sprites": ["crawl", "cdda", "procedural"]})
        grid(edit_tiles(edit, evenly(pool, args.n), cell), 12).save(args.out / "pixel_edit.png")
        for kind in EDIT_KINDS:
            of_kind = [p for p in pool if p.row_fields["edit_kind"] == kind]
            grid(edit_tiles(edit, evenly(of_kind, 16), cell), 12).save(args.out / f"pixel_edit_{kind}.png")

        content = PixelContentSource()
        tiles = []
        for pair in evenly(content.pool({"sprites": ["crawl", "cdda", "procedural"]}), args.n):
            tiles += [content.render_tile(pair, "majority", cell), content.render_tile(pair, "target", cell)]
        grid(tiles, 12).save(args.out / "pixel_content.png")
    except px_sprite.PixelAssetError as exc:
        print(f"contact_sheet_pixel: {exc}", file=sys.stderr)
        return 1
    print(f"contact sheets written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
