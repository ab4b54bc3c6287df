"""render.cue_color / render.cue_palette: mapping, one-line errors, rows."""

from __future__ import annotations

import pytest

from rose_gen.release.config import ConfigError, load_config
from rose_gen.release.pipeline import plan_release, process_scene, scene_rows
from rose_gen.render.compose import CUE_PALETTE, CUE_TEMPLATE
from tests.fixtures.latin_source import latin_overrides


def test_auto_is_the_default_and_names_and_rgb_map_to_fixed_colours() -> None:
    cue = load_config([]).render.cue
    assert cue.color is None and cue.palette == CUE_PALETTE
    assert load_config(["render.cue_color=red"]).render.cue.color == (230, 0, 0)
    assert load_config(["render.cue_color=blue"]).render.cue.color == dict(CUE_PALETTE)["blue"]
    assert load_config(["render.cue_color=[10,20,30]"]).render.cue.color == (10, 20, 30)


@pytest.mark.parametrize(("override", "message"), [
    ("render.cue_color=purple", "render.cue_color 'purple' must be auto, [r, g, b] or one of the cue_palette"),
    ("render.cue_color=[1,2]", "render.cue_color must be auto, a cue_palette name or three integers"),
    ("render.cue_palette.red=[300,0,0]", "render.cue_palette.red must be three integers 0..255"),
])
def test_bad_cue_colour_is_a_one_line_error(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config([override])
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("cue_color", ["auto", "red"])
def test_cue_colour_is_on_the_cue_image_rows_only(tmp_path, cue_color: str) -> None:
    config = load_config([f"output_dir={tmp_path}", "progress=false", *latin_overrides(),
                          f"render.cue_color={cue_color}"])
    scene = plan_release(config)[0]
    result = process_scene(scene, config.render)
    rows = result.rows.main + [r for b in result.rows.bridges.values() for r in b]
    on_cue = [r for r in rows if r["image_cue_type"] != "NONE"]
    assert [r["task_template"] for r in result.rows.main if r in on_cue] == [CUE_TEMPLATE]
    assert all(r["image_cue_color"] == [230, 0, 0] for r in on_cue)  # black-on-white glyphs: red either way
    assert all("image_cue_color" not in r for r in rows if r not in on_cue)
    assert scene_rows(scene, config.render.cue) == result.rows


def test_real_colour_scenes_record_the_colour_their_frame_is_drawn_in(tmp_path) -> None:
    import io

    import numpy as np
    from PIL import Image

    from rose_gen.render.compose import cell_box, cue_rectangle

    config = load_config([f"output_dir={tmp_path}", "progress=false", "profile=mini",
                          "subsets=[ROSE-PixelEdit,ROSE-EmojiStyle]"])
    colours = set()
    for scene in plan_release(config)[:4]:
        result = process_scene(scene, config.render)
        t4 = next(r for r in result.rows.main if r["task_template"] == CUE_TEMPLATE)
        cue = np.asarray(Image.open(io.BytesIO(result.images[t4["image"]])).convert("RGB"))
        box = cell_box(*cue_rectangle(scene), scene.cell_size)
        assert cue[box.top, box.left].tolist() == t4["image_cue_color"]
        assert cue[box.bottom - 1, box.right - 1].tolist() == t4["image_cue_color"]
        colours.add(tuple(t4["image_cue_color"]))
    assert colours - {(230, 0, 0)}, "colourful scenes should not all be framed in red"
