"""Task rows: every field, v0.1 key order, ground truth = targets inside the region."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rose_gen.core.schema import DATASET_VERSION, base_image_record, cue_image_record
from rose_gen.scene.plan import plan_subset
from rose_gen.scene.v0_1_plans import V0_1_PLANS
from rose_gen.tasks.prompts import PROMPT_GLOBAL
from rose_gen.tasks.templates import BRIDGE_TEMPLATES, MAIN_TEMPLATES, TEMPLATES, build_scene_rows
from tests.rose_gen.scene.planning_fakes import FakeSource, small_plan

# v0.1's key order for a base-image row (read off the reference rows), subset fields between.
HEAD = [
    "item_id", "scene_id", "image_id", "split", "dataset_version", "protocol_version", "item_seed",
    "primitive_type", "task_template", "task_mode", "reference_source", "selection_predicate",
    "target_rule", "region_type", "region_params", "region_case", "cue_type", "prompt_global",
    "prompt_local", "expected_output_format", "ground_truth_count", "ground_truth_clicks",
    "ground_truth_formal_answer", "all_target_cells", "region_target_cells",
    "region_non_target_count", "num_out_region_targets", "global_target_count",
    "region_target_count", "region_cell_count", "region_ratio", "difficulty", "rose_subset",
    "image", "prompt", "answer", "rows", "cols", "cell_size",
]
MIDDLE = ["image_width", "image_height", "grid_size_profile", "target_cells"]
TAIL = ["image_split", "image_cue_type", "image_region_type", "image_region_params", "image_note"]
BRIDGE_KEYS = {
    "T1B_CLICK_GLOBAL": ["bridge_task", "source_item_id", "source_task_template"],
    "T2B_COUNT_LOCAL_MATCHED": ["bridge_task", "bridge_type", "source_item_id",
                                "source_click_item_id", "source_task_template", "source_task_mode"],
}
LABEL = re.compile(r"^R(\d+),C(\d+)$")


def _cells(row: dict) -> set[tuple[int, int]]:
    """The region's cells read independently from region_type/region_params."""
    rows, cols = row["rows"], row["cols"]
    every = {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)}
    kind, p = row["region_type"], row["region_params"]
    if kind == "GLOBAL":
        return every
    if kind == "EXCLUSION":
        inner = dict(row, region_type=p["exclude_type"], region_params=p["exclude_params"])
        return every - _cells(inner)
    r1, r2, c1, c2 = p.get("r1", 1), p.get("r2", rows), p.get("c1", 1), p.get("c2", cols)
    return {(r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)}


def _label_cells(labels: list[str]) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in LABEL.match(lab).groups()) for lab in labels]


