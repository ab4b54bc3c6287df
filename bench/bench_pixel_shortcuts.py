"""Shortcut measures of a release's pixel subsets: can the exceptions be found without a careful look?

    .venv/bin/python bench/bench_pixel_shortcuts.py RELEASE_DIR [--manifests DIR] [--json OUT]

Reads each PixelEdit / PixelContent scene's base image (the T1 row), cuts the first
majority cell and the first exception cell, and reports per subset (definitions in
``rose_gen/assets/pixel/metrics.py``, the same the builder uses):

- cells changed: median share of the cell's pixels that differ (exception vs majority);
- pops out: share of scenes where some third-by-third block of the cell changes its
  mean CIELAB colour by ΔE > 12;
- off-palette (PixelEdit): share of exceptions whose changed pixels are mostly (> 1/2)
  farther than ΔE 10 from every colour of the majority cell;
- colour-only (PixelContent): share of scenes whose two sprites share one silhouette
  (IoU >= 0.9, on the 32x32 source grid read back from the cell) and differ by one colour
  mapping on >= 90 % of the differing pixels;
- composite: scenes whose sprite(s) fail the shape test of the whole-object screen
  (``rose_gen.assets.pixel.pool.shape_rejection``: a seam or separated parts), and screen
  rejected: scenes whose sprite(s) the whole screen rejects (shape, atlas region of
  fragments, hand list); sprites are looked up by id in the pixel manifests of
  ``--manifests`` (default: the committed ones; pass the folder of the manifests the
  release was built with);
- brightness shift: median |ΔL*| of the cell means; hard: share of hard T3 rows;
- edit kinds (PixelEdit) and majority variant counts, from the rows.

Recorded (before/after tables): see ``bench/pixel_shortcuts.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import pool as pixel_pool
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import (
    POP_OUT_DELTA_E,
    block_delta_e,
    changed_share,
    colour_only,
    lab_of,
    off_palette_share,
    sprite_grid,
)
from rose_gen.render.compose import tile_margin

SUBSETS = ("ROSE-PixelEdit", "ROSE-PixelContent")


def rows_of(release: Path) -> list[dict]:
    out = []
    for split in ("dev", "test"):
        path = release / f"metadata_{split}.jsonl"
        if path.is_file():
            out += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return out


def cells(image: np.ndarray, row: dict) -> tuple[np.ndarray, np.ndarray]:
    """(first majority cell, first exception cell) of a scene's base image."""
    c = row["cell_size"]
    targets = {(r, cc) for r, cc in row["target_cells"]}
    maj = next((r, cc) for r in range(1, row["rows"] + 1) for cc in range(1, row["cols"] + 1) if (r, cc) not in targets)
    tgt = sorted(targets)[0]

    def cut(rc: tuple[int, int]) -> np.ndarray:
        return image[(rc[0] - 1) * c:rc[0] * c, (rc[1] - 1) * c:rc[1] * c]

    return cut(maj), cut(tgt)


class SpriteLookup:
    """Sprite pixels by id from a folder of pixel manifests (the release's own, for old releases)."""

    def __init__(self, folder: Path | None) -> None:
        if folder is None:
            self.library = px.default_library()
        else:
            self.library = px.SpriteLibrary(json.loads((folder / "pixel_sprites.json").read_text()))
        self.cache: dict[str, tuple[bool, bool]] = {}

    def screened(self, sprite_id: str) -> tuple[bool, bool]:
        """(fails the shape test: a composite, fails the whole screen: composite or fragment)."""
        if sprite_id not in self.cache:
            entry = self.library.entries.get(sprite_id)
            if entry is None or entry["source"] != "crawl":
                self.cache[sprite_id] = (False, False)
            else:
                pixels = self.library.pixels(sprite_id)
                self.cache[sprite_id] = (pixel_pool.shape_rejection(pixels) is not None,
                                         pixel_pool.screen(sprite_id, pixels) is not None)
        return self.cache[sprite_id]


def measure(release: Path, lookup: SpriteLookup) -> dict[str, dict]:
    scenes: dict[str, dict] = {}
    hard: dict[str, list[int]] = {s: [] for s in SUBSETS}
    for row in rows_of(release):
        if row["rose_subset"] not in SUBSETS:
            continue
        if row["task_template"] == "T3_CLICK_LOCAL_NUMERIC":
            hard[row["rose_subset"]].append(int(row["difficulty"] == "hard"))
        if row["task_template"] == "T1_COUNT_GLOBAL":
            scenes[row["scene_id"]] = row
    out = {}
    for subset in SUBSETS:
        rows = [r for r in scenes.values() if r["rose_subset"] == subset]
        if not rows:
            continue
        stats: dict[str, list] = {k: [] for k in ("changed", "bde", "off", "colour_only", "composite", "rejected",
                                                   "dl")}
        kinds, variants = Counter(), Counter()
        for row in rows:
            with Image.open(release / row["image"]) as im:
                image = np.asarray(im.convert("RGB"))
            maj, tgt = cells(image, row)
            stats["changed"].append(changed_share(maj, tgt))
            stats["bde"].append(block_delta_e(maj, tgt))
            stats["dl"].append(abs(float(lab_of(tgt)[..., 0].mean() - lab_of(maj)[..., 0].mean())))
            if subset == "ROSE-PixelEdit":
                stats["off"].append(off_palette_share(maj, tgt) > 0.5)
                kinds[row.get("edit_kind")] += 1
                variants[row.get("majority_variant")] += 1
                sprites = [row["pair_key"]]
            else:
                # Pixel tiles are inset by the frame margin (rose_gen.render.compose): the sprite fills the inner square.
                m = tile_margin(row["cell_size"])
                inner = (slice(m, row["cell_size"] - m),) * 2
                stats["colour_only"].append(colour_only(sprite_grid(maj[inner]), sprite_grid(tgt[inner]),
                                                        px_sprite.BACKGROUND))
                sprites = [row["background_sprite"], row["target_sprite"]]
            checks = [lookup.screened(s) for s in sprites]
            stats["composite"].append(any(c[0] for c in checks))
            stats["rejected"].append(any(c[1] for c in checks))
        res = {
            "scenes": len(rows),
            "cells_changed_median": round(float(np.median(stats["changed"])), 4),
            "pop_out_rate": round(float(np.mean(np.array(stats["bde"]) > POP_OUT_DELTA_E)), 4),
            "block_delta_e_median": round(float(np.median(stats["bde"])), 2),
            "brightness_shift_median": round(float(np.median(stats["dl"])), 2),
            "composite_scenes": int(sum(stats["composite"])),
            "screen_rejected_scenes": int(sum(stats["rejected"])),
            "hard_share_t3": round(float(np.mean(hard[subset])), 4) if hard[subset] else None,
        }
        if subset == "ROSE-PixelEdit":
            res["off_palette_share"] = round(float(np.mean(stats["off"])), 4)
            res["edit_kinds"] = dict(sorted(kinds.items(), key=lambda kv: str(kv[0])))
            res["majority_variant"] = dict(variants)
        else:
            res["colour_only_share"] = round(float(np.mean(stats["colour_only"])), 4)
        out[subset] = res
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--manifests", type=Path, default=None,
                        help="folder with the pixel manifests the release was built with (default: committed)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not (args.release / "export_summary.json").is_file():
        print(f"bench_pixel_shortcuts: {args.release} is not a release folder (no export_summary.json)",
              file=sys.stderr)
        return 2
    result = measure(args.release, SpriteLookup(args.manifests))
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
