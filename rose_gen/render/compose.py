"""Rendering: scene spec -> base and cue PNG bytes. The only stage that touches pixels.

Each distinct tile of a scene (the majority tile and the target tile) is rendered once
by the scene's visual source and pasted with numpy into an image of exactly
``cols * cell_size`` by ``rows * cell_size`` pixels: the grid and nothing else.

Every cell keeps a *frame margin* (:func:`tile_margin`: 5 % of the cell, 2-5 px) free of
content, so a cue frame never covers a tile pixel: when some tile of a scene has content
in that band, or its source fills the cell by design (``fills_cell``: stretched pixel
art), all of the scene's tiles are drawn at ``cell_size - 2 * margin`` and centred on the
tile's background colour (:func:`scene_tiles`). Tiles that already keep the band clear
(glyphs, emoji) are used as drawn.

The cue image is the base image plus a highlight framing the T4 rectangle. The scene
spec's ``cue_type`` picks the style from :data:`CUE_OVERLAYS`:

- ``OUTLINE_BOX`` (default): a solid frame whose *outer* edge is exactly the pixel
  boundary of the rectangle and whose thickness is a small fraction of the cell
  (``outline_fraction``, clamped to ``min_outline_px``..``max_outline_px``: 2-3 px on
  glyph and emoji cells, 5 px on pixel-art cells), never more than the frame margin. It
  lies in the frame margin of the rectangle's border cells, so pixels outside the
  rectangle and every tile pixel are untouched.
- ``MASK``: the rectangle's pixels are blended toward the cue colour with
  ``mask_alpha``; the content stays visible through the tint.

The cue colour is either fixed (``CueSettings.color``) or, with ``color=None``
("auto"), chosen per scene from :data:`CUE_PALETTE` by :func:`choose_cue_color`: the
palette colour farthest (CIELAB distance) from every chromatic colour of the scene's two
tiles, so an edit in, say, red is never mistaken for a red frame. The choice depends only
on the rendered tiles: no randomness, and the base image is never touched.

PNG encoding is deterministic (:mod:`rose_gen.render.png`: the writer ``render.png_encoder``, a
fixed zlib level, no text chunks, no time stamp).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image
from skimage.color import rgb2lab

from rose_eval.registry import Registry
from rose_gen.assets.visibility import border_colour
from rose_gen.core.schema import AssetPair, SceneSpec
from rose_gen.render.png import DEFAULT_PNG_ENCODER, DEFAULT_PNG_LEVEL, encode_rgb_png
from rose_gen.sources.base import VisualSource

# The template whose region the cue image highlights.
CUE_TEMPLATE = "T4_CLICK_VISUAL_REGION"


RGB = tuple[int, int, int]

# The auto cue palette, in tie-break order: saturated colours far apart in CIELAB. Red is
# first (and the old fixed cue colour), so scenes without chromatic content keep it.
CUE_PALETTE: tuple[tuple[str, RGB], ...] = (
    ("red", (230, 0, 0)),
    ("blue", (0, 64, 255)),
    ("magenta", (230, 0, 230)),
    ("green", (0, 180, 0)),
    ("orange", (255, 140, 0)),
    ("cyan", (0, 200, 230)),
)
# Tile pixels below this CIELAB chroma (white, grey, black: background and ink) are not
# "content colours" for the auto choice.
MIN_CONTENT_CHROMA = 15.0


class RenderError(RuntimeError):
    """A source returned an unusable tile, or a cue does not fit the grid (one-line message)."""


@dataclass(frozen=True)
class CueSettings:
    """How the cue image highlights the T4 rectangle (see the module docstring).

    ``color`` None means auto: chosen per scene from ``palette`` (:func:`resolve_cue`).
    """

    color: RGB | None = (230, 0, 0)
    palette: tuple[tuple[str, RGB], ...] = CUE_PALETTE
    outline_fraction: float = 0.05
    min_outline_px: int = 2
    max_outline_px: int = 5
    mask_alpha: float = 0.35


@dataclass(frozen=True)
class RenderSettings:
    """Rendering knobs recorded in the release config."""

    png_compress_level: int = DEFAULT_PNG_LEVEL
    cue: CueSettings = field(default_factory=CueSettings)
    png_encoder: str = DEFAULT_PNG_ENCODER


@dataclass(frozen=True)
class PixelBox:
    """A half-open pixel rectangle ``[top, bottom) x [left, right)``."""

    top: int
    bottom: int
    left: int
    right: int


@dataclass(frozen=True)
class RenderedScene:
    """The two encoded images of one scene."""

    scene_id: str
    base_png: bytes
    cue_png: bytes
    width: int
    height: int
    cue_color: RGB | None = None  # the colour the cue was drawn in


CueOverlay = Callable[[np.ndarray, PixelBox, int, CueSettings], None]
CUE_OVERLAYS: Registry[CueOverlay] = Registry("cue type")


def cell_box(r1: int, r2: int, c1: int, c2: int, cell_size: int) -> PixelBox:
    """Pixel box covering the 1-based inclusive cell rectangle rows r1..r2, cols c1..c2."""
    return PixelBox(top=(r1 - 1) * cell_size, bottom=r2 * cell_size,
                    left=(c1 - 1) * cell_size, right=c2 * cell_size)


# The frame margin every cell keeps clear: share of the cell, clamped to [min, max] px.
TILE_MARGIN_FRACTION, TILE_MARGIN_MIN_PX, TILE_MARGIN_MAX_PX = 0.05, 2, 5


def tile_margin(cell_size: int) -> int:
    """Width in pixels of the band along a cell's edges that holds no tile content."""
    return max(TILE_MARGIN_MIN_PX, min(TILE_MARGIN_MAX_PX, int(round(cell_size * TILE_MARGIN_FRACTION))))


