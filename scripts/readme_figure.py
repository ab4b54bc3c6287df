"""The README's picture: one scene's two images and its five tasks, from a release.

    .venv/bin/python scripts/readme_figure.py RELEASE [--subset ROSE-ChineseGlyph] [--out docs/img/scene-and-tasks.png]

Takes the first test scene of ``--subset`` in ``RELEASE`` (e.g. ``rose-gen profile=mini
output_dir=out/mini``), puts its base image and its cue image (the T4 frame) side by side,
and under them each of its five task rows: the template, the sentence a model reads
(``prompt_local``) and the gold answer (``ground_truth_formal_answer``). Only the release's
rows and images are read.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
IMAGE_HEIGHT = 360
PAD = 16
WIDTH_CHARS = 96


def scene_rows(release: Path, subset: str) -> list[dict]:
    """The five main task rows of the first test scene of ``subset``, in template order."""
    rows = [json.loads(line) for line in (release / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    first = next(r["scene_id"] for r in rows if r["rose_subset"] == subset)
    scene = {r["task_template"]: r for r in rows if r["scene_id"] == first}
    return [scene[t] for t in TEMPLATE_ORDER if t in scene]


def figure(release: Path, rows: list[dict]) -> Image.Image:
    """Base and cue image side by side, then one line block per task."""
    base = next(r for r in rows if r.get("image_cue_type", "NONE") == "NONE")
    cue = next((r for r in rows if r.get("image_cue_type", "NONE") != "NONE"), base)
    images = []
    for row in (base, cue):
        img = Image.open(release / row["image"]).convert("RGB")
        images.append(img.resize((round(img.width * IMAGE_HEIGHT / img.height), IMAGE_HEIGHT), Image.LANCZOS))
    font, bold = ImageFont.truetype(FONT, 15), ImageFont.truetype(FONT_BOLD, 15)
    blocks = []
    for row in rows:
        sentence = textwrap.wrap(row["prompt_local"], WIDTH_CHARS)
        blocks.append((TEMPLATE_SHORT[row["task_template"]], sentence, row["ground_truth_formal_answer"]))
    line_h = 20
    text_h = sum((len(s) + 1) * line_h + 8 for _, s, _ in blocks)
    width = max(sum(i.width for i in images) + 3 * PAD, 9 * WIDTH_CHARS + 2 * PAD)
    canvas = Image.new("RGB", (width, IMAGE_HEIGHT + text_h + 3 * PAD), "white")
    draw = ImageDraw.Draw(canvas)
    x = PAD
    for img in images:
        canvas.paste(img, (x, PAD))
        x += img.width + PAD
    y = IMAGE_HEIGHT + 2 * PAD
    for short, sentence, answer in blocks:
        draw.text((PAD, y), short, font=bold, fill=(20, 20, 20))
        for line in sentence:
            draw.text((PAD + 100, y), line, font=font, fill=(40, 40, 40))
            y += line_h
        draw.text((PAD + 100, y), f"gold: {answer}", font=bold, fill=(0, 110, 40))
        y += line_h + 8
    return canvas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--subset", default="ROSE-ChineseGlyph")
    parser.add_argument("--out", type=Path, default=Path("docs/img/scene-and-tasks.png"))
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure(args.release, scene_rows(args.release, args.subset)).save(args.out, optimize=True)
    print(args.out)


if __name__ == "__main__":
    main()
