"""Rendering: exact grid composition, the cue on exactly the T4 rectangle, deterministic PNGs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from rose_gen.render import (
    CueSettings,
    RenderError,
    RenderSettings,
    apply_cue,
    cell_box,
    compose_grid,
    encode_png,
    outline_width,
    render_scene,
)
from rose_gen.schema import RegionSpec, SceneSpec
from rose_gen.sources import SOURCES
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
