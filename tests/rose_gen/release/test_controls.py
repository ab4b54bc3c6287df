"""Interface controls on a real release (all five real sources): same gold, labels and marks
where the rows say (pixels), the text matrix re-derives the gold, Parquet, determinism, and
nothing changes without controls."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from rose_eval.regions import region_cells_for
from rose_eval.vocab import SPLITS
from rose_gen.release.config import ConfigError, load_config
from rose_gen.release.controls import decode_png
from rose_gen.release.features import drop_nulls
from rose_gen.release.pipeline import generate_release
from rose_gen.render.controls import (
    LABEL_COLOUR,
    MARK_EDGE,
    MARK_FILL,
    MarkShape,
    label_layout,
    mark_masks,
    mark_salience,
)
from rose_gen.tasks.controls import CONTROL_ORDER, parse_grid_text

SUBSETS = ("glyph", "emoji_style", "emoji_content", "pixel_edit", "pixel_content")
CHANGED = {"item_id", "prompt_local", "prompt", "image_id", "image", "image_width", "image_height"}


def _small(scenes: int = 3, dev: int = 1) -> list[str]:
    return [f"subset.{s}.{k}={v}" for s in SUBSETS for k, v in (("scenes", scenes), ("dev_scenes", dev))]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("controls") / "release"
    config = load_config([f"output_dir={out}", "progress=false", "profile=mini_controls", *_small()])
    return generate_release(config).path


def _pairs(root: Path, control: str):
    """(source row, control row) of every main row, both splits."""
    for split in SPLITS:
        source = {r["item_id"]: r for r in _jsonl(root / f"metadata_{split}.jsonl")}
        rows = _jsonl(root / f"analysis/controls/{control}/metadata_{split}.jsonl")
        assert len(rows) == len(source)
        for row in rows:
            yield source[row["source_item_id"]], row


@pytest.mark.parametrize("control", CONTROL_ORDER)
def test_every_control_row_keeps_its_source_row_and_gold(release: Path, control: str) -> None:
    n = 0
    for src, row in _pairs(release, control):
        assert row["item_id"] == f"{src['item_id']}__{control}" and row["control"] == control
        for key, value in src.items():
            if key not in CHANGED:
                assert row[key] == value, (row["item_id"], key)
        assert row["prompt_local"].endswith("\n" + src["prompt_local"])  # the template's sentence, unchanged
        assert row["prompt"] == src["prompt_global"] + "\n" + row["prompt_local"]
        n += 1
    assert n == 5 * 3 * 5  # five rows per scene, 3 scenes per subset
    summary = json.loads((release / "export_summary.json").read_text())
    assert summary["counts"]["control_rows"][control] == {"dev": 25, "test": 50}


def _grid(image: np.ndarray, row: dict) -> np.ndarray:
    top, left = row["control_grid_offset"]
    return image[top:top + row["rows"] * row["cell_size"], left:left + row["cols"] * row["cell_size"]]


def test_coordinate_labels_sit_on_their_rows_and_columns(release: Path) -> None:
    for src, row in _pairs(release, "coords_given"):
        image = decode_png((release / row["image"]).read_bytes())
        base = decode_png((release / src["image"]).read_bytes())
        assert image.shape == (row["image_height"], row["image_width"], 3)
        assert np.array_equal(_grid(image, row), base)  # the grid is untouched, at the recorded offset
        top, left = row["control_grid_offset"]
        cell = row["cell_size"]
        ink = (image == LABEL_COLOUR).all(axis=2)
        for r in range(1, row["rows"] + 1):  # each row label's ink is centred on its row
            band = ink[top + (r - 1) * cell: top + r * cell, :left]
            ys = np.nonzero(band.any(axis=1))[0]
            assert ys.size, (row["item_id"], r)
            assert abs((ys.min() + ys.max()) / 2 - cell / 2) <= cell / 4
        for c in range(1, row["cols"] + 1):
            band = ink[:top, left + (c - 1) * cell: left + c * cell]
            xs = np.nonzero(band.any(axis=0))[0]
            assert xs.size and xs.min() > 0 and xs.max() < cell - 1, (row["item_id"], c)  # inside its column


def test_labels_stay_legible_at_small_cells_and_large_grids() -> None:
    for rows, cols, cell in ((12, 13, 44), (30, 30, 44), (40, 40, 44), (7, 7, 153)):
        layout = label_layout(rows, cols, cell)
        assert layout.font_px >= 14, (rows, cols, cell)
        from rose_gen.render.controls import label_font

        assert label_font(layout.font_px).getlength(f"C{cols}") <= cell - 2


def _tab(row: dict) -> MarkShape:
    m = row["control_mark"]
    return MarkShape(inset=m["inset_px"], leg=m["leg_px"], edge=m["edge_px"])


def test_exception_marks_are_where_the_rows_say_and_nowhere_else(release: Path) -> None:
    coords = {src["item_id"]: row for src, row in _pairs(release, "coords_given")}
    for src, row in _pairs(release, "exceptions_given"):
        image = decode_png((release / row["image"]).read_bytes())
        plain = decode_png((release / coords[src["item_id"]]["image"]).read_bytes())
        assert row["control_marked_cells"] == src["target_cells"]
        shape, cell = _tab(row), row["cell_size"]
        edge, fill = mark_masks(shape)
        top, left = row["control_grid_offset"]
        touched = np.zeros(image.shape[:2], dtype=bool)
        for r, c in row["control_marked_cells"]:
            y, x = top + (r - 1) * cell + shape.inset, left + (c - 1) * cell + shape.inset
            patch = image[y:y + shape.leg, x:x + shape.leg]
            assert (patch[edge] == MARK_EDGE).all() and (patch[fill] == MARK_FILL).all()
            touched[y:y + shape.leg, x:x + shape.leg] = edge | fill
        # every other pixel (labels, tiles, the T4 cue frame) is the coords_given image's
        assert np.array_equal(image[~touched], plain[~touched])


def test_marks_stand_out_on_every_source(release: Path) -> None:
    worst: dict[str, float] = {}
    for src, row in _pairs(release, "exceptions_given"):
        base = decode_png((release / src["image"]).read_bytes())
        shape, cell = _tab(row), row["cell_size"]
        for r, c in row["control_marked_cells"]:
            y, x = (r - 1) * cell + shape.inset, (c - 1) * cell + shape.inset
            s = mark_salience(base[y:y + shape.leg, x:x + shape.leg], shape)
            worst[row["rose_subset"]] = min(worst.get(row["rose_subset"], 1e9), s)
    assert len(worst) == 5
    assert min(worst.values()) >= 40.0, worst  # CIELAB distance of the tab's stronger colour to what it covers


def test_text_matrix_re_derives_the_gold(release: Path) -> None:
    for src, row in _pairs(release, "text_only"):
        assert row["image"] is None and row["image_width"] is None
        block = row["prompt_local"].split("\n", 1)[1].rsplit("\n", 1)[0]
        rows, cols, exceptions, lit = parse_grid_text(block)
        assert (rows, cols) == (src["rows"], src["cols"])
        assert exceptions == {tuple(c) for c in src["target_cells"]}
        if src["image_cue_type"] != "NONE":  # T4: the highlighted rectangle is the bracketed cells
            p = src["image_region_params"]
            assert lit == {(r, c) for r in range(p["r1"], p["r2"] + 1) for c in range(p["c1"], p["c2"] + 1)}
            region = lit
        else:
            assert not lit
            region = region_cells_for(rows, cols, src["region_type"], src["region_params"])
        gold = sorted(exceptions & set(region))
        assert [f"R{r},C{c}" for r, c in gold] == src["ground_truth_clicks"]
        assert len(gold) == src["ground_truth_count"]


@pytest.mark.parametrize("control", CONTROL_ORDER)
def test_control_parquet_holds_the_jsonl_rows_and_images(release: Path, control: str) -> None:
    for split in SPLITS:
        table = pq.read_table(release / f"analysis/controls/{control}/data/{split}.parquet").to_pylist()
        rows = _jsonl(release / f"analysis/controls/{control}/metadata_{split}.jsonl")
        assert len(table) == len(rows)
        for got, want in zip(table, rows, strict=True):
            image = got.pop("image")
            if control == "text_only":
                assert image is None
            else:
                assert image["path"] == want["image"] and image["bytes"] == (release / want["image"]).read_bytes()
            assert drop_nulls(got) == drop_nulls({k: v for k, v in want.items() if k != "image"})


def test_controls_are_byte_identical_for_any_worker_count(tmp_path: Path) -> None:
    extra = ["profile=mini_controls", "subsets=[glyph,pixel_edit]", *_small(2, 1)]
    one = generate_release(load_config([f"output_dir={tmp_path / 'one'}", "progress=false", "workers=1", *extra]))
    two = generate_release(load_config([f"output_dir={tmp_path / 'two'}", "progress=false", "workers=2", *extra]))
    files = sorted(p.relative_to(one.path) for p in one.path.rglob("*") if p.is_file())
    assert any(str(p).startswith("analysis/controls/exceptions_given/images") for p in files)
    assert files == sorted(p.relative_to(two.path) for p in two.path.rglob("*") if p.is_file())
    for rel in files:
        assert (one.path / rel).read_bytes() == (two.path / rel).read_bytes(), rel


def test_without_controls_nothing_of_them_is_written_or_recorded(tmp_path: Path) -> None:
    config = load_config([f"output_dir={tmp_path / 'r'}", "progress=false", "subsets=[glyph]", *_small(2, 1)])
    assert config.export.controls == () and "controls" not in config.recorded["export"]
    path = generate_release(config).path
    assert not (path / "analysis/controls").exists()
    summary = json.loads((path / "export_summary.json").read_text())
    assert "control_rows" not in summary["counts"] and "controls" not in summary["config"]["export"]


def test_an_unknown_control_is_one_config_error() -> None:
    with pytest.raises(ConfigError, match="export.controls: unknown control 'bogus'"):
        load_config(["export.controls=[bogus]"])
    assert load_config(["export=controls"]).export.controls == CONTROL_ORDER
