"""Contact sheets for a human spot check of the emoji sources.

    .venv/bin/python assets_manifest/build/contact_sheet_emoji.py [--out out] [--n 24] [--cell 48]

Writes ``emoji_style_sheet.png`` (one row per sampled identity: Twemoji, OpenMoji, Noto,
plus the Twemoji PNG rendition for comparison) and ``emoji_content_sheet.png`` (one row
per sampled pair: the two identities by their vendor, with the similarity). Samples are
drawn with ``rose_gen.core.rng`` from the default pools, so the sheets are reproducible.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rose_gen.assets.emoji.artwork import EmojiAsset, render_asset  # noqa: E402
from rose_gen.assets.emoji.manifest import identity_records  # noqa: E402
from rose_gen.core.rng import subset_rng  # noqa: E402
from rose_gen.sources.emoji_content import content_pool  # noqa: E402
from rose_gen.sources.emoji_style import style_pool  # noqa: E402

LABEL_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
GAP = 4


def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.truetype(str(LABEL_FONT), size) if LABEL_FONT.is_file() else ImageFont.load_default()


def _asset(rec: dict, vendor: str) -> EmojiAsset:
    f = rec["files"][vendor]
    return EmojiAsset(vendor=vendor, key=rec["key"], path=f["path"], sha256=f["sha256"])


def style_sheet(n: int, cell: int) -> Image.Image:
    """Rows: sampled style identities drawn by each rendition, at ``cell`` px."""
    pool = style_pool({})
    picks = sorted(subset_rng(0, "ROSE-EmojiStyle", "contact_sheet").choice(len(pool), n, replace=False))
    records = identity_records()
    columns = ["twemoji", "openmoji", "noto", "twemoji_png"]
    label_w = 330
    width = label_w + len(columns) * (cell + GAP)
    height = 24 + n * (cell + GAP)
    sheet = Image.new("RGB", (width, height), (200, 200, 200))
    draw = ImageDraw.Draw(sheet)
    font = _font(12)
    for c, name in enumerate(columns):
        draw.text((label_w + c * (cell + GAP), 4), name[:9], fill=(0, 0, 0), font=_font(9))
    for r, i in enumerate(picks):
        rec = records[pool[int(i)].pair_key]
        y = 24 + r * (cell + GAP)
        draw.text((4, y + cell // 3), f"{rec['key']}  {rec['name_en'][:28]}  [{rec['subgroup'][:14]}]",
                  fill=(0, 0, 0), font=font)
        for c, vendor in enumerate(columns):
            sheet.paste(render_asset(_asset(rec, vendor), cell), (label_w + c * (cell + GAP), y))
    return sheet


def content_sheet(n: int, cell: int) -> Image.Image:
    """Rows: sampled content pairs (majority, target) by their vendor, with similarity."""
    pool = content_pool({})
    picks = sorted(subset_rng(0, "ROSE-EmojiContent", "contact_sheet").choice(len(pool), n, replace=False))
    label_w = 470
    width = label_w + 2 * (cell + GAP)
    height = n * (cell + GAP)
    sheet = Image.new("RGB", (width, height), (200, 200, 200))
    draw = ImageDraw.Draw(sheet)
    font = _font(12)
    from rose_gen.sources.emoji_common import render_role

    for r, i in enumerate(picks):
        pair = pool[int(i)]
        f = pair.row_fields
        y = r * (cell + GAP)
        text = (f"{pair.render['vendor']:8s} sim {f['similarity']:.3f}  {f['background_name_en'][:22]} / "
                f"{f['target_name_en'][:22]}")
        draw.text((4, y + cell // 3), text, fill=(0, 0, 0), font=font)
        for c, role in enumerate(("majority", "target")):
            sheet.paste(render_role(pair, role, cell), (label_w + c * (cell + GAP), y))
    return sheet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out")
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--cell", type=int, default=48)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    style_sheet(args.n, args.cell).save(args.out / "emoji_style_sheet.png")
    content_sheet(args.n, args.cell).save(args.out / "emoji_content_sheet.png")
    print(f"wrote {args.out / 'emoji_style_sheet.png'} and {args.out / 'emoji_content_sheet.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
