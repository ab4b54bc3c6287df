"""Interface-control rows and images, written beside the release (``export.controls``).

For every main task row and every configured control (:mod:`rose_gen.tasks.controls`) one
control row is written under ``analysis/controls/<control>/``::

    analysis/controls/<control>/metadata_{dev,test}.jsonl     the control rows
    analysis/controls/<control>/data/{dev,test}.parquet       the same rows (+ the image, HF Image)
    analysis/controls/<control>/images/<subset>/<image_id>__<control>.png   (not for text_only)

A control row is the source row with every field kept (gold included) and these changed or
added: ``item_id`` = ``<source item_id>__<control>``, ``source_item_id``, ``control``,
``prompt_local`` (the control's sentence, a newline, the template's sentence), ``prompt``;
for image controls ``image_id``/``image``/``image_width``/``image_height`` of the control
image and ``control_grid_offset`` ``[top, left]`` (where the grid starts in it) with the
label font size; for ``exceptions_given`` ``control_marked_cells`` and the mark's geometry
(``control_mark``); for ``text_only`` ``image``, ``image_id``, ``image_width`` and
``image_height`` are null.

Everything is built from the main rows and images already in the release (a row names its
grid, exception cells and cue rectangle), in row order in the main process, so the output
is the same for any worker count and for a merge of shards. Off by default: a release
without controls has no trace of them.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from rose_eval.vocab import SPLITS
from rose_gen.release.features import ColumnCollector
from rose_gen.release.parquet import read_rows, write_parquet
from rose_gen.render.compose import encode_png
from rose_gen.render.controls import (
    MARK_EDGE,
    MARK_FILL,
    add_coordinate_labels,
    mark_exceptions,
    mark_shape,
)
from rose_gen.render.png import DEFAULT_PNG_ENCODER
from rose_gen.tasks.controls import CONTROLS, Control, control_item_id
from rose_gen.tasks.prompts import full_prompt

if TYPE_CHECKING:
    from rose_gen.release.export import ExportSettings, ReleaseWriter

CONTROLS_DIR = "analysis/controls"
ALL_ROWS = 1 << 62  # read_rows: every row of a file


def control_dir(control: str) -> str:
    """Release path of a control's folder."""
    return f"{CONTROLS_DIR}/{control}"


def control_image_path(control: str, subset: str, image_id: str) -> str:
    """Release path of a control image."""
    return f"{control_dir(control)}/images/{subset}/{image_id}__{control}.png"


def control_image(base: np.ndarray, row: Mapping[str, Any], control: Control) -> tuple[np.ndarray, dict[str, Any]]:
    """The control's image of ``row``'s image ``base`` and the row fields saying where things are drawn."""
    rows, cols, cell = int(row["rows"]), int(row["cols"]), int(row["cell_size"])
    image, fields = base, {}
    offset = (0, 0)
    if control.labels:
        image, layout = add_coordinate_labels(base, rows, cols, cell)
        offset = (layout.top, layout.left)
        fields["control_grid_offset"] = [layout.top, layout.left]
        fields["control_label_font_px"] = layout.font_px
    if control.marks:
        cells = [[int(r), int(c)] for r, c in row["target_cells"]]
        image = mark_exceptions(image, cells, cell, offset)
        shape = mark_shape(cell)
        fields["control_marked_cells"] = cells
        fields["control_mark"] = {"shape": "corner_tab", "corner": "top_left", "inset_px": shape.inset,
                                  "leg_px": shape.leg, "edge_px": shape.edge, "edge_rgb": list(MARK_EDGE),
                                  "fill_rgb": list(MARK_FILL)}
    return image, fields


def control_row(row: Mapping[str, Any], control: Control, image: Mapping[str, Any] | None,
                fields: Mapping[str, Any]) -> dict[str, Any]:
    """The control row of source ``row``; ``image``: its image record (path, id, size) or None."""
    out = dict(row)
    out["item_id"] = control_item_id(str(row["item_id"]), control.name)
    prompt_local = control.sentence(row) + "\n" + str(row["prompt_local"])
    out["prompt_local"] = prompt_local
    out["prompt"] = full_prompt(prompt_local)
    for key in ("image_id", "image", "image_width", "image_height"):
        out[key] = None if image is None else image[key]
    out["source_item_id"] = row["item_id"]
    out["control"] = control.name
    out.update(fields)
    return out


