"""Auditing original images against their metadata: are the odd cells where the rows say?"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from rose_gen.check.replay.draw import visibly_differs
from rose_gen.check.replay.inputs import InputRow, ReplayError
from rose_gen.check.replay.scenes import ReplayScene, group_scenes
from rose_gen.core.schema import base_image_record


def cell_array(image: np.ndarray, rows: int, cols: int, cell: int) -> np.ndarray:
    """(rows, cols, cell, cell, 3) view of a grid image."""
    return image.reshape(rows, cell, cols, cell, 3).transpose(0, 2, 1, 3, 4)


def odd_cells(image: np.ndarray, rows: int, cols: int, cell: int) -> list[list[int]]:
    """1-based cells that differ visibly from the majority tile (per-pixel median of all cells).

    Cells identical to the median tile are skipped in numpy; the rest are judged with
    :func:`rose_gen.check.replay.draw.visibly_differs`.
    """
    cells = cell_array(image, rows, cols, cell)
    flat = cells.reshape(rows * cols, cell, cell, 3)
    majority = np.median(flat, axis=0).astype(np.uint8)
    diff = np.abs(flat.astype(np.int16) - majority.astype(np.int16)).reshape(rows * cols, -1).max(axis=1)
    out = []
    for idx in np.flatnonzero(diff > 8):
        if visibly_differs(flat[idx], majority):
            out.append([int(idx // cols) + 1, int(idx % cols) + 1])
    return out


def audit_scene(rs: ReplayScene, images_dir: Path) -> dict[str, Any]:
    """Are the original base image's odd cells where the metadata says? (one scene)"""
    scene = rs.scene
    rel = base_image_record(scene).path
    base_rows = [i.row for i in rs.rows if i.row.get("image_cue_type", "NONE") == "NONE" and "image" in i.row]
    listed = str(base_rows[0]["image"]) if base_rows else rel
    candidates = [images_dir / listed, images_dir / rel, images_dir / Path(listed).name]
    path = next((p for p in candidates if p.is_file()), None)
    record: dict[str, Any] = {"scene_id": scene.scene_id, "image": listed,
                              "metadata_cells": sorted([list(c) for c in scene.target_cells])}
    if path is None:
        return {**record, "status": "image_missing"}
    with Image.open(path) as im:
        arr = np.asarray(im.convert("RGB"))
    want = (scene.height, scene.width)
    if arr.shape[:2] != want:
        return {**record, "status": "size_mismatch", "image_size": [arr.shape[1], arr.shape[0]],
                "expected_size": [scene.width, scene.height]}
    found = odd_cells(arr, scene.rows, scene.cols, scene.cell_size)
    meta = {tuple(c) for c in scene.target_cells}
    got = {tuple(c) for c in found}
    return {**record, "status": "match" if got == meta else "mismatch", "detected_cells": sorted(found),
            "missing": sorted([list(c) for c in meta - got]), "extra": sorted([list(c) for c in got - meta])}


def audit_images(items: Sequence[InputRow], images_dir: Path) -> list[dict[str, Any]]:
    """:func:`audit_scene` for every scene of the rows."""
    if not Path(images_dir).is_dir():
        raise ReplayError(f"{images_dir} is not a folder; pass the folder holding images/<subset>/<id>.png")
    return [audit_scene(rs, Path(images_dir)) for rs in group_scenes(items)]
