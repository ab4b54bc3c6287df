"""Prompt strings and the v0.1 reference rows (read in place, never copied)."""

from __future__ import annotations

from rose_gen.core.schema import ImageRecord, RegionSpec, SceneSpec
from rose_gen.scene.regions import case_of, region_mask, region_phrase, target_mask
from rose_gen.sources.base import AssetPair
from rose_gen.tasks.prompts import (
    PROMPT_GLOBAL,
    click_sentence,
    count_sentence,
    exclusion_sentence,
    full_prompt,
)
from rose_gen.tasks.templates import task_row
from tests.reference import v01_rows

# Fields the task rows carry before and after the subset's own fields.
_BEFORE_SUBSET = "target_cells"
_AFTER_SUBSET = "image_split"
_OURS_ONLY = ("difficulty_inputs",)


def _reference_rows() -> list[dict]:
    return v01_rows()


def test_prompt_global_is_v0_1_text():
    assert PROMPT_GLOBAL.endswith("SUBMIT(2)\n")
    assert PROMPT_GLOBAL.count("\n") == 11
    assert full_prompt("x") == PROMPT_GLOBAL + "\nx"


def test_sentences_and_answers():
    assert count_sentence("in row 4") == (
        "Count the number of cells that are different from the majority in row 4."
        " Answer only in the format: COUNT(n)."
    )
    assert click_sentence("in columns 2 to 3") == (
        "Click all cells that are different from the majority in columns 2 to 3."
        " Answer only using CLICK(Rr,Cc); ...; DONE."
    )
    assert exclusion_sentence("rows 3 to 5") == (
        "Click all cells that are different from the majority, excluding rows 3 to 5, then"
        " submit the number of cells you clicked. Answer only using CLICK(Rr,Cc); ...; SUBMIT(n)."
    )


def _scene_from_reference(row: dict) -> SceneSpec:
    """A SceneSpec holding only what the reference row records about its scene."""
    keys = list(row)
    subset_fields = keys[keys.index(_BEFORE_SUBSET) + 1 : keys.index(_AFTER_SUBSET)]
    prefix = row["scene_id"].split("SCENE_")[0]
    k = int(row["scene_id"].split("_")[-1])
    case = row["region_case"]
    region = RegionSpec(row["region_type"], row["region_params"], case, case.split("_")[-1])
    t3 = "T3_CLICK_LOCAL_NUMERIC"
    return SceneSpec(
        subset=row["rose_subset"],
        source="reference",
        scene_index=k,
        scene_id=row["scene_id"],
        split=row["split"],
        id_prefix=prefix,
        primitive_type=row["primitive_type"],
        item_seed_base=row["item_seed"] - 10 * k - 3,
        image_split=row["image_split"],
        rows=row["rows"],
        cols=row["cols"],
        cell_size=row["cell_size"],
        font_size=row.get("font_size"),
        grid_size_profile=row["grid_size_profile"],
        target_cells=tuple((r, c) for r, c in row["target_cells"]),
        pair=AssetPair("reference", "", "", "", row_fields={f: row[f] for f in subset_fields}),
        regions={t3: region},
        cue_type="OUTLINE_BOX",
        difficulty={t3: row["difficulty"]},
        difficulty_inputs={t3: {}},
        dataset_version=row["dataset_version"],
        protocol_version=row["protocol_version"],
    )


def test_count_sentence_matches_all_reference_rows():
    rows = _reference_rows()
    assert len(rows) == 1112
    mismatched = [
        r["item_id"]
        for r in rows
        if count_sentence(region_phrase(r["region_type"], r["region_params"])) != r["prompt_local"]
        or full_prompt(r["prompt_local"]) != r["prompt"]
        or r["prompt_global"] != PROMPT_GLOBAL
    ]
    assert mismatched == []


def test_matched_count_bridge_rows_rebuilt_exactly():
    """Every reference T2B row, rebuilt from its scene fields, equals the row (key order too)."""
    rows = _reference_rows()
    matched = 0
    for ref in rows:
        scene = _scene_from_reference(ref)
        base = ImageRecord(
            image_id=ref["image_id"],
            path=ref["image"],
            width=ref["image_width"],
            height=ref["image_height"],
            split=ref["image_split"],
            cue_type=ref["image_cue_type"],
            region_type=ref["image_region_type"],
            region_params=ref["image_region_params"],
            note=ref["image_note"],
        )
        ours = task_row(scene, "T2B_COUNT_LOCAL_MATCHED", base, base)
        for key in _OURS_ONLY:
            ours.pop(key)
        assert list(ours) == list(ref), ref["item_id"]
        assert ours == ref, ref["item_id"]
        matched += 1
    assert matched == 1112


def test_reference_case_labels_agree_with_our_case_rule():
    """v0.1's region_case (the ``got`` part of a fallback label) is our case of targets ∩ region."""
    disagree = []
    for r in _reference_rows():
        inside = region_mask(r["region_type"], r["region_params"], r["rows"], r["cols"])
        targets = target_mask(r["rows"], r["cols"], [tuple(t) for t in r["target_cells"]])
        got = case_of(int((inside & targets).sum()), int(targets.sum()))
        label = r["region_case"]
        if (label.split("_")[1] if label.startswith("fallback_") else label) != got:
            disagree.append(r["item_id"])
    assert disagree == []
