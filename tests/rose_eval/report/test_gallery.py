"""Failure gallery: the seeded sample and the overlay's pixels."""

from __future__ import annotations

import base64
import io
import random

import numpy as np
from PIL import Image

from rose_eval.report.gallery import (
    GOLD,
    HIT,
    MISS,
    OUTSIDE_TARGET,
    REGION,
    card,
    item_image,
    overlay,
    png_data_uri,
    sample_failures,
)
from rose_eval.score import score_item
from tests.rose_eval.analyses.factory import GLYPH, STYLE, T1, T3, T4, item


def _failures() -> list[dict]:
    rows = []
    for k in range(12):
        rows += [item(GLYPH, f"s{k}", T1, k % 3 == 0), item(STYLE, f"s{k}", T3, 0),
                 item(GLYPH, f"s{k}", T4, k % 2)]
    return rows


def test_sample_is_seeded_order_free_and_takes_templates_in_turn() -> None:
    items = _failures()
    picked = sample_failures(items, 7, seed=3)
    assert len(picked) == 7 and all(p["pass"] != 1 for p in picked)
    assert [p["task_template"] for p in picked[:3]] == [T1, T3, T4]
    shuffled = items[:]
    random.Random(0).shuffle(shuffled)
    assert sample_failures(shuffled, 7, seed=3) == picked
    assert sample_failures(items, 7, seed=4) != picked
    assert len(sample_failures(items, 1000, seed=3)) == sum(1 for i in items if i["pass"] != 1)
    assert sample_failures(items, 0, seed=3) == []


ROW = {
    "item_id": "X1", "scene_id": "S", "rose_subset": GLYPH, "task_template": T3,
    "task_mode": "CLICK", "region_type": "ROW_RANGE", "region_params": {"r1": 1, "r2": 2},
    "rows": 4, "cols": 5, "ground_truth_count": 2, "ground_truth_clicks": ["R1,C1", "R2,C4"],
    "all_target_cells": ["R1,C1", "R2,C4", "R4,C2"], "region_target_cells": ["R1,C1", "R2,C4"],
    "ground_truth_formal_answer": "CLICK(R1,C1); CLICK(R2,C4); DONE",
    "prompt_local": "Click all cells that are different from the majority in rows 1 to 2.",
    "image": "images/x.png",
}


def test_overlay_draws_gold_frames_clicks_and_the_veil_where_the_grid_says() -> None:
    scored = score_item(ROW, {"raw_text": "CLICK(R1,C1); CLICK(R4,C2); DONE"})
    scene = Image.new("RGB", (250, 200), (255, 255, 255))  # 4 x 5 cells of 50 px
    out = np.asarray(overlay(scene, scored, ROW))
    assert out.shape == (400, 500, 3)  # a small scene grows by a whole factor (2)
    cell = 100

    def at(r: float, c: float) -> tuple[int, ...]:
        return tuple(int(v) for v in out[int((r - 1) * cell), int((c - 1) * cell)])

    assert at(1.5, 1.5) == (255, 255, 255)  # a cell's centre stays visible ...
    assert at(1.24, 1.24) == HIT  # ... a click on a gold cell is a green dot in its corner
    assert at(4.24, 2.24) == MISS  # clicked outside the rows: red dot
    assert at(2.24, 4.24) == (255, 255, 255)  # missed gold cell: no dot ...
    assert at(2.06, 4.5) == GOLD  # ... framed in green
    assert at(1.5, 3.5) == (255, 255, 255)  # permitted, not gold, not clicked
    assert max(at(3.5, 3.5)) < 200  # outside the permitted rows: veiled
    assert at(2.98, 3.5) == REGION  # the permitted rows framed (lower edge) ...
    assert at(4.04, 2.5) != GOLD and at(4.04, 2.5)[:2] == OUTSIDE_TARGET[:2]  # ... R4C2: amber


def test_card_escapes_everything_and_embeds_a_png() -> None:
    hostile = "<script>alert(1)</script>"
    scored = score_item(ROW, {"raw_text": hostile, "model": hostile})
    image = item_image(scored, ROW, None)
    assert image.uri is None and "not found" in image.note
    html = card(scored, {**ROW, "prompt_local": "<b>p</b>"}, image)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;p&lt;/b&gt;" in html
    uri = png_data_uri(Image.new("RGB", (3, 2), (1, 2, 3)))
    png = base64.b64decode(uri.removeprefix("data:image/png;base64,"))
    assert Image.open(io.BytesIO(png)).getpixel((0, 0)) == (1, 2, 3)
    assert png_data_uri(Image.new("RGB", (3, 2), (1, 2, 3))) == uri
