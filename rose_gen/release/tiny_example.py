"""Build rose-eval's bundled tiny example: synthetic v0.1-format metadata and a mixed predictions file.

The example ships inside the evaluator (``rose_eval/examples/tiny``) as plain data; this
builder lives in the generator because it draws scenes through ``rose_gen.core.rng`` (the
evaluator never imports the generator). Deterministic: re-running writes byte-identical
files (``tests/rose_gen/release/test_tiny_example.py`` checks the shipped copy).

No pixels and no real v0.1 rows: scenes are grids with a few target cells drawn at
random, and every task row carries the v0.1 fields the evaluator reads (plus the usual
descriptive ones). Bridge rows (T1B, T2B) are included.

    python -m rose_gen.release.tiny_example [OUT_DIR]   # default: rose_eval/examples/tiny
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

import rose_eval
from rose_eval import vocab
from rose_eval.formal import formal_answer
from rose_gen.core.rng import scene_rng
from rose_gen.core.schema import RegionSpec
from rose_gen.scene.regions import case_of, region_mask
from rose_gen.sources import SOURCES, load_sources
from rose_gen.tasks.prompts import OUTPUT_FORMATS, PROMPT_GLOBAL, cell_label, full_prompt
from rose_gen.tasks.templates import TEMPLATES

SEED = 20260101
TINY_DIR = Path(rose_eval.__file__).resolve().parent / "examples" / "tiny"
SCENES_PER_SPLIT = {"test": 2, "dev": 1}
MODEL = "tiny-demo-model"

Cell = tuple[int, int]


@dataclass(frozen=True)
class Scene:
    subset: str
    split: str
    index: int  # 1-based scene number within the subset
    rows: int
    cols: int
    targets: tuple[Cell, ...]  # placement order


def draw_scene(subset: str, split: str, index: int) -> Scene:
    rng = scene_rng(SEED, subset, index, purpose=f"tiny-{split}")
    rows, cols = (int(v) for v in rng.integers(6, 10, size=2))
    n_targets = int(rng.integers(1, 5))
    flat = rng.choice(rows * cols, size=n_targets, replace=False)
    targets = tuple((int(f) // cols + 1, int(f) % cols + 1) for f in flat)
    return Scene(subset, split, index, rows, cols, targets)


def draw_range(rng: np.random.Generator, rows: int, cols: int,
               kind: str | None = None) -> tuple[str, dict[str, int]]:
    drawn = ("ROW_RANGE", "COL_RANGE", "RECTANGLE")[int(rng.integers(0, 3))]
    kind = kind or drawn
    r1 = int(rng.integers(1, rows - 1))
    c1 = int(rng.integers(1, cols - 1))
    r2 = min(rows, r1 + int(rng.integers(0, 3)))
    c2 = min(cols, c1 + int(rng.integers(0, 3)))
    params = {"ROW_RANGE": {"r1": r1, "r2": r2}, "COL_RANGE": {"c1": c1, "c2": c2},
              "RECTANGLE": {"r1": r1, "r2": r2, "c1": c1, "c2": c2}}[kind]
    return kind, params


@lru_cache(maxsize=1)
def _primitive_types() -> dict[str, str]:
    """Subset name -> primitive_type, as each registered visual source declares it."""
    load_sources()
    return {SOURCES.get(name).info.subset: SOURCES.get(name).info.primitive_type for name in SOURCES.names()}


def task_row(scene: Scene, *, item_id: str, template: str, kind: str, params: dict[str, Any],
             image_no: int, cue: str, source_id: str | None = None) -> dict[str, Any]:
    """One row in the tiny example's shape, worded and answered by the generator's templates.

    ``source_id``: for a bridge template, the item id of its source task.
    """
    tmpl = TEMPLATES.get(template)
    mode = tmpl.task_mode
    prefix = vocab.SUBSET_ID_PREFIX[scene.subset]
    targets = set(scene.targets)
    inside = region_mask(kind, params, scene.rows, scene.cols)
    region = {(int(r) + 1, int(c) + 1) for r, c in zip(*np.nonzero(inside), strict=True)}
    in_region = sorted(targets & region)
    case = case_of(len(in_region), len(targets))
    answer = formal_answer(mode, in_region, count=len(in_region))
    prompt_local = tmpl.sentence(RegionSpec(kind, params, case, case))
    row: dict[str, Any] = {
        "item_id": item_id,
        "scene_id": f"{prefix}SCENE_{scene.index:06d}",
        "image_id": f"{prefix}IMG_{image_no:06d}",
        "split": scene.split,
        "dataset_version": "rose_toolkit_tiny_example",
        "protocol_version": vocab.PROTOCOL_VERSION,
        "primitive_type": _primitive_types()[scene.subset],
        "task_template": template,
        "task_mode": mode,
        "reference_source": vocab.REFERENCE_SOURCE,
        "selection_predicate": vocab.SELECTION_PREDICATE,
        "target_rule": vocab.TARGET_RULE,
        "region_type": kind,
        "region_params": params,
        "region_case": case,
        "cue_type": cue,
        "prompt_global": PROMPT_GLOBAL,
        "prompt_local": prompt_local,
        "prompt": full_prompt(prompt_local),
        "expected_output_format": OUTPUT_FORMATS[mode],
        "ground_truth_count": len(in_region),
        "ground_truth_clicks": [cell_label(*c) for c in in_region],
        "ground_truth_formal_answer": answer,
        "answer": answer,
        "all_target_cells": [cell_label(*c) for c in sorted(targets)],
        "region_target_cells": [cell_label(*c) for c in in_region],
        "global_target_count": len(targets),
        "region_target_count": len(in_region),
        "region_cell_count": len(region),
        "region_non_target_count": len(region) - len(in_region),
        "num_out_region_targets": len(targets) - len(in_region),
        "region_ratio": round(len(region) / (scene.rows * scene.cols), 6),
        "difficulty": "medium" if len(targets) < 3 else "hard",
        "rose_subset": scene.subset,
        "image": f"images/{scene.subset}/{prefix}IMG_{image_no:06d}.png",
        "rows": scene.rows,
        "cols": scene.cols,
        "target_cells": [list(c) for c in scene.targets],
    }
    if tmpl.bridge is not None and source_id is not None:
        source = TEMPLATES.get(tmpl.bridge.source_template)
        row["item_id"] = tmpl.bridge.item_id(source_id)
        row.update(tmpl.bridge.fields(source_id, source.name, source.task_mode))
        if tmpl.bridge.difficulty is not None:
            row["difficulty"] = tmpl.bridge.difficulty
    return row


def scene_rows(scene: Scene, *, bridges: bool = True) -> Iterator[dict[str, Any]]:
    """The five main task rows of a scene, then (optionally) its two bridge rows."""
    prefix = vocab.SUBSET_ID_PREFIX[scene.subset]
    rng = scene_rng(SEED, scene.subset, scene.index, purpose=f"tiny-tasks-{scene.split}")
    base_img, cue_img = 2 * scene.index - 1, 2 * scene.index
    ids = [f"{prefix}ITEM_{5 * (scene.index - 1) + t:06d}" for t in range(1, 6)]
    t2_kind, t2_params = draw_range(rng, scene.rows, scene.cols)
    t3_kind, t3_params = draw_range(rng, scene.rows, scene.cols)
    _, t4_params = draw_range(rng, scene.rows, scene.cols, kind="RECTANGLE")
    t5_kind, t5_ex = draw_range(rng, scene.rows, scene.cols)
    t5_params = {"exclude_type": t5_kind, "exclude_params": t5_ex}
    t1, t2, t3, t4, t5 = vocab.TEMPLATE_ORDER
    specs: list[dict[str, Any]] = [
        dict(item_id=ids[0], template=t1, kind="GLOBAL", params={}, image_no=base_img, cue="NONE"),
        dict(item_id=ids[1], template=t2, kind=t2_kind, params=t2_params, image_no=base_img, cue="NONE"),
        dict(item_id=ids[2], template=t3, kind=t3_kind, params=t3_params, image_no=base_img, cue="NONE"),
        dict(item_id=ids[3], template=t4, kind="VISUAL_REGION", params=t4_params, image_no=cue_img,
             cue="OUTLINE_BOX"),
        dict(item_id=ids[4], template=t5, kind="EXCLUSION", params=t5_params, image_no=base_img, cue="NONE"),
        dict(item_id=ids[2], template="T2B_COUNT_LOCAL_MATCHED", kind=t3_kind, params=t3_params,
             image_no=base_img, cue="NONE", source_id=ids[2]),
        dict(item_id=ids[0], template="T1B_CLICK_GLOBAL", kind="GLOBAL", params={}, image_no=base_img,
             cue="NONE", source_id=ids[0]),
    ]
    for spec in specs if bridges else specs[:5]:
        yield task_row(scene, **spec)


def metadata_rows(split: str, scenes_per_subset: dict[str, int] | None = None, *,
                  bridges: bool = True) -> list[dict[str, Any]]:
    """All rows of one split, subsets in order, scenes in order.

    By default the tiny example's sizes; pass ``scenes_per_subset`` for larger synthetic
    splits (bench/bench_eval.py builds a full-size 5,560-item test split this way).
    """
    rows: list[dict[str, Any]] = []
    for subset in vocab.SUBSET_ORDER:
        count = (scenes_per_subset or {}).get(subset, SCENES_PER_SPLIT[split])
        first = 1 if split == "test" else 1 + SCENES_PER_SPLIT["test"]
        for index in range(first, first + count):
            rows.extend(scene_rows(draw_scene(subset, split, index), bridges=bridges))
    return rows


# ---- predictions: a deterministic mix of right, wrong and malformed answers ----------

def _clicks(row: dict[str, Any]) -> list[str]:
    return [f"CLICK({c})" for c in row["ground_truth_clicks"]]


def _end(row: dict[str, Any], n: int | None = None) -> str:
    if row["task_mode"] == "CLICK":
        return "DONE"
    return f"SUBMIT({row['ground_truth_count'] if n is None else n})"


def _off_by_one(row: dict[str, Any]) -> str:
    if row["task_mode"] == "COUNT":
        return f"COUNT({row['ground_truth_count'] + 1})"
    extra = f"CLICK(R{row['rows']},C{row['cols']})"
    return "; ".join([*_clicks(row), extra, _end(row, row["ground_truth_count"] + 1)])


def _whole_grid(row: dict[str, Any]) -> str:
    targets = row["all_target_cells"]
    if row["task_mode"] == "COUNT":
        return f"COUNT({len(targets)})"
    return "; ".join([*(f"CLICK({c})" for c in targets), _end(row, len(targets))])


def _sloppy_spacing(row: dict[str, Any]) -> str:
    return row["answer"].lower().replace("(", " ( ").replace(",", " , ")


def _prose(row: dict[str, Any]) -> str:
    return f"The answer is {row['answer']}."


def _no_end(row: dict[str, Any]) -> str:
    return "; ".join(_clicks(row)) if row["task_mode"] != "COUNT" else f"{row['answer']};"


def _duplicate(row: dict[str, Any]) -> str:
    if row["task_mode"] == "COUNT" or not row["ground_truth_clicks"]:
        return "COUNT(0)" if row["task_mode"] == "COUNT" else "CLICK(R1,C1); CLICK(R1,C1); " + _end(row, 1)
    return "; ".join([*_clicks(row), _clicks(row)[0], _end(row)])


def _out_of_grid(row: dict[str, Any]) -> str:
    if row["task_mode"] == "COUNT":
        return "COUNT(99)"
    return "; ".join([*_clicks(row), f"CLICK(R{row['rows'] + 1},C1)", _end(row)])


ANSWER_STYLES: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("oracle", lambda row: row["answer"]),
    ("off_by_one", _off_by_one),
    ("oracle", lambda row: row["answer"]),
    ("whole_grid", _whole_grid),
    ("sloppy_spacing", _sloppy_spacing),
    ("prose", _prose),
    ("oracle", lambda row: row["answer"]),
    ("no_end_token", _no_end),
    ("duplicate_click", _duplicate),
    ("out_of_grid", _out_of_grid),
    ("oracle", lambda row: row["answer"]),
)


def predictions(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One prediction per row, cycling through ANSWER_STYLES; a few empty or API errors."""
    out: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        if index % 17 == 16:
            out.append({"item_id": row["item_id"], "model": MODEL, "raw_text": "",
                        "error": "HTTP 503: upstream timeout"})
            continue
        _, style = ANSWER_STYLES[index % len(ANSWER_STYLES)]
        out.append({"item_id": row["item_id"], "model": MODEL, "raw_text": style(row),
                    "error": None})
    return out


def dump_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def build(out_dir: Path = TINY_DIR) -> None:
    """Write metadata_test.jsonl, metadata_dev.jsonl and predictions_test.jsonl."""
    out_dir.mkdir(parents=True, exist_ok=True)
    test_rows = metadata_rows("test")
    dump_jsonl(out_dir / "metadata_test.jsonl", test_rows)
    dump_jsonl(out_dir / "metadata_dev.jsonl", metadata_rows("dev"))
    dump_jsonl(out_dir / "predictions_test.jsonl", predictions(test_rows))


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else TINY_DIR)