def outline_width(cell_size: int, cue: CueSettings) -> int:
    """Thickness in pixels of the outline cue for this cell size (at most :func:`tile_margin`)."""
    wanted = max(int(cue.min_outline_px), min(int(cue.max_outline_px), int(round(cell_size * cue.outline_fraction))))
    return min(wanted, tile_margin(cell_size))


@CUE_OVERLAYS.register("OUTLINE_BOX")
def _outline_box(image: np.ndarray, box: PixelBox, cell_size: int, cue: CueSettings) -> None:
    """Draw a frame inside ``box`` along its edges (in place)."""
    w = outline_width(cell_size, cue)
    color = np.asarray(cue.color, dtype=np.uint8)
    image[box.top:box.top + w, box.left:box.right] = color
    image[box.bottom - w:box.bottom, box.left:box.right] = color
    image[box.top:box.bottom, box.left:box.left + w] = color
    image[box.top:box.bottom, box.right - w:box.right] = color


@CUE_OVERLAYS.register("MASK")
def _mask(image: np.ndarray, box: PixelBox, cell_size: int, cue: CueSettings) -> None:
    """Tint ``box`` toward the cue colour (in place); content shows through."""
    region = image[box.top:box.bottom, box.left:box.right].astype(np.float32)
    color = np.asarray(cue.color, dtype=np.float32)
    blended = region * (1.0 - cue.mask_alpha) + color * cue.mask_alpha
    image[box.top:box.bottom, box.left:box.right] = np.rint(blended).astype(np.uint8)


def content_lab(tiles: Sequence[np.ndarray]) -> np.ndarray:
    """(N, 3) CIELAB of the distinct chromatic colours of ``tiles`` (uint8 RGB arrays)."""
    from rose_gen.assets.visibility import distinct

    flat = np.concatenate([t.reshape(-1, 3) for t in tiles]).astype(np.uint32)
    packed = distinct((flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2])
    rgb = np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255], axis=1).astype(np.uint8)
    lab = rgb2lab(rgb[None])[0]
    return lab[np.hypot(lab[:, 1], lab[:, 2]) >= MIN_CONTENT_CHROMA]


