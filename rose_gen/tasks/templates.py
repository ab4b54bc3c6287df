"""The five task templates and the two bridge templates, registered by name.

A template says which region a task uses, which image it is asked on, its task mode
and its prompt sentence. :func:`build_scene_rows` turns a :class:`SceneSpec` and its
two image records into task rows with every v0.1 field in v0.1's key order (plus
``difficulty_inputs`` at the end). Pure: no pixels, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rose_eval import vocab
from rose_eval.formal import formal_answer
from rose_eval.registry import Registry
from rose_gen.core.schema import ImageRecord, RegionSpec, SceneRows, SceneSpec, plain_json
from rose_gen.scene.regions import region_mask, region_phrase
from rose_gen.tasks.prompts import (
    OUTPUT_FORMATS,
    PROMPT_GLOBAL,
    cell_label,
    click_sentence,
    count_sentence,
    exclusion_sentence,
    full_prompt,
)

GLOBAL_REGION = RegionSpec("GLOBAL", {}, "all", "all")
# A scene without exceptions (balanced profiles): the whole grid holds none of them.
EMPTY_GLOBAL_REGION = RegionSpec("GLOBAL", {}, "zero", "zero")


@dataclass(frozen=True)
class Bridge:
    """How a bridge row points back at its source task."""

    source_template: str
    item_id: Callable[[str], str]  # source item id -> bridge item id
    fields: Callable[[str, str, str], dict[str, Any]]  # (source id, template, mode) -> fields
    difficulty: str | None = None  # fixed label (T1B: "bridge"); None copies the source's
    version_suffix: str = ""  # appended to dataset_version and protocol_version


@dataclass(frozen=True)
class TaskTemplate:
    """One task template: ``number`` is t in item ids and item_seed (bridges: the source's)."""

    name: str
    number: int
    task_mode: str
    image: str  # "base" or "cue"
    region_of: str  # key in SceneSpec.regions, or "GLOBAL"
    sentence: Callable[[RegionSpec], str]
    bridge: Bridge | None = None

    def region(self, scene: SceneSpec) -> RegionSpec:
        if self.region_of != "GLOBAL":
            return scene.regions[self.region_of]
        return GLOBAL_REGION if scene.target_cells else EMPTY_GLOBAL_REGION


TEMPLATES: Registry[TaskTemplate] = Registry("task template")


def _count(region: RegionSpec) -> str:
    return count_sentence(region_phrase(region.type, region.params))


def _click(region: RegionSpec) -> str:
    return click_sentence(region_phrase(region.type, region.params))


def _exclusion(region: RegionSpec) -> str:
    return exclusion_sentence(region_phrase(region.type, region.params))


T1, T2, T3, T4, T5 = vocab.TEMPLATE_ORDER
for _t in (
    TaskTemplate(T1, 1, "COUNT", "base", "GLOBAL", _count),
    TaskTemplate(T2, 2, "COUNT", "base", T2, _count),
    TaskTemplate(T3, 3, "CLICK", "base", T3, _click),
    TaskTemplate(T4, 4, "CLICK", "cue", T4, _click),
    TaskTemplate(T5, 5, "CLICK_COUNT", "base", T5, _exclusion),
    TaskTemplate(
        "T1B_CLICK_GLOBAL",
        1,
        "CLICK",
        "base",
        "GLOBAL",
        _click,
        Bridge(
            source_template=T1,
            item_id=lambda src: f"{src}__GCLK",
            fields=lambda src, tmpl, mode: {
                "bridge_task": True,
                "source_item_id": src,
                "source_task_template": tmpl,
            },
            difficulty="bridge",
            version_suffix="+global_click_bridge",
        ),
    ),
    TaskTemplate(
        "T2B_COUNT_LOCAL_MATCHED",
        3,
        "COUNT",
        "base",
        T3,
        _count,
        Bridge(
            source_template=T3,
            item_id=lambda src: f"MLCNT_{src}",
            fields=lambda src, tmpl, mode: {
                "bridge_task": True,
                "bridge_type": "MATCHED_LOCAL_COUNT_FROM_T3",
                "source_item_id": src,
                "source_click_item_id": src,
                "source_task_template": tmpl,
                "source_task_mode": mode,
            },
        ),
    ),
):
    TEMPLATES.add(_t.name, _t)

MAIN_TEMPLATES: tuple[str, ...] = vocab.TEMPLATE_ORDER
BRIDGE_TEMPLATES: tuple[str, ...] = vocab.BRIDGE_TEMPLATES


def _cells(mask: np.ndarray) -> list[tuple[int, int]]:
    """1-based (row, col) cells of a boolean grid mask, in (row, col) order."""
    rr, cc = np.nonzero(mask)  # row-major order is (row, col) numeric order
    return [(int(r) + 1, int(c) + 1) for r, c in zip(rr, cc, strict=True)]


def _labels(cells: list[tuple[int, int]]) -> list[str]:
    """Coordinate strings ``R<r>,C<c>`` of cells."""
    return [cell_label(r, c) for r, c in cells]


def task_row(
    scene: SceneSpec, template_name: str, base: ImageRecord, cue: ImageRecord
) -> dict[str, Any]:
    """One task row of ``scene`` for a registered template, in v0.1's key order."""
    tmpl = TEMPLATES.get(template_name)
    region = tmpl.region(scene)
    image = cue if tmpl.image == "cue" else base
    rows, cols = scene.rows, scene.cols

    targets = np.zeros((rows, cols), dtype=bool)
    for r, c in scene.target_cells:
        targets[r - 1, c - 1] = True
    inside = region_mask(region.type, region.params, rows, cols)
    all_labels = _labels(_cells(targets))
    wanted = _cells(targets & inside)
    region_labels = _labels(wanted)
    region_cells = int(inside.sum())
    n_region = len(region_labels)

    own_id = scene.item_id(tmpl.number)
    item_id, dataset_version, protocol_version = own_id, scene.dataset_version, scene.protocol_version
    source_name = tmpl.name
    if tmpl.bridge is not None:
        item_id = tmpl.bridge.item_id(own_id)
        dataset_version += tmpl.bridge.version_suffix
        protocol_version += tmpl.bridge.version_suffix
        source_name = tmpl.bridge.source_template
    difficulty = (
        tmpl.bridge.difficulty
        if tmpl.bridge is not None and tmpl.bridge.difficulty is not None
        else scene.difficulty[source_name]
    )
    prompt_local = tmpl.sentence(region)
    answer = formal_answer(tmpl.task_mode, wanted, count=len(wanted))  # the answer clicks every wanted cell

    row: dict[str, Any] = {
        "item_id": item_id,
        "scene_id": scene.scene_id,
        "image_id": image.image_id,
        "split": scene.split,
        "dataset_version": dataset_version,
        "protocol_version": protocol_version,
        "item_seed": scene.item_seed(tmpl.number),
        "primitive_type": scene.primitive_type,
        "task_template": tmpl.name,
        "task_mode": tmpl.task_mode,
        "reference_source": vocab.REFERENCE_SOURCE,
        "selection_predicate": vocab.SELECTION_PREDICATE,
        "target_rule": vocab.TARGET_RULE,
        "region_type": region.type,
        "region_params": plain_json(region.params),
        "region_case": region.case,
        "cue_type": image.cue_type,
        "prompt_global": PROMPT_GLOBAL,
        "prompt_local": prompt_local,
        "expected_output_format": OUTPUT_FORMATS[tmpl.task_mode],
        "ground_truth_count": n_region,
        "ground_truth_clicks": region_labels,
        "ground_truth_formal_answer": answer,
        "all_target_cells": all_labels,
        "region_target_cells": list(region_labels),
        "region_non_target_count": region_cells - n_region,
        "num_out_region_targets": len(all_labels) - n_region,
        "global_target_count": len(all_labels),
        "region_target_count": n_region,
        "region_cell_count": region_cells,
        "region_ratio": round(region_cells / (rows * cols), 6),
        "difficulty": difficulty,
        "rose_subset": scene.subset,
        "image": image.path,
        "prompt": full_prompt(prompt_local),
        "answer": answer,
        "rows": rows,
        "cols": cols,
        "cell_size": scene.cell_size,
    }
    if scene.font_size is not None:
        row["font_size"] = scene.font_size
    row["image_width"] = image.width
    row["image_height"] = image.height
    row["grid_size_profile"] = scene.grid_size_profile
    row["target_cells"] = [[r, c] for r, c in scene.target_cells]
    for key, value in scene.pair.row_fields.items():
        row[key] = plain_json(value)
    row["image_split"] = image.split
    row["image_cue_type"] = image.cue_type
    row["image_region_type"] = image.region_type
    row["image_region_params"] = plain_json(image.region_params)
    row["image_note"] = image.note
    if image.cue_color is not None:  # rows on a cue image: the RGB its highlight is drawn in
        row["image_cue_color"] = [int(v) for v in image.cue_color]
    if tmpl.bridge is not None:
        src = TEMPLATES.get(tmpl.bridge.source_template)
        row.update(tmpl.bridge.fields(own_id, src.name, src.task_mode))
    row["difficulty_inputs"] = plain_json(scene.difficulty_inputs.get(source_name, {}))
    return row


def build_scene_rows(scene: SceneSpec, base: ImageRecord, cue: ImageRecord) -> SceneRows:
    """The five main rows (T1..T5) and the bridge rows of one scene."""
    main = [task_row(scene, name, base, cue) for name in MAIN_TEMPLATES]
    bridges = {name: [task_row(scene, name, base, cue)] for name in BRIDGE_TEMPLATES}
    return SceneRows(main=main, bridges=bridges)
