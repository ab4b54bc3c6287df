"""Failure gallery: a seeded sample of failed items, each drawn on its scene image.

Sampling is by keyed hash: a failed item's rank is sha256(seed, item_id), so the same seed
picks the same items whatever the file order, and two models that fail the same item
show it both. Templates take turns (round robin in paper order), so every failing
template is shown. The overlay is drawn at display size on a copy of the release image:
cells outside the permitted region veiled, gold cells framed green, odd cells that the
region rules out framed amber, each predicted click a dot in its cell's corner (green
on a gold cell, red elsewhere). Images go into the page as PNG data URIs.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from rose_eval.analyses._rows import ALL_TEMPLATES
from rose_eval.regions import region_cells
from rose_eval.report.htmlkit import Html, el, void
from rose_eval.report.taxonomy import CATEGORIES, classify
from rose_eval.truth import cells_of
from rose_eval.vocab import SUBSET_SHORT, TEMPLATE_SHORT, template_of

Item = Mapping[str, Any]
DISPLAY_SIDE = 480  # longest side of a gallery image, px
GOLD = (26, 152, 80)
HIT = (26, 152, 80)
MISS = (215, 48, 31)
VEIL = (128, 128, 136, 150)  # mid-grey: visible on light and on dark scenes
REGION = (36, 87, 166)
OUTSIDE_TARGET = (240, 160, 0)


def sample_failures(items: Sequence[Item], n: int, seed: int) -> list[Item]:
    """Up to ``n`` failed items: templates in turn, each template's failures by keyed hash."""
    by_template: dict[str, list[Item]] = {}
    for item in items:
        if item.get("pass") != 1:
            by_template.setdefault(template_of(item), []).append(item)
    order = [t for t in ALL_TEMPLATES if t in by_template] + sorted(
        set(by_template) - set(ALL_TEMPLATES))

    def rank(item: Item) -> str:
        return hashlib.sha256(f"{seed}\0{item.get('item_id')}".encode()).hexdigest()

    queues = [sorted(by_template[t], key=rank) for t in order]
    picked: list[Item] = []
    depth = 0
    while len(picked) < n and any(depth < len(q) for q in queues):
        picked += [q[depth] for q in queues if depth < len(q)][: n - len(picked)]
        depth += 1
    return picked


def _display_size(width: int, height: int) -> tuple[int, int]:
    """Large scenes shrink to DISPLAY_SIDE; small ones grow by a whole factor (crisp pixels)."""
    longest = max(width, height)
    scale = DISPLAY_SIDE / longest if longest > DISPLAY_SIDE else max(1, round(DISPLAY_SIDE / longest))
    return max(1, round(width * scale)), max(1, round(height * scale))


