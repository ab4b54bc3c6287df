"""Contact sheets: one PNG per subset, one band per scene, drawn from the release's pixels.

A band shows, left to right: the base image (fitted into a square box, each exception
cell framed in black and magenta), the cue image as a model sees it, the majority tile
and the exception tiles the model must tell apart (the hardest, i.e. most similar, and
the easiest) magnified with nearest-neighbour resampling, and the scene's metadata.
Similarity is rose-audit's measure (:func:`rose_gen.check.audit.audit_scene`: SSIM and the
changed share of blurred luminance, each exception against the median majority cell).

Deterministic: same release, same bytes (fixed fonts with BASIC layout, fixed PNG level).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from rose_eval.atomic import atomic_output
from rose_gen.assets.visibility import cut_cells
from rose_gen.check.audit import CellCheck, audit_scene
from rose_gen.check.preview.scenes import PreviewError, SceneView
from rose_gen.check.preview.text import TextFont, text_font, value_text, wrap

MARGIN, GAP = 24, 16
THUMB = 360  # side of the square box the base and cue images are fitted into
ZOOM = 4  # tile magnification for glyph and emoji cells (42-64 px)
TILE_MAX = 320  # ... but a magnified tile stays within this many px (pixel-art cells: 2x)
TEXT_W = 440
CAPTION_LINES = 4
MAX_EXCEPTION_TILES = 2
MARK_RGB = (255, 0, 200)
FRAME_RGB = (0, 0, 0)
BACKGROUND, INK, MUTED, RULE = (255, 255, 255), (20, 24, 30), (95, 102, 112), (210, 214, 220)
PNG_LEVEL = 6


@dataclass(frozen=True)
class Box:
    """A rectangle on the sheet, in pixels."""

    x: int
    y: int
    w: int
    h: int


@dataclass(frozen=True)
class Band:
    """Where one scene was drawn, and what was measured (for tests and the HTML index)."""

    scene: SceneView
    base: Box  # the pasted base thumbnail
    scale: float  # thumbnail px per image px
    cue: Box | None
    tiles: tuple[Box, ...]  # majority first, then the exceptions shown
    tile_cells: tuple[tuple[int, int], ...]
    checks: tuple[CellCheck, ...]  # every exception, in the rows' placement order


def load_rgb(root: Path, relative: str) -> np.ndarray:
    """An image of the release as an (h, w, 3) uint8 array; PreviewError when unreadable."""
    path = root / relative
    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except (OSError, ValueError) as exc:
        raise PreviewError(f"{path}: cannot read the image ({exc}); re-export the release") from None


def cell_box(scale: float, cell: int, r: int, c: int, origin: Box) -> tuple[int, int, int, int]:
    """Inclusive pixel box of grid cell (r, c) inside a thumbnail pasted at ``origin``."""
    x0, x1 = round((c - 1) * cell * scale), round(c * cell * scale) - 1
    y0, y1 = round((r - 1) * cell * scale), round(r * cell * scale) - 1
    return origin.x + x0, origin.y + y0, origin.x + x1, origin.y + y1


def thumbnail(image: np.ndarray) -> tuple[Image.Image, float]:
    """The image fitted into a THUMB square (never enlarged) and its scale."""
    h, w = image.shape[:2]
    scale = min(1.0, THUMB / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    im = Image.fromarray(image)
    return (im if size == (w, h) else im.resize(size, Image.Resampling.LANCZOS)), scale


def tile_zoom(views: Sequence[SceneView]) -> int:
    """The integer magnification of a sheet's tiles: ZOOM, less when the largest cell would pass TILE_MAX."""
    return max(1, min(ZOOM, TILE_MAX // max(v.cell_size for v in views)))


def shown_tiles(view: SceneView, checks: Sequence[CellCheck], cells: np.ndarray) -> list[tuple[int, int]]:
    """Majority tile (first non-exception cell, row-major), the most similar exception, and the least
    similar one when its pixels differ from the first (jitter, a second exception identity)."""
    targets = set(view.targets)
    majority = next(((r, c) for r in range(1, view.rows + 1) for c in range(1, view.cols + 1)
                     if (r, c) not in targets), None)
    order = sorted(range(len(checks)), key=lambda i: (-checks[i].ssim, i))
    picks = [checks[i].cell for i in order[:1]]
    if len(order) > 1 and MAX_EXCEPTION_TILES > 1:
        (r1, c1), (r2, c2) = picks[0], checks[order[-1]].cell
        if not np.array_equal(cells[r1 - 1, c1 - 1], cells[r2 - 1, c2 - 1]):
            picks.append((r2, c2))
    return ([majority] if majority else []) + picks


def _caption(draw: ImageDraw.ImageDraw, font: TextFont, box: Box, lines: Sequence[str]) -> None:
    y = box.y + box.h + 4
    wrapped = [part for line in lines for part in wrap(font.clean(line), font, box.w - 4)]
    for text in wrapped[:CAPTION_LINES]:
        draw.text((box.x, y), text, font=font.font, fill=MUTED)
        y += font.size + 4


def _span(values: Sequence[float], fmt: str) -> str:
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def _describe(view: SceneView, checks: Sequence[CellCheck], font: TextFont) -> list[str]:
    ssim = [c.ssim for c in checks]
    changed = [c.changed_fraction for c in checks]
    lines = [
        f"{view.split} · grid {view.rows}×{view.cols} · cell {view.cell_size} px · {view.profile}",
        f"exceptions {len(view.targets)} · preset {view.preset}",
        "difficulty " + " ".join(f"{t.split('_')[0]}:{d}" for t, d in view.difficulty),
    ]
    if checks:
        lines.append(f"SSIM vs majority {_span(ssim, '{:.3f}')} · changed {_span([100 * c for c in changed], '{:.1f}')} %")
    if view.cue_rect:
        r1, r2, c1, c2 = view.cue_rect
        color = f" · colour {','.join(map(str, view.cue_color))}" if view.cue_color else ""
        lines.append(f"cue R{r1}–R{r2} × C{c1}–C{c2}{color}")
    lines += [f"{key}: {value_text(value)}" for key, value in view.pair]
    out: list[str] = []
    for line in lines:
        out += list(wrap(font.clean(line), font, TEXT_W))
    return out


def _mark(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int]) -> None:
    x0, y0, x1, y1 = box
    draw.rectangle(box, outline=FRAME_RGB, width=1)
    if x1 - x0 >= 4 and y1 - y0 >= 4:
        draw.rectangle((x0 + 1, y0 + 1, x1 - 1, y1 - 1), outline=MARK_RGB, width=2)


def render_sheet(root: Path, views: Sequence[SceneView], title: str, subtitle: str) -> tuple[Image.Image, list[Band]]:
    """The contact sheet of ``views`` (one subset) and where each scene went."""
    body, small, bold, head = text_font(15), text_font(13), text_font(17, bold=True), text_font(24, bold=True)
    zoom = tile_zoom(views)
    tile_w = zoom * max(v.cell_size for v in views)
    n_tiles = 1 + MAX_EXCEPTION_TILES
    text_x = MARGIN + 2 * (THUMB + GAP) + n_tiles * (tile_w + GAP)
    width = text_x + TEXT_W + MARGIN
    caption_h = CAPTION_LINES * (small.size + 4) + 8
    header_h = MARGIN + head.size + 10 + 2 * (body.size + 6) + GAP

    prepared = []
    for view in views:
        base = load_rgb(root, view.base_image)
        try:
            checks = tuple(audit_scene(base, view.row).cells)
        except ValueError as exc:
            raise PreviewError(f"{root / view.base_image}: {exc}") from None
        lines = _describe(view, checks, body)
        height = max(THUMB, zoom * view.cell_size) + caption_h
        height = max(height, bold.size + 8 + len(lines) * (body.size + 5))
        prepared.append((view, base, checks, lines, height))
    total_h = header_h + sum(h + GAP for *_, h in prepared) + MARGIN

    sheet = Image.new("RGB", (width, total_h), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    draw.text((MARGIN, MARGIN), head.clean(title), font=head.font, fill=INK)
    y = MARGIN + head.size + 10
    for line in subtitle.split("\n")[:2]:
        draw.text((MARGIN, y), next(wrap(body.clean(line), body, width - 2 * MARGIN), ""), font=body.font, fill=MUTED)
        y += body.size + 6
    y = header_h
    bands: list[Band] = []
    for view, base, checks, lines, height in prepared:
        draw.line((MARGIN, y - GAP // 2, width - MARGIN, y - GAP // 2), fill=RULE, width=1)
        thumb, scale = thumbnail(base)
        base_box = Box(MARGIN, y, thumb.width, thumb.height)
        sheet.paste(thumb, (base_box.x, base_box.y))
        for r, c in view.targets:
            _mark(draw, cell_box(scale, view.cell_size, r, c, base_box))
        base_id, cue_id = view.image_ids
        _caption(draw, small, Box(base_box.x, y, THUMB, THUMB),
                 [f"base {base_id} · {base.shape[1]}×{base.shape[0]}", "exceptions framed in magenta"])
        cue_box = None
        if view.cue_image:
            cue_thumb, _ = thumbnail(load_rgb(root, view.cue_image))
            cue_box = Box(MARGIN + THUMB + GAP, y, cue_thumb.width, cue_thumb.height)
            sheet.paste(cue_thumb, (cue_box.x, cue_box.y))
            _caption(draw, small, Box(cue_box.x, y, THUMB, THUMB), [f"cue {cue_id}", "as the model sees it"])
        cells = cut_cells(base, view.rows, view.cols, view.cell_size)
        tile_cells = shown_tiles(view, checks, cells)
        by_cell = {c.cell: c for c in checks}
        tiles = []
        for i, (r, c) in enumerate(tile_cells):
            tile = Image.fromarray(np.ascontiguousarray(cells[r - 1, c - 1]))
            tile = tile.resize((tile.width * zoom, tile.height * zoom), Image.Resampling.NEAREST)
            box = Box(MARGIN + 2 * (THUMB + GAP) + i * (tile_w + GAP), y, tile.width, tile.height)
            sheet.paste(tile, (box.x, box.y))
            draw.rectangle((box.x - 1, box.y - 1, box.x + box.w, box.y + box.h), outline=RULE, width=1)
            check = by_cell.get((r, c))
            if check is None:
                caption = [f"majority R{r},C{c}", f"{zoom}× nearest neighbour"]
            else:
                kind = "least similar" if i == 2 else "most similar" if len(tile_cells) > 2 else \
                    "the only one" if len(checks) == 1 else f"all {len(checks)} alike"
                caption = [f"exception R{r},C{c}", kind, f"SSIM {check.ssim:.3f}",
                           f"changed {100 * check.changed_fraction:.1f} %"]
            _caption(draw, small, Box(box.x, y, tile_w, box.h), caption)
            tiles.append(box)
        draw.text((text_x, y), bold.clean(view.scene_id), font=bold.font, fill=INK)
        ty = y + bold.size + 8
        for line in lines:
            draw.text((text_x, ty), line, font=body.font, fill=INK)
            ty += body.size + 5
        bands.append(Band(view, base_box, scale, cue_box, tuple(tiles), tuple(tile_cells), checks))
        y += height + GAP
    return sheet, bands


def save_png(image: Image.Image, path: Path) -> None:
    """Write a PNG atomically with fixed settings (same pixels, same bytes)."""
    with atomic_output(path, "wb") as handle:
        image.save(handle, format="PNG", compress_level=PNG_LEVEL)
