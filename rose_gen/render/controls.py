"""Pixels of the interface controls: coordinate labels in a margin and exception marks.

Both work on a rendered scene image (base or cue, an RGB array whose grid starts at the
top-left pixel) and never change a pixel of the grid except where documented:

- **Coordinate labels** (:func:`add_coordinate_labels`): a white margin is added on the
  left (row labels ``R1``...) and on top (column labels ``C1``...), ending in a 2 px grey
  rule along the grid; every label is centred on its row or column, in DejaVu Sans Bold,
  black. The font size is 40 % of the cell (at most 28 px), shrunk until the widest
  column label fits its cell with 2 px to spare, and never below :data:`MIN_LABEL_PX`; the
  grid itself is copied unchanged at offset (``top``, ``left``) (:class:`LabelLayout`).
- **Exception marks** (:func:`mark_exceptions`): in every exception cell a *corner tab*,
  a right triangle in the cell's top-left corner: black (:data:`MARK_EDGE`) with a yellow
  (:data:`MARK_FILL`) triangle inside. It starts inside the cell's frame margin
  (:func:`rose_gen.render.compose.tile_margin`), so the T4 cue frame (which lives in that
  margin) is never touched; its legs are 45 % of the cell (it may cover a corner of the tile, never the cue frame). Yellow is not in the cue
  palette and a triangle is not a frame, so a mark cannot be taken for the cue; black and
  yellow together stand out on white paper, black ink, colourful emoji and dark pixel art
  (:func:`mark_salience` measures it, in CIELAB).

Pure functions of their inputs: no randomness; fonts are read with BASIC layout, so the
pixels do not depend on libraqm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from skimage.color import rgb2lab

from rose_eval.controls import LABEL_RULE_PX, LABEL_RULE_RGB
from rose_gen.core.errors import AssetError
from rose_gen.render.compose import tile_margin

LABEL_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
MARGIN_COLOUR = (255, 255, 255)
RULE_COLOUR, RULE_PX = LABEL_RULE_RGB, LABEL_RULE_PX  # the rule between the margins and the grid
LABEL_COLOUR = (0, 0, 0)
LABEL_SHARE, MAX_LABEL_PX, MIN_LABEL_PX = 0.40, 28, 10
LABEL_PAD = 4  # px between a label and the margin's edges

MARK_EDGE = (0, 0, 0)
MARK_FILL = (255, 214, 0)
MARK_SHARE = 0.45  # leg of the corner tab, share of the cell
MIN_MARK_PX = 12


@lru_cache(maxsize=32)
def label_font(size: int) -> ImageFont.FreeTypeFont:
    """DejaVu Sans Bold at ``size`` px (fonts-dejavu-core)."""
    if not LABEL_FONT.is_file():
        raise AssetError(f"coordinate labels need {LABEL_FONT}: install fonts-dejavu-core")
    return ImageFont.truetype(str(LABEL_FONT), size, layout_engine=ImageFont.Layout.BASIC)


@dataclass(frozen=True)
class LabelLayout:
    """Where the grid sits in a labelled image: ``top``/``left`` margins, the label font size."""

    rows: int
    cols: int
    cell: int
    top: int
    left: int
    font_px: int

    @property
    def width(self) -> int:
        return self.left + self.cols * self.cell

    @property
    def height(self) -> int:
        return self.top + self.rows * self.cell

    def row_centre(self, r: int) -> float:
        """Vertical centre (px) of row ``r`` (1-based) in the labelled image."""
        return self.top + (r - 0.5) * self.cell

    def col_centre(self, c: int) -> float:
        """Horizontal centre (px) of column ``c`` (1-based) in the labelled image."""
        return self.left + (c - 0.5) * self.cell


def label_layout(rows: int, cols: int, cell: int) -> LabelLayout:
    """The margins and font size for a ``rows`` x ``cols`` grid of ``cell`` px cells."""
    size = max(MIN_LABEL_PX, min(MAX_LABEL_PX, int(round(cell * LABEL_SHARE))))
    while size > MIN_LABEL_PX and label_font(size).getlength(f"C{cols}") > cell - 2:
        size -= 1
    font = label_font(size)
    ascent, descent = font.getmetrics()
    left = int(np.ceil(font.getlength(f"R{rows}"))) + 2 * LABEL_PAD + RULE_PX
    top = ascent + descent + 2 * LABEL_PAD + RULE_PX
    return LabelLayout(rows, cols, cell, top, left, size)


def add_coordinate_labels(image: np.ndarray, rows: int, cols: int, cell: int) -> tuple[np.ndarray, LabelLayout]:
    """``image`` (the grid) with row labels on the left and column labels on top, and its layout."""
    layout = label_layout(rows, cols, cell)
    canvas = Image.new("RGB", (layout.width, layout.height), MARGIN_COLOUR)
    canvas.paste(Image.fromarray(image, mode="RGB"), (layout.left, layout.top))
    draw = ImageDraw.Draw(canvas)
    draw.rectangle((0, layout.top - RULE_PX, layout.width - 1, layout.top - 1), fill=RULE_COLOUR)
    draw.rectangle((layout.left - RULE_PX, 0, layout.left - 1, layout.height - 1), fill=RULE_COLOUR)
    font = label_font(layout.font_px)
    for r in range(1, rows + 1):
        draw.text(((layout.left - RULE_PX) / 2, layout.row_centre(r)), f"R{r}", fill=LABEL_COLOUR, font=font, anchor="mm")
    for c in range(1, cols + 1):
        draw.text((layout.col_centre(c), (layout.top - RULE_PX) / 2), f"C{c}", fill=LABEL_COLOUR, font=font, anchor="mm")
    return np.asarray(canvas, dtype=np.uint8).copy(), layout


@dataclass(frozen=True)
class MarkShape:
    """The corner tab of one cell size: offset from the cell's corner, leg, black edge width."""

    inset: int
    leg: int
    edge: int