def overlay(image: Image.Image, item: Item, row: Mapping[str, Any]) -> Image.Image:
    """The scene at display size with the region, the gold cells and the clicks drawn on it.

    Grid geometry comes from the image itself: ``rows x cols`` equal cells filling it.
    """
    rows, cols = int(row["rows"]), int(row["cols"])
    size = _display_size(*image.size)
    upscale = size[0] >= image.size[0]
    base = image.convert("RGB").resize(size, Image.Resampling.NEAREST if upscale
                                       else Image.Resampling.LANCZOS)
    cw, ch = size[0] / cols, size[1] / rows

    def box(cell: tuple[int, int], inset: float = 0.0) -> tuple[float, float, float, float]:
        r, c = cell
        return ((c - 1) * cw + inset, (r - 1) * ch + inset, c * cw - inset - 1, r * ch - inset - 1)

    veil = Image.new("RGBA", size, (0, 0, 0, 0))
    draw_veil = ImageDraw.Draw(veil)
    permitted = region_cells(row)
    grid = {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)}
    for cell in sorted(grid - permitted):
        draw_veil.rectangle(box(cell), fill=VEIL)
    canvas = Image.alpha_composite(base.convert("RGBA"), veil)
    draw = ImageDraw.Draw(canvas)
    line = max(2, round(min(cw, ch) * 0.09))
    inside = permitted & grid
    r1, r2 = min((r for r, _ in inside), default=0), max((r for r, _ in inside), default=0)
    c1, c2 = min((c for _, c in inside), default=0), max((c for _, c in inside), default=0)
    if inside != grid and len(inside) == (r2 - r1 + 1) * (c2 - c1 + 1):  # a rectangle
        draw.rectangle(((c1 - 1) * cw, (r1 - 1) * ch, c2 * cw - 1, r2 * ch - 1),
                       outline=REGION, width=max(2, line // 2))
    halo = (255, 255, 255)  # a white rim keeps frames visible on dark tiles
    for cell in sorted(cells_of(item.get("out_region_target_cells") or [])):
        draw.rectangle(box(cell, line / 2 - 1), outline=halo, width=max(2, line // 2) + 2)
        draw.rectangle(box(cell, line / 2), outline=OUTSIDE_TARGET, width=max(2, line // 2))
    gold = cells_of(item.get("gt_clicks") or [])
    for cell in sorted(gold):
        draw.rectangle(box(cell, line / 2 - 1), outline=halo, width=line + 2)
        draw.rectangle(box(cell, line / 2), outline=GOLD, width=line)
    # A click is a dot in the cell's upper-left corner, so the tile itself stays visible.
    radius = max(3.0, min(cw, ch) * 0.15)
    for cell in sorted(cells_of(item.get("pred_clicks_valid_unique") or [])):
        x0, y0, _, _ = box(cell)
        cx, cy = x0 + line + radius, y0 + line + radius
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius),
                     fill=HIT if cell in gold else MISS, outline=(255, 255, 255),
                     width=max(1, line // 3))
    return canvas.convert("RGB")


def png_data_uri(image: Image.Image) -> str:
    """A PNG data URI (deterministic: no text chunks, fixed compression)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=9)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass(frozen=True)
class GalleryImage:
    """What the card shows in place of the picture: a data URI, or why there is none."""

    uri: str | None
    note: str | None = None


def item_image(item: Item, row: Mapping[str, Any] | None, path: Path | None) -> GalleryImage:
    """The overlay as a data URI, or a note saying what is missing."""
    if row is None:
        return GalleryImage(None, "no release metadata for this item (pass --dataset_root)")
    if path is None:
        return GalleryImage(None, f"image {row.get('image')} not found in the release")
    with Image.open(path) as image:
        return GalleryImage(png_data_uri(overlay(image, item, row)))


def _facts(item: Item) -> str:
    gold = int(item.get("gt_count") or 0)
    parts = [f"gold: {gold} target{'s' if gold != 1 else ''}"]
    if item.get("click_applicable") == 1:
        clicked = cells_of(item.get("pred_clicks_valid_unique") or [])
        hits = len(clicked & cells_of(item.get("gt_clicks") or []))
        parts.append(f"clicked {len(clicked)} cell{'s' if len(clicked) != 1 else ''}, "
                     f"{hits} correct")
        if item.get("pred_clicks_invalid"):
            parts.append("off-grid: " + ", ".join(map(str, item["pred_clicks_invalid"])))
    if item.get("count_applicable") == 1 and item.get("pred_count") is not None:
        parts.append(f"answered {item.get('pred_count')}")
    return " · ".join(parts)


def card(item: Item, row: Mapping[str, Any] | None, image: GalleryImage) -> Html:
    """One failed item: header, overlay, facts, prompt, gold answer and the raw answer."""
    template = template_of(item)
    category = classify(item)
    title = (f"{item.get('item_id')} · {TEMPLATE_SHORT.get(template, template)} · "
             f"{SUBSET_SHORT.get(str(item.get('rose_subset')), item.get('rose_subset'))}")
    picture = (void("img", src=image.uri, alt=f"scene {item.get('scene_id')} with gold cells, "
                    "clicks and region")
               if image.uri else el("p", image.note, class_="note"))
    prompt = (row or {}).get("prompt_local") or (row or {}).get("prompt")
    raw = item.get("raw_text")
    return el(
        "article",
        el("h4", title, el("span", CATEGORIES.get(category).label if category else "",
                           class_="tag")),
        picture,
        el("p", _facts(item), class_="note"),
        el("div", "Prompt", class_="label") if prompt else None,
        el("pre", prompt) if prompt else None,
        el("details", el("summary", "Full prompt"), el("pre", row.get("prompt")))
        if row and row.get("prompt") and row.get("prompt") != prompt else None,
        el("div", "Gold answer", class_="label"),
        el("pre", item.get("ground_truth_formal_answer") or "--"),
        el("div", "Model answer (raw)", class_="label"),
        el("pre", raw if isinstance(raw, str) else f"(no text; error: {item.get('api_error_text')})",
           class_="raw"),
        class_="card", data_item=str(item.get("item_id")),
    )


LEGEND = el(
    "p",
    el("span", el("span", class_="swatch", style="background:#1a9850"), "gold cell (frame)"),
    el("span", el("span", class_="swatch", style="background:#fff;border:2px solid #f0a000"),
       "odd cell outside the region"),
    el("span", el("span", class_="swatch", style="background:#1a9850;border-radius:50%"),
       "click on a gold cell"),
    el("span", el("span", class_="swatch", style="background:#d7301f;border-radius:50%"),
       "click elsewhere"),
    el("span", el("span", class_="swatch", style="background:#a0a0a8"),
       "outside the permitted region (veiled)"),
    el("span", el("span", class_="swatch", style="background:#fff;border:2px solid #2457a6"),
       "permitted region"),
    class_="legend",
)
