"""Rendering: exact grid composition, the cue on exactly the T4 rectangle, deterministic PNGs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw
from skimage.color import rgb2lab

from rose_gen.core.schema import RegionSpec, SceneSpec
from rose_gen.render.compose import (
    CUE_PALETTE,
    CueSettings,
    RenderError,
    RenderSettings,
    apply_cue,
    cell_box,
    choose_cue_color,
    compose_grid,
    cue_color_distances,
    cue_color_name,
    encode_png,
    outline_width,
    render_scene,
    resolve_cue,
    scene_cue_color,
)
from rose_gen.sources import SOURCES
from rose_gen.sources.base import AssetPair
from tests.fixtures.latin_source import LATIN_SOURCES

CELL = 20


def _tiles(cell: int = CELL) -> tuple[np.ndarray, np.ndarray]:
    source = SOURCES.get(LATIN_SOURCES["ROSE-ChineseGlyph"])
    pair = source.pool({})[0]
    return (np.asarray(source.render_tile(pair, "majority", cell)),
            np.asarray(source.render_tile(pair, "target", cell)))


def _cells(image: np.ndarray, cell: int) -> np.ndarray:
    rows, cols = image.shape[0] // cell, image.shape[1] // cell
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def test_compose_grid_places_each_tile_exactly() -> None:
    maj, tgt = _tiles()
    targets = [(2, 3), (1, 1), (4, 5)]
    image = compose_grid(maj, tgt, 4, 5, targets)
    assert image.shape == (4 * CELL, 5 * CELL, 3) and image.dtype == np.uint8
    cells = _cells(image, CELL)
    for r in range(4):
        for c in range(5):
            want = tgt if (r + 1, c + 1) in targets else maj
            assert np.array_equal(cells[r, c], want), (r, c)


def test_outline_frames_exactly_the_rectangle_and_keeps_cell_middles() -> None:
    maj, tgt = _tiles()
    base = compose_grid(maj, tgt, 6, 7, [(3, 4)])
    cue = CueSettings(color=(0, 0, 255))
    rect = (2, 4, 3, 6)
    out = apply_cue(base, rect, CELL, "OUTLINE_BOX", cue)
    box = cell_box(*rect, CELL)
    w = outline_width(CELL, cue)
    inside = np.zeros(base.shape[:2], dtype=bool)
    inside[box.top:box.bottom, box.left:box.right] = True
    ring = inside.copy()
    ring[box.top + w:box.bottom - w, box.left + w:box.right - w] = False
    # Every ring pixel carries the cue colour; nothing else changed.
    assert np.all(out[ring] == (0, 0, 255))
    assert np.array_equal(out[~ring], base[~ring])
    # The frame's outer edge is the rectangle's edge: just outside it, the base is untouched.
    assert np.array_equal(out[box.top - 1, box.left:box.right], base[box.top - 1, box.left:box.right])
    assert np.array_equal(out[box.top:box.bottom, box.right], base[box.top:box.bottom, box.right])
    # Thin: the frame never reaches the glyph's ink in the middle of a border cell.
    assert w < CELL * 0.15


def test_mask_tints_only_the_rectangle_and_keeps_content_visible() -> None:
    maj, tgt = _tiles()
    base = compose_grid(maj, tgt, 5, 5, [(2, 2)])
    out = apply_cue(base, (1, 3, 2, 4), CELL, "MASK", CueSettings(color=(255, 0, 0), mask_alpha=0.3))
    box = cell_box(1, 3, 2, 4, CELL)
    inside = np.zeros(base.shape[:2], dtype=bool)
    inside[box.top:box.bottom, box.left:box.right] = True
    assert np.array_equal(out[~inside], base[~inside])
    region_in, region_out = base[inside].astype(float), out[inside].astype(float)
    want = np.rint(region_in * 0.7 + np.array([255.0, 0.0, 0.0]) * 0.3)
    assert np.array_equal(region_out, want)
    # Content stays visible: ink-to-paper contrast keeps 70% of its range in every channel.
    span_in = region_in.max(axis=0) - region_in.min(axis=0)
    span_out = region_out.max(axis=0) - region_out.min(axis=0)
    assert np.all(span_out >= 0.7 * span_in - 1) and span_in.min() > 200


def test_bad_cue_and_bad_tiles_raise_one_line_errors() -> None:
    maj, tgt = _tiles()
    base = compose_grid(maj, tgt, 3, 3, [])
    with pytest.raises(RenderError, match="outside the 3x3 grid"):
        apply_cue(base, (2, 4, 1, 1), CELL, "OUTLINE_BOX", CueSettings())
    with pytest.raises(KeyError, match="unknown cue type 'GLOW'"):
        apply_cue(base, (1, 1, 1, 1), CELL, "GLOW", CueSettings())


def test_png_is_deterministic_and_lossless_without_metadata() -> None:
    maj, tgt = _tiles()
    image = compose_grid(maj, tgt, 3, 4, [(1, 2)])
    data = encode_png(image, 1)
    assert data == encode_png(image.copy(), 1)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")), image)
    for chunk in (b"tIME", b"tEXt", b"iTXt", b"zTXt"):
        assert chunk not in data


def _scene(cue_type: str, **kw) -> SceneSpec:
    source = SOURCES.get(LATIN_SOURCES["ROSE-ChineseGlyph"])
    rect = {"r1": 2, "r2": 3, "c1": 1, "c2": 2}
    fields = dict(subset="ROSE-ChineseGlyph", source=source.info.name, scene_index=1, scene_id="CHSCENE_000001",
                  split="test", id_prefix="CH", primitive_type="CHINESE_GLYPH", item_seed_base=202600000000,
                  image_split="main", rows=3, cols=4, cell_size=24, font_size=17, grid_size_profile="small",
                  target_cells=((3, 4), (1, 1)), pair=source.pool({})[2],
                  regions={"T4_CLICK_VISUAL_REGION": RegionSpec("VISUAL_REGION", rect, "zero", "zero")},
                  cue_type=cue_type, difficulty={}, difficulty_inputs={})
    fields.update(kw)
    return SceneSpec(**fields)


@pytest.mark.parametrize("cue_type", ["OUTLINE_BOX", "MASK"])
def test_render_scene_sizes_and_cue_on_t4(cue_type: str) -> None:
    scene = _scene(cue_type)
    source = SOURCES.get(scene.source)
    rendered = render_scene(scene, source, RenderSettings())
    base = np.asarray(Image.open(io.BytesIO(rendered.base_png)).convert("RGB"))
    cue = np.asarray(Image.open(io.BytesIO(rendered.cue_png)).convert("RGB"))
    assert base.shape == (3 * 24, 4 * 24, 3) == cue.shape
    assert (rendered.width, rendered.height) == (scene.width, scene.height)
    changed = np.any(base != cue, axis=2)
    ys, xs = np.nonzero(changed)
    box = cell_box(2, 3, 1, 2, 24)
    assert (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) == (box.top, box.bottom, box.left, box.right)
    assert render_scene(scene, source, RenderSettings()) == rendered


@pytest.mark.parametrize("cell", [42, 53, 64, 120, 156])
def test_outline_stays_in_the_blank_margin_of_a_centred_glyph(cell: int) -> None:
    source = SOURCES.get(LATIN_SOURCES["ROSE-ChineseGlyph"])
    pair = next(p for p in source.pool({}) if {p.majority, p.target} == {"O", "0"})
    maj = np.asarray(source.render_tile(pair, "majority", cell))
    tgt = np.asarray(source.render_tile(pair, "target", cell))
    base = compose_grid(maj, tgt, 4, 4, [(2, 2)])
    cue = CueSettings()
    out = apply_cue(base, (1, 3, 1, 3), cell, "OUTLINE_BOX", cue)
    changed = np.any(out != base, axis=2)
    assert changed.any()
    # Only white background was painted over: no ink of any cell is hidden.
    assert np.all(base[changed] == 255)
    assert 2 <= outline_width(cell, cue) <= 5


# ---------------------------------------------------------------------------- auto cue colour

RED = dict(CUE_PALETTE)["red"]


class PatchSource:
    """Test-only source: a yellow square; the target adds a red edit in its corner."""

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        tile = Image.new("RGB", (cell_size, cell_size), (255, 255, 255))
        draw = ImageDraw.Draw(tile)
        q = cell_size // 4
        draw.rectangle([q, q, 3 * q, 3 * q], fill=(240, 200, 40))
        if role == "target":
            draw.rectangle([q, q, 2 * q, 2 * q], fill=(225, 10, 20))
        return tile


def _patch_scene(cue_type: str = "OUTLINE_BOX") -> SceneSpec:
    pair = AssetPair(source="test-patch", majority="plain", target="red-edit", pair_key="plain__red-edit",
                     row_fields={}, render={})
    return _scene(cue_type, pair=pair, source="test-patch")


def _lab_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    lab = rgb2lab(np.asarray([[a, b]], dtype=np.uint8))[0]
    return float(np.linalg.norm(lab[0] - lab[1]))


def test_auto_colour_is_the_palette_colour_farthest_from_a_red_edit() -> None:
    source = PatchSource()
    pair = _patch_scene().pair
    tiles = [np.asarray(source.render_tile(pair, role, 40)) for role in ("majority", "target")]
    chosen = choose_cue_color(tiles)
    # Independent check on the two content colours (white background is ignored).
    content = [(240, 200, 40), (225, 10, 20)]
    far = {name: min(_lab_distance(rgb, c) for c in content) for name, rgb in CUE_PALETTE}
    best = max(far.values())
    assert chosen == next(rgb for name, rgb in CUE_PALETTE if far[name] == best)
    assert chosen != RED and far[cue_color_name(chosen)] > far["red"] + 50
    # Without the red edit, red is no longer ruled out: the choice follows the yellow alone.
    alone = {name: _lab_distance(rgb, (240, 200, 40)) for name, rgb in CUE_PALETTE}
    assert choose_cue_color([tiles[0]]) == dict(CUE_PALETTE)[max(alone, key=alone.get)]
    grey = np.full((20, 20, 3), 255, np.uint8)
    grey[5:15, 5:15] = (90, 90, 90)
    assert choose_cue_color([grey, grey]) == RED  # achromatic scenes: all tie, palette order wins
    assert cue_color_distances([grey], CUE_PALETTE).tolist() == [float("inf")] * len(CUE_PALETTE)


def test_ties_go_to_the_earlier_palette_colour() -> None:
    tile = np.full((10, 10, 3), 255, np.uint8)
    tile[2:8, 2:8] = (255, 255, 0)  # yellow: some distance to each colour
    palette = (("first", (0, 64, 255)), ("second", (0, 64, 255)))
    assert choose_cue_color([tile], palette) == (0, 64, 255)
    assert cue_color_name((0, 64, 255), palette) == "first"
    assert cue_color_name((1, 2, 3)) == "1,2,3"


@pytest.mark.parametrize("cue_type", ["OUTLINE_BOX", "MASK"])
def test_auto_cue_is_drawn_in_the_chosen_colour_exactly_on_t4(cue_type: str) -> None:
    scene, source = _patch_scene(cue_type), PatchSource()
    auto = render_scene(scene, source, RenderSettings(cue=CueSettings(color=None)))
    red = render_scene(scene, source, RenderSettings())
    assert auto.cue_color != RED and red.cue_color == RED
    assert auto.base_png == red.base_png  # the base image never depends on the cue colour
    base = np.asarray(Image.open(io.BytesIO(auto.base_png)).convert("RGB"))
    cue = np.asarray(Image.open(io.BytesIO(auto.cue_png)).convert("RGB"))
    changed = np.any(base != cue, axis=2)
    ys, xs = np.nonzero(changed)
    box = cell_box(2, 3, 1, 2, 24)
    assert (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) == (box.top, box.bottom, box.left, box.right)
    if cue_type == "OUTLINE_BOX":
        assert np.all(cue[changed] == auto.cue_color)
    # The explicit colour of the chosen one reproduces the auto image byte for byte.
    fixed = render_scene(scene, source, RenderSettings(cue=CueSettings(color=auto.cue_color)))
    assert fixed.cue_png == auto.cue_png
    assert scene_cue_color(scene, source, CueSettings(color=None)) == auto.cue_color


def test_draw_cue_refuses_an_unresolved_auto_colour() -> None:
    maj, tgt = _tiles()
    base = compose_grid(maj, tgt, 3, 3, [(1, 1)])
    with pytest.raises(RenderError, match="auto"):
        apply_cue(base, (1, 2, 1, 2), CELL, "OUTLINE_BOX", CueSettings(color=None))
    auto = resolve_cue(CueSettings(color=None), (maj, tgt))
    assert auto.color == RED  # black ink on white: nothing chromatic, first palette colour


class BleedSource:
    """Test-only source: a checkerboard that runs to the tile's edges (like stretched pixel art)."""

    def render_tile(self, pair: AssetPair, role: str, cell_size: int) -> Image.Image:
        yy, xx = np.mgrid[:cell_size, :cell_size]
        tile = np.where(((yy // 3 + xx // 3) % 2 == 0)[..., None], (40, 90, 30), (200, 60, 60)).astype(np.uint8)
        tile[:, :2] = (208, 208, 208)  # a background column, so the background is defined
        if role == "target":
            tile[cell_size // 2:, cell_size // 2:] = (250, 220, 40)
        return Image.fromarray(tile)


def _bleed_scene(cell: int = 60) -> SceneSpec:
    pair = AssetPair(source="test-bleed", majority="board", target="board+patch", pair_key="board", row_fields={},
                     render={})
    return _scene("OUTLINE_BOX", pair=pair, source="test-bleed", cell_size=cell)


@pytest.mark.parametrize("cell", [24, 60, 120])
def test_edge_to_edge_tiles_are_inset_so_the_frame_covers_no_tile_pixel(cell: int) -> None:
    from rose_gen.render.compose import band_is_clear, scene_tiles, tile_background, tile_margin

    scene, source = _bleed_scene(cell), BleedSource()
    margin = tile_margin(cell)
    tiles = scene_tiles(scene, source)
    background = tile_background(tiles[0])
    assert margin == max(2, min(5, round(cell * 0.05)))
    assert all(band_is_clear(t, margin, background) for t in tiles)
    inner = np.asarray(source.render_tile(scene.pair, "target", cell - 2 * margin))
    assert np.array_equal(tiles[1][margin:cell - margin, margin:cell - margin], inner)
    rendered = render_scene(scene, source, RenderSettings(cue=CueSettings(color=(0, 64, 255))))
    base = np.asarray(Image.open(io.BytesIO(rendered.base_png)).convert("RGB"))
    cue = np.asarray(Image.open(io.BytesIO(rendered.cue_png)).convert("RGB"))
    changed = np.any(base != cue, axis=2)
    assert np.all(base[changed] == background)  # every frame pixel lies on the margin
    ys, xs = np.nonzero(changed)
    box = cell_box(2, 3, 1, 2, cell)
    assert (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) == (box.top, box.bottom, box.left, box.right)
    assert base.shape == (3 * cell, 4 * cell, 3)


def test_tiles_that_keep_the_band_clear_are_used_as_drawn() -> None:
    from rose_gen.render.compose import scene_tiles

    scene = _scene("OUTLINE_BOX", cell_size=48)
    source = SOURCES.get(scene.source)
    drawn = [np.asarray(source.render_tile(scene.pair, role, 48)) for role in ("majority", "target")]
    assert all(np.array_equal(a, b) for a, b in zip(scene_tiles(scene, source), drawn, strict=True))


def test_jitter_keeps_the_frame_band_clear() -> None:
    from rose_gen.render.compose import band_is_clear, tile_background
    from rose_gen.render.degrade import jittered_grid

    board = np.asarray(BleedSource().render_tile(_bleed_scene().pair, "majority", 40))
    index = np.zeros((3, 3), dtype=np.int64)
    image = jittered_grid([board], index, {"seed": 1, "max_offset": 0.08, "min_scale": 0.85}, margin=2)
    cells = _cells(image, 40)
    background = tile_background(board)
    assert all(band_is_clear(cells[r, c], 2, background) for r in range(3) for c in range(3))


def test_a_source_that_fills_the_cell_is_always_inset() -> None:
    from rose_gen.render.compose import composed_tiles, tile_margin

    class FillingPatchSource(PatchSource):
        fills_cell = True

    pair = _patch_scene().pair
    drawn = [(pair, "majority", "majority tile"), (pair, "target", "target tile")]
    plain = composed_tiles(PatchSource(), drawn, 40)  # keeps the band clear: used as drawn
    assert np.array_equal(plain[0], np.asarray(PatchSource().render_tile(pair, "majority", 40)))
    inset = composed_tiles(FillingPatchSource(), drawn, 40)
    m = tile_margin(40)
    assert np.array_equal(inset[1][m:40 - m, m:40 - m], np.asarray(PatchSource().render_tile(pair, "target", 40 - 2 * m)))


@pytest.mark.parametrize(("rows", "cols", "cell"), [(1, 1, 7), (1, 5, 9), (6, 1, 8), (7, 9, 13)])
def test_compose_grid_equals_pasting_every_cell(rows: int, cols: int, cell: int) -> None:
    rng = np.random.default_rng(rows * 100 + cols)
    majority, target = (rng.integers(0, 256, (cell, cell, 3), dtype=np.uint8) for _ in range(2))
    target_cells = [(int(rng.integers(1, rows + 1)), int(rng.integers(1, cols + 1))) for _ in range(3)]
    want = np.zeros((rows * cell, cols * cell, 3), dtype=np.uint8)
    for r in range(rows):
        for c in range(cols):
            tile = target if (r + 1, c + 1) in target_cells else majority
            want[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell] = tile
    assert np.array_equal(compose_grid(majority, target, rows, cols, target_cells), want)


def test_cue_distances_equal_converting_every_distinct_colour_afresh() -> None:
    from rose_gen.render.compose import MIN_CONTENT_CHROMA, content_lab

    rng = np.random.default_rng(4)
    palette = rng.integers(0, 256, (12, 3), dtype=np.uint8)
    tiles = [palette[rng.integers(0, 12, (30, 30))], np.clip(rng.normal(160, 80, (30, 30, 3)), 0, 255).astype(np.uint8)]
    colours = np.unique(np.concatenate([t.reshape(-1, 3) for t in tiles]), axis=0)  # sorted as (r, g, b) codes are
    lab = rgb2lab(colours[None])[0]
    want = lab[np.hypot(lab[:, 1], lab[:, 2]) >= MIN_CONTENT_CHROMA]
    assert np.array_equal(content_lab(tiles), want)
    pal = rgb2lab(np.asarray([rgb for _, rgb in CUE_PALETTE], dtype=np.uint8)[None])[0]
    for _ in range(2):  # the palette's conversion is cached: the second call must agree too
        d = np.sqrt(((pal[:, None, :] - want[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
        assert np.array_equal(cue_color_distances(tiles, CUE_PALETTE), np.round(d, 6))