def mark_shape(cell: int) -> MarkShape:
    """The corner tab drawn in cells of ``cell`` px."""
    leg = max(MIN_MARK_PX, int(round(cell * MARK_SHARE)))
    return MarkShape(inset=tile_margin(cell), leg=leg, edge=max(2, int(round(leg / 10))))


def mark_masks(shape: MarkShape) -> tuple[np.ndarray, np.ndarray]:
    """(edge, fill) boolean masks of the tab, ``leg`` x ``leg``: the fill is the triangle inset by ``edge``."""
    y, x = np.mgrid[0:shape.leg, 0:shape.leg]
    tab = x + y < shape.leg
    inner = (x >= shape.edge) & (y >= shape.edge) & (x + y < shape.leg - 2 * shape.edge)
    return tab & ~inner, inner


def mark_exceptions(image: np.ndarray, cells: Sequence[Sequence[int]], cell: int,
                    offset: tuple[int, int] = (0, 0)) -> np.ndarray:
    """A copy of ``image`` with a corner tab in each 1-based (row, col) of ``cells``.

    ``offset`` (top, left) is where the grid starts in ``image`` (a labelled image's margins).
    """
    out = image.copy()
    shape = mark_shape(cell)
    edge, fill = mark_masks(shape)
    for r, c in cells:
        top = offset[0] + (int(r) - 1) * cell + shape.inset
        left = offset[1] + (int(c) - 1) * cell + shape.inset
        patch = out[top:top + shape.leg, left:left + shape.leg]
        patch[edge] = MARK_EDGE
        patch[fill] = MARK_FILL
    return out


def mark_salience(under: np.ndarray, shape: MarkShape) -> float:
    """How much the tab stands out from the pixels it covers: the larger, over its two colours
    (edge, fill), of the median CIELAB distance between that colour and the covered pixels."""
    edge, fill = mark_masks(shape)
    lab = rgb2lab(under[None].astype(np.uint8))[0] if under.ndim == 2 else rgb2lab(under)
    best = 0.0
    for mask, colour in ((edge, MARK_EDGE), (fill, MARK_FILL)):
        ref = rgb2lab(np.asarray([[colour]], dtype=np.uint8))[0, 0]
        best = max(best, float(np.median(np.sqrt(((lab[mask] - ref) ** 2).sum(axis=1)))))
    return best
