"""The interface_controls decomposition on hand-made records: exact parts, the chain without a
control, paired intervals, determinism, and None without control items."""

from __future__ import annotations

import pytest

from rose_eval.analyses.controls import interface_controls
from rose_eval.vocab import TEMPLATE_ORDER


def _records(passes: dict[str, list[int]]) -> tuple[list[dict], list[dict]]:
    """Standard records of 2 subsets x 5 scenes x 5 templates and their control records."""
    items, controls = [], []
    k = 0
    for subset in ("ROSE-ChineseGlyph", "ROSE-PixelEdit"):
        for scene in range(5):
            for template in TEMPLATE_ORDER:
                item_id = f"{subset[:6]}_{scene}_{template[:2]}"
                items.append({"item_id": item_id, "scene_id": f"S{scene}", "rose_subset": subset,
                              "task_template": template, "pass": passes["standard"][k]})
                for control, values in passes.items():
                    if control != "standard":
                        controls.append({"item_id": f"{item_id}__{control}", "control": control,
                                         "source_item_id": item_id, "pass": values[k]})
                k += 1
    return items, controls


def _pattern(period: int, right: int) -> list[int]:
    return [int(k % period < right) for k in range(50)]


def test_parts_are_the_consecutive_differences_and_add_up_to_the_gap() -> None:
    items, controls = _records({"standard": _pattern(10, 2), "coords_given": _pattern(10, 5),
                                "exceptions_given": _pattern(10, 6), "text_only": _pattern(10, 9)})
    out = interface_controls(items, controls, n_boot=500)
    assert out["chain"] == ["standard", "coords_given", "exceptions_given", "text_only"]
    a = out["all"]
    assert (a["n_items"], a["n_scenes"]) == (50, 10)
    assert [a[k]["point"] for k in ("pass_standard", "pass_coords_given", "pass_exceptions_given",
                                    "pass_text_only")] == [20.0, 50.0, 60.0, 90.0]
    parts = [a[p]["point"] for p in out["parts"]]
    assert parts == pytest.approx([30.0, 10.0, 30.0, 10.0])
    assert sum(parts) == pytest.approx(a["gap"]["point"]) == pytest.approx(80.0)
    for name in out["parts"]:
        assert a[name]["lo"] <= a[name]["point"] <= a[name]["hi"]
    assert set(out["by_template"]) == set(TEMPLATE_ORDER)
    assert interface_controls(items, controls, n_boot=500) == out  # seeded: the same every run


def test_a_missing_control_joins_its_part_to_the_next() -> None:
    items, controls = _records({"standard": _pattern(10, 2), "exceptions_given": _pattern(10, 6)})
    out = interface_controls(items, controls, n_boot=100)
    assert out["chain"] == ["standard", "exceptions_given"]
    assert out["parts"] == ["lost_to_perception", "lost_to_execution"]
    assert out["all"]["lost_to_perception"]["point"] == pytest.approx(40.0)
    assert out["all"]["lost_to_execution"]["point"] == pytest.approx(40.0)


def test_items_without_every_control_are_left_out_and_no_controls_is_none() -> None:
    items, controls = _records({"standard": _pattern(2, 1), "coords_given": _pattern(2, 1),
                                "text_only": _pattern(1, 1)})
    dropped = [c for c in controls if not (c["control"] == "text_only" and c["source_item_id"] == items[0]["item_id"])]
    out = interface_controls(items, dropped, n_boot=50)
    assert out["n_paired_items"] == 49 and out["n_control_items"] == {"coords_given": 50, "text_only": 49}
    assert interface_controls(items, [], n_boot=50) is None