class ControlImages:
    """Control images of one scene at a time, each made once (a scene's rows share two images)."""

    def __init__(self, writer: ReleaseWriter, compress_level: int, encoder: str = DEFAULT_PNG_ENCODER) -> None:
        self.writer, self.level, self.encoder = writer, compress_level, encoder
        self.scene: object = None
        self.made: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
        self.decoded: dict[str, np.ndarray] = {}

    def get(self, row: Mapping[str, Any], control: Control) -> tuple[dict[str, Any], dict[str, Any]]:
        """(image record, row fields) of ``row``'s image under ``control``; written on first use."""
        if row["scene_id"] != self.scene:
            self.scene, self.made, self.decoded = row["scene_id"], {}, {}
        key = (str(row["image"]), control.name)
        if key not in self.made:
            if key[0] not in self.decoded:
                with Image.open(self.writer.target(key[0])) as picture:
                    self.decoded[key[0]] = np.asarray(picture.convert("RGB"), dtype=np.uint8)
            image, fields = control_image(self.decoded[key[0]], row, control)
            rel = control_image_path(control.name, str(row["rose_subset"]), str(row["image_id"]))
            self.writer.write_file(rel, encode_png(image, self.level, self.encoder))
            record = {"image_id": f"{row['image_id']}__{control.name}", "image": rel,
                      "image_width": int(image.shape[1]), "image_height": int(image.shape[0])}
            self.made[key] = (record, fields)
        return self.made[key]


def write_controls(writer: ReleaseWriter, settings: ExportSettings, compress_level: int,
                   encoder: str = DEFAULT_PNG_ENCODER) -> dict[str, dict[str, int]]:
    """Write every configured control's rows, images and Parquet; returns rows per control and split.

    Reads the main rows from the writer's (closed) main JSONL files.
    """
    counts: dict[str, dict[str, int]] = {}
    for name in settings.controls:
        control = CONTROLS.get(name)
        images = ControlImages(writer, compress_level, encoder)
        counts[name] = {}
        for split in SPLITS:
            rel = f"{control_dir(name)}/metadata_{split}.jsonl"
            sink = writer._sink(rel)
            columns = ColumnCollector()
            for row in read_rows(writer.target(writer.main_file(split)), 0, ALL_ROWS):
                if control.image:
                    record, fields = images.get(row, control)
                else:
                    record, fields = None, {}
                out = control_row(row, control, record, fields)
                sink.write(out)
                columns.add(out)
            sink.close()
            counts[name][split] = sink.rows
            if settings.parquet:
                _write_parquet(writer, settings, f"{control_dir(name)}/data/{split}.parquet", sink.path,
                               columns, image_column=control.image)
    return counts


def _write_parquet(writer: ReleaseWriter, settings: ExportSettings, rel: str, jsonl: Path,
                   columns: ColumnCollector, *, image_column: bool) -> None:
    assert writer.tmp is not None
    writer.files[rel] = write_parquet(writer.tmp, rel, read_rows(jsonl, 0, ALL_ROWS), columns.columns(),
                                      rows_per_group=settings.parquet_rows_per_group,
                                      max_bytes_per_group=settings.parquet_max_bytes_per_group,
                                      compression=settings.parquet_compression, image_column=image_column)


def decode_png(data: bytes) -> np.ndarray:
    """An RGB array of PNG bytes (tests and checks)."""
    with Image.open(io.BytesIO(data)) as picture:
        return np.asarray(picture.convert("RGB"), dtype=np.uint8)


__all__: Sequence[str] = ("CONTROLS_DIR", "control_dir", "control_image", "control_image_path", "control_row",
                          "decode_png", "write_controls")