def _check_row(row: dict, scene) -> None:
    targets = {tuple(t) for t in row["target_cells"]}
    assert targets == set(scene.target_cells)
    region = _cells(row)
    truth = sorted(targets & region)
    gt = _label_cells(row["ground_truth_clicks"])
    assert gt == truth  # sorted by (row, col) numerically, exactly targets ∩ region
    assert row["region_target_cells"] == row["ground_truth_clicks"]
    assert _label_cells(row["all_target_cells"]) == sorted(targets)
    n, total = len(truth), len(targets)
    assert row["ground_truth_count"] == row["region_target_count"] == n
    assert row["global_target_count"] == total
    assert row["region_cell_count"] == len(region)
    assert row["region_non_target_count"] == len(region) - n
    assert row["num_out_region_targets"] == total - n
    assert row["region_ratio"] == round(len(region) / (row["rows"] * row["cols"]), 6)
    got = "zero" if n == 0 else "all" if n == total else "partial"
    case = row["region_case"]
    assert case == got or case.startswith(f"fallback_{got}_wanted_")
    clicks = "; ".join(f"CLICK({lab})" for lab in row["ground_truth_clicks"])
    mode = row["task_mode"]
    expected = {
        "COUNT": f"COUNT({n})",
        "CLICK": f"{clicks}; DONE" if n else "DONE",
        "CLICK_COUNT": f"{clicks}; SUBMIT({n})" if n else "SUBMIT(0)",
    }[mode]
    assert row["ground_truth_formal_answer"] == row["answer"] == expected
    assert row["prompt"] == PROMPT_GLOBAL + "\n" + row["prompt_local"]
    assert (row["reference_source"], row["selection_predicate"], row["target_rule"]) == (
        "REF_MAJORITY", "SELECT_DIFFERENT", "ODD_FROM_MAJORITY")
    assert row["image_width"] == row["cols"] * row["cell_size"]
    assert row["image_height"] == row["rows"] * row["cell_size"]
    assert row["image"] == f"images/{row['rose_subset']}/{row['image_id']}.png"
    assert row["split"] == scene.split


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), subset=st.sampled_from(list(V0_1_PLANS)))
def test_rows_over_many_seeds(seed, subset):
    source = FakeSource(subset)
    for scene in plan_subset(small_plan(subset, n_scenes=6, n_dev=2), seed, source):
        base, cue = base_image_record(scene), cue_image_record(scene)
        rows = build_scene_rows(scene, base, cue)
        k, prefix = scene.scene_index, scene.id_prefix
        assert [r["task_template"] for r in rows.main] == list(MAIN_TEMPLATES)
        assert set(rows.bridges) == set(BRIDGE_TEMPLATES)
        subset_keys = list(scene.pair.row_fields)
        font = ["font_size"] if scene.font_size is not None else []
        for t, row in enumerate(rows.main, start=1):
            _check_row(row, scene)
            assert list(row) == HEAD + font + MIDDLE + subset_keys + TAIL + ["difficulty_inputs"]
            assert row["item_id"] == f"{prefix}ITEM_{5 * k - 5 + t:06d}"
            assert row["item_seed"] == source.info.item_seed_base + 10 * k + t
            assert row["image_id"] == f"{prefix}IMG_{2 * k if t == 4 else 2 * k - 1:06d}"
            assert row["dataset_version"] == DATASET_VERSION and row["protocol_version"] == "v0.3"
            assert row["difficulty"] == scene.difficulty[row["task_template"]]
            assert row["difficulty_inputs"] == scene.difficulty_inputs[row["task_template"]]
            assert row["expected_output_format"] == {
                "COUNT": "COUNT(n)", "CLICK": "CLICK(Rr,Cc); ...; DONE",
                "CLICK_COUNT": "CLICK(Rr,Cc); ...; SUBMIT(n)"}[row["task_mode"]]
            if t == 4:
                assert row["cue_type"] == row["image_cue_type"] == "OUTLINE_BOX"
                assert row["image_region_type"] == "VISUAL_REGION"
                assert row["image_region_params"] == row["region_params"]
                assert row["image_note"] == "cue image with highlighted region"
                assert row["prompt_local"] == (
                    "Click all cells that are different from the majority inside the highlighted"
                    " region. Answer only using CLICK(Rr,Cc); ...; DONE.")
            else:
                assert row["cue_type"] == row["image_cue_type"] == "NONE"
                assert row["image_note"] == "base image without visual cue"
        t1, t3 = rows.main[0], rows.main[2]
        assert t1["region_type"] == "GLOBAL" and t1["region_case"] == "all"
        assert rows.main[4]["region_type"] == "EXCLUSION"
        assert rows.main[4]["prompt_local"].startswith(
            "Click all cells that are different from the majority, excluding ")
        for name, (bridge,) in rows.bridges.items():
            _check_row(bridge, scene)
            assert list(bridge) == (HEAD + font + MIDDLE + subset_keys + TAIL + BRIDGE_KEYS[name]
                                    + ["difficulty_inputs"])
            assert bridge["bridge_task"] is True
        t1b = rows.bridges["T1B_CLICK_GLOBAL"][0]
        assert t1b["item_id"] == t1["item_id"] + "__GCLK" and t1b["item_seed"] == t1["item_seed"]
        assert (t1b["task_mode"], t1b["difficulty"], t1b["region_case"]) == ("CLICK", "bridge", "all")
        assert t1b["ground_truth_clicks"] == t1["ground_truth_clicks"]
        assert t1b["dataset_version"] == DATASET_VERSION + "+global_click_bridge"
        assert t1b["protocol_version"] == "v0.3+global_click_bridge"
        t2b = rows.bridges["T2B_COUNT_LOCAL_MATCHED"][0]
        assert t2b["item_id"] == "MLCNT_" + t3["item_id"] and t2b["item_seed"] == t3["item_seed"]
        for key in ("region_type", "region_params", "region_case", "difficulty",
                    "ground_truth_clicks", "region_ratio", "image_id"):
            assert t2b[key] == t3[key]
        assert t2b["ground_truth_formal_answer"] == f"COUNT({t3['ground_truth_count']})"
        assert (t2b["bridge_type"], t2b["source_click_item_id"], t2b["source_task_mode"]) == (
            "MATCHED_LOCAL_COUNT_FROM_T3", t3["item_id"], "CLICK")
        json.dumps(rows.main + [r for rs in rows.bridges.values() for r in rs])


def test_templates_registered():
    assert TEMPLATES.names() == list(MAIN_TEMPLATES) + list(BRIDGE_TEMPLATES)