def cue_color_distances(tiles: Sequence[np.ndarray], palette: Sequence[tuple[str, RGB]]) -> np.ndarray:
    """Per palette colour: the smallest CIELAB distance to a content colour (inf if none).

    Rounded to 1e-6 so ties do not depend on floating-point noise.
    """
    content = content_lab(tiles)
    from rose_gen.assets.visibility import colours_lab

    pal = colours_lab(tuple(tuple(int(v) for v in rgb) for _, rgb in palette))
    if content.shape[0] == 0:
        return np.full(len(palette), np.inf)
    d = np.sqrt(((pal[:, None, :] - content[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return np.round(d, 6)


def choose_cue_color(tiles: Sequence[np.ndarray], palette: Sequence[tuple[str, RGB]] = CUE_PALETTE) -> RGB:
    """The palette colour whose nearest content colour is farthest; ties go to the earlier one."""
    d = cue_color_distances(tiles, palette)
    return tuple(int(v) for v in palette[int(np.argmax(d))][1])  # argmax takes the first maximum


def cue_color_name(color: Sequence[int], palette: Sequence[tuple[str, RGB]] = CUE_PALETTE) -> str:
    """The palette name of ``color``, or ``r,g,b`` for a colour outside the palette."""
    for name, rgb in palette:
        if tuple(rgb) == tuple(color):
            return name
    return ",".join(str(int(v)) for v in color)


def resolve_cue(cue: CueSettings, tiles: Sequence[np.ndarray]) -> CueSettings:
    """``cue`` with a concrete colour: auto (``color=None``) is chosen from the scene's tiles."""
    if cue.color is not None:
        return cue
    return replace(cue, color=choose_cue_color(tiles, cue.palette))


def scene_cue_color(scene: SceneSpec, source: VisualSource, cue: CueSettings,
                    tiles: Sequence[np.ndarray] | None = None) -> RGB:
    """The colour the cue of ``scene`` is drawn in (from its majority and target tiles when auto;
    ``tiles``: the scene's tiles when already drawn)."""
    if cue.color is not None:
        return tuple(int(v) for v in cue.color)
    return choose_cue_color(list(scene_tiles(scene, source) if tiles is None else tiles)[:2], cue.palette)


def tile_array(tile: Image.Image, cell_size: int, what: str) -> np.ndarray:
    """A source tile as a (cell, cell, 3) uint8 array; alpha is composited on white."""
    if tile.size != (cell_size, cell_size):
        raise RenderError(f"{what}: tile is {tile.size[0]}x{tile.size[1]}, expected {cell_size}x{cell_size}")
    if tile.mode == "RGB":
        return np.asarray(tile, dtype=np.uint8)
    rgba = tile.convert("RGBA")
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return np.asarray(Image.alpha_composite(white, rgba).convert("RGB"), dtype=np.uint8)


def tile_background(tile: np.ndarray) -> np.ndarray:
    """A tile's background colour: the most common colour of its border (:func:`rose_gen.assets.visibility.border_colour`)."""
    return border_colour(tile)


def band_is_clear(tile: np.ndarray, margin: int, background: np.ndarray) -> bool:
    """True when the ``margin`` px band along the tile's edges is all ``background``."""
    if margin <= 0:
        return True
    inner = np.zeros(tile.shape[:2], dtype=bool)
    inner[margin:-margin, margin:-margin] = True
    return bool((tile[~inner] == background).all())


def scene_tiles(scene: SceneSpec, source: VisualSource) -> list[np.ndarray]:
    """The scene's distinct tiles as composed into cells: majority, target and, when a preset
    drew one, the second target; all keep the frame margin clear (see the module docstring)."""
    from rose_gen.core.schema import asset_pair_from_json

    drawn = [(scene.pair, "majority", "majority tile"), (scene.pair, "target", "target tile")]
    second = (scene.extra.get("preset") or {}).get("second")
    if second:
        drawn.append((asset_pair_from_json(second["pair"]), "target", "second target tile"))
    return composed_tiles(source, drawn, scene.cell_size)


def composed_tiles(source: VisualSource, drawn: Sequence[tuple[AssetPair, str, str]], cell: int) -> list[np.ndarray]:
    """Tiles ``(pair, role, what)`` of one scene, drawn by ``source`` and fitted to keep the frame
    margin clear: as drawn when every tile leaves it blank, else all drawn at
    ``cell - 2 * margin`` and centred on the first tile's background. A source whose tiles
    fill the cell by design (``fills_cell = True``: stretched pixel art) is always inset, so
    its geometry does not depend on the scene."""
    margin = tile_margin(cell)
    if not getattr(source, "fills_cell", False):
        tiles = [tile_array(source.render_tile(pair, role, cell), cell, what) for pair, role, what in drawn]
        if all(band_is_clear(t, margin, tile_background(tiles[0])) for t in tiles):
            return tiles
    inner = cell - 2 * margin
    small = [tile_array(source.render_tile(pair, role, inner), inner, what) for pair, role, what in drawn]
    background = tile_background(small[0])
    out = []
    for tile in small:
        framed = np.empty((cell, cell, 3), dtype=np.uint8)
        framed[...] = background
        framed[margin:margin + inner, margin:margin + inner] = tile
        out.append(framed)
    return out


def compose_grid(majority: np.ndarray, target: np.ndarray, rows: int, cols: int,
                 target_cells: Sequence[Sequence[int]]) -> np.ndarray:
    """The grid image: ``majority`` everywhere, ``target`` at the 1-based ``target_cells``.

    The first row of cells is written through a (cell, cols, cell, 3) view of the final
    image (no transpose copy) and copied whole onto the other rows; then the targets.
    """
    cell = majority.shape[0]
    image = np.empty((rows * cell, cols * cell, 3), dtype=np.uint8)
    image[:cell].reshape(cell, cols, cell, 3)[...] = majority[:, None, :, :]  # the first row of cells,
    image.reshape(rows, -1)[1:] = image[:cell].reshape(1, -1)  # copied whole onto the others
    cells = image.reshape(rows, cell, cols, cell, 3)
    for r, c in target_cells:
        cells[int(r) - 1, :, int(c) - 1] = target
    return image


def draw_cue(image: np.ndarray, rect: tuple[int, int, int, int], cell_size: int, cue_type: str,
             cue: CueSettings) -> np.ndarray:
    """Draw the cue on the 1-based inclusive ``rect`` (r1, r2, c1, c2) of ``image`` in place."""
    r1, r2, c1, c2 = rect
    rows, cols = image.shape[0] // cell_size, image.shape[1] // cell_size
    if not (1 <= r1 <= r2 <= rows and 1 <= c1 <= c2 <= cols):
        raise RenderError(f"cue rectangle rows {r1}-{r2}, cols {c1}-{c2} lies outside the {rows}x{cols} grid")
    if cue.color is None:
        raise RenderError("cue colour is auto: resolve it from the scene's tiles first (resolve_cue)")
    CUE_OVERLAYS.get(cue_type)(image, cell_box(r1, r2, c1, c2, cell_size), cell_size, cue)
    return image


def apply_cue(base: np.ndarray, rect: tuple[int, int, int, int], cell_size: int, cue_type: str,
              cue: CueSettings) -> np.ndarray:
    """A copy of ``base`` with the cue drawn on the 1-based inclusive ``rect`` (r1, r2, c1, c2)."""
    return draw_cue(base.copy(), rect, cell_size, cue_type, cue)


def encode_png(image: np.ndarray, compress_level: int, encoder: str = DEFAULT_PNG_ENCODER) -> bytes:
    """Deterministic PNG bytes of an RGB array (no metadata chunks) with the named writer."""
    return encode_rgb_png(image, compress_level, encoder)


def render_grid_images(majority_tile: Image.Image, target_tile: Image.Image, *, rows: int, cols: int,
                       cell_size: int, target_cells: Sequence[Sequence[int]],
                       cue_rect: tuple[int, int, int, int], cue_type: str,
                       cue: CueSettings) -> tuple[np.ndarray, np.ndarray]:
    """Base and cue images as arrays from the two tiles of a scene (auto cue colour resolved)."""
    maj = tile_array(majority_tile, cell_size, "majority tile")
    tgt = tile_array(target_tile, cell_size, "target tile")
    base = compose_grid(maj, tgt, rows, cols, target_cells)
    return base, apply_cue(base, cue_rect, cell_size, cue_type, resolve_cue(cue, (maj, tgt)))


def render_scene(scene: SceneSpec, source: VisualSource, settings: RenderSettings, *,
                 tiles: Sequence[np.ndarray] | None = None) -> RenderedScene:
    """Render one planned scene with its visual source (tiles once, then paste and encode).

    ``tiles``: the scene's tiles (:func:`scene_tiles`) when the visibility check already drew
    them. The base image is encoded first; the cue is then drawn on the same array and only
    the cue rectangle is copied into the Pillow image before the cue image is encoded.
    """
    cell = scene.cell_size
    majority, target = list(scene_tiles(scene, source) if tiles is None else tiles)[:2]
    image = compose_grid(majority, target, scene.rows, scene.cols, scene.target_cells)
    level, encoder = settings.png_compress_level, settings.png_encoder
    base_png = encode_png(image, level, encoder)
    cue = resolve_cue(settings.cue, (majority, target))
    draw_cue(image, cue_rectangle(scene), cell, scene.cue_type, cue)
    cue_png = encode_png(image, level, encoder)
    return RenderedScene(scene_id=scene.scene_id, base_png=base_png, cue_png=cue_png,
                         width=image.shape[1], height=image.shape[0], cue_color=cue.color)


def cue_rectangle(scene: SceneSpec) -> tuple[int, int, int, int]:
    """The T4 rectangle of a scene spec as (r1, r2, c1, c2)."""
    p = scene.regions[CUE_TEMPLATE].params
    return int(p["r1"]), int(p["r2"]), int(p["c1"]), int(p["c2"])
