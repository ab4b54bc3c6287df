"""Contact sheet of glyph pairs for a human spot check: out/contact_sheet_glyph.png.

    .venv/bin/python -m assets_manifest.build.contact_sheet_glyph [--per-tier 14] [--out PATH]

Each row shows one pool entry as the generator draws it: both tiles at the smallest cell
size (42 px) and at 96 px, then pair key, tier, mining score and face. Entries are spread
evenly over each tier of the pool (so faces vary too); no randomness.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from rose_gen.assets.fonts import manifest_faces
from rose_gen.sources.glyph import SOURCE, TIERS

SIZES = (42, 96)
LABEL_W = 560
GAP = 6


def pick(per_tier: int) -> list:
    """Entries spread evenly over each tier of the default pool."""
    pool = SOURCE.pool({})
    chosen = []
    for tier in TIERS:
        entries = [p for p in pool if p.render["tier"] == tier]
        step = max(1, len(entries) // per_tier)
        chosen += entries[::step][:per_tier]
    return chosen


def sheet(entries: list, columns: int = 2) -> Image.Image:
    """The contact sheet image."""
    label_face = next(f for f in manifest_faces() if f.name == "NotoSansCJKsc-Regular")
    font = ImageFont.truetype(label_face.file, 18, index=label_face.face_index)
    row_h = max(SIZES) + GAP
    col_w = 2 * sum(SIZES) + 4 * GAP + LABEL_W
    rows = (len(entries) + columns - 1) // columns
    img = Image.new("RGB", (columns * col_w, rows * row_h + GAP), (200, 200, 200))
    draw = ImageDraw.Draw(img)
    for i, pair in enumerate(entries):
        x, y = (i // rows) * col_w + GAP, (i % rows) * row_h + GAP
        for size in SIZES:
            for role in ("majority", "target"):
                img.paste(SOURCE.render_tile(pair, role, size), (x, y))
                x += size + GAP
        text = (f"{pair.majority} {pair.target}  {pair.render['tier']} {pair.similarity:.3f}  "
                f"{pair.row_fields['font_name']}")
        draw.text((x + GAP, y + 30), text, fill=(0, 0, 0), font=font)
    return img


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-tier", type=int, default=14)
    parser.add_argument("--out", type=Path, default=Path("out/contact_sheet_glyph.png"))
    args = parser.parse_args()
    entries = pick(args.per_tier)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet(entries).save(args.out, optimize=True)
    print(f"wrote {args.out}: {len(entries)} pairs")


if __name__ == "__main__":
    main()
