"""Repeated runs in rose-eval (rose_eval.epochs): splitting and checking epochs, the mean and
agreement against a hand count, and intervals that treat epochs as rows of their scene."""

from __future__ import annotations

import numpy as np
import pytest

from rose_eval.analyses.bootstrap import scene_bootstrap
from rose_eval.epochs import agreement, check_even, epochs_summary, split_epochs, uneven
from rose_eval.io import InputError, Record
from rose_eval.vocab import TEMPLATE_ORDER

from .analyses.factory import GLYPH, STYLE, scene


def _records(rows: list[dict]) -> list[Record]:
    return [Record(f"preds.jsonl:{i}", row) for i, row in enumerate(rows, start=1)]


def test_a_file_without_epoch_fields_is_single_epoch():
    assert split_epochs(_records([{"item_id": "a"}, {"item_id": "b"}])) is None


def test_rows_without_the_field_are_epoch_one_and_bad_epochs_are_refused():
    by_epoch = split_epochs(_records([{"item_id": "a", "epoch": 2}, {"item_id": "a"}, {"item_id": "b", "epoch": 1},
                                      {"item_id": "b", "epoch": 2}]))
    assert list(by_epoch) == [1, 2]
    assert [r.row["item_id"] for r in by_epoch[1]] == ["a", "b"]
    assert uneven(by_epoch) == []
    for bad in (0, "2", True, 1.0):
        with pytest.raises(InputError, match="epoch must be an integer") as info:
            split_epochs(_records([{"item_id": "a", "epoch": 1}, {"item_id": "b", "epoch": bad}]))
        assert info.value.where == "preds.jsonl:2"


def test_uneven_epochs_are_named_and_refused_unless_allowed():
    gap = split_epochs(_records([{"item_id": "a", "epoch": 1}, {"item_id": "a", "epoch": 3}]))
    assert uneven(gap) == ["epochs 1, 3 are not 1..k (missing: 2)"]
    short = split_epochs(_records([{"item_id": "a", "epoch": 1}, {"item_id": "b", "epoch": 1},
                                   {"item_id": "a", "epoch": 2}]))
    assert uneven(short) == ["epoch 1 answers 1 item(s) another epoch does not (first: b)"]
    with pytest.raises(InputError) as info:
        check_even(short, "preds.jsonl", allow=False)
    assert "--allow_uneven_epochs" in info.value.one_line()
    check_even(short, "preds.jsonl", allow=True)


# ---- the mean and the agreement against a hand count ------------------------------------------

# Two scenes per subset, five items each; three epochs. PASS per (scene, template), by hand:
PASSES = {
    1: {(GLYPH, "g1"): (1, 1, 0, 0, 0), (GLYPH, "g2"): (1, 0, 0, 0, 0),
        (STYLE, "s1"): (1, 1, 1, 1, 1), (STYLE, "s2"): (0, 0, 0, 0, 0)},
    2: {(GLYPH, "g1"): (1, 0, 0, 0, 0), (GLYPH, "g2"): (1, 0, 0, 1, 0),
        (STYLE, "s1"): (1, 1, 1, 1, 1), (STYLE, "s2"): (0, 0, 0, 0, 0)},
    3: {(GLYPH, "g1"): (1, 1, 0, 0, 1), (GLYPH, "g2"): (1, 0, 0, 0, 0),
        (STYLE, "s1"): (1, 1, 1, 1, 0), (STYLE, "s2"): (0, 0, 0, 0, 0)},
}


def _epoch_rows(epoch: int) -> list[dict]:
    return [row for (subset, name), passes in PASSES[epoch].items() for row in scene(subset, name, passes)]


def test_mean_and_agreement_match_a_hand_count():
    rows = {e: _epoch_rows(e) for e in PASSES}
    summary = epochs_summary(rows, even=True, n_boot=200)
    # Micro PASS: epoch 1 passes 2+1+5+0 = 8 of 20, epoch 2 1+2+5+0 = 8, epoch 3 3+1+4+0 = 8.
    assert [e["pass"] for e in summary["per_epoch"]] == [0.4, 0.4, 0.4]
    # Table 1 Avg. PASS = mean of the subsets' PASS: epoch 1 (3/10 + 5/10) / 2 = 0.4, epoch 2
    # (3/10 + 5/10) / 2 = 0.4, epoch 3 (4/10 + 4/10) / 2 = 0.4.
    assert [e["table1/Avg. PASS"] for e in summary["per_epoch"]] == pytest.approx([0.4, 0.4, 0.4])
    # Table 2 Avg. PASS = mean over templates of the subset-macro template PASS. Epoch 1:
    # T1 (1 + 0.5)/2, T2 (0.5 + 0.5)/2, T3 (0 + 0.5)/2, T4 (0 + 0.5)/2, T5 (0 + 0.5)/2
    # = (0.75 + 0.5 + 0.25 + 0.25 + 0.25) / 5 = 0.4.
    assert summary["per_epoch"][0]["table2/Avg. PASS"] == pytest.approx(0.4)
    assert summary["mean"]["pass"] == pytest.approx(0.4)
    # Agreement by hand: g1 differs in T2 (1,0,1) and T5 (0,0,1); g2 differs in T4 (0,1,0);
    # s1 differs in T5 (1,1,0): 4 of 20 items differ, 16 agree.
    agree = summary["agreement"]
    assert (agree["items"], agree["same_verdict"], agree["share"]) == (20, 16, 0.8)
    assert agree["by_subset"][GLYPH] == {"items": 10, "same_verdict": 7, "share": 0.7}
    assert agree["by_subset"][STYLE] == {"items": 10, "same_verdict": 9, "share": 0.9}
    # Complete epochs: the pooled point of the intervals is the mean over the epochs.
    assert summary["intervals"]["table1"]["Avg. PASS"]["point"] == pytest.approx(0.4)


def test_unequal_epoch_means_and_agreement_on_common_items_only():
    rows = {1: _epoch_rows(1), 2: _epoch_rows(2)[:15]}  # epoch 2 lacks scene s2
    summary = epochs_summary(rows, even=False, problems=["x"], intervals=False)
    assert summary["per_epoch"][1]["items"] == 15
    assert summary["per_epoch"][1]["pass"] == pytest.approx(8 / 15)
    assert summary["mean"]["pass"] == pytest.approx((0.4 + 8 / 15) / 2)
    assert "intervals" not in summary
    # Only the 15 items both epochs scored are compared: g1 T2 and g2 T4 differ.
    assert agreement(rows)["items"] == 15 and agreement(rows)["same_verdict"] == 13


# ---- intervals: epochs are rows of their scene's cluster ---------------------------------------

def _noisy_scenes(n_scenes: int, epochs: int, seed: int = 7) -> dict[int, list[dict]]:
    """Every scene the same ability (p = 0.5 per item); the epochs are independent draws."""
    rng = np.random.default_rng(seed)
    return {e: [row for k in range(n_scenes)
                for row in scene(GLYPH, f"g{k:03d}", tuple(int(v) for v in rng.random(5) < 0.5))]
            for e in range(1, epochs + 1)}


def _width(result: dict) -> float:
    cell = result["table1"]["Avg. PASS"]
    return cell["hi"] - cell["lo"]


def _pooled(rows: dict[int, list[dict]]) -> list[dict]:
    return [row for epoch_rows in rows.values() for row in epoch_rows]


def test_identical_epochs_add_no_precision_unless_wrongly_counted_as_scenes():
    one = _noisy_scenes(60, 1)[1]
    same = {e: [dict(row) for row in one] for e in (1, 2, 3, 4)}
    single = scene_bootstrap(one, n_boot=2000)
    pooled = scene_bootstrap(_pooled(same), n_boot=2000)
    assert pooled["n_scenes"] == single["n_scenes"] == {GLYPH: 60}
    cell, alone = pooled["table1"]["Avg. PASS"], single["table1"]["Avg. PASS"]
    assert (cell["point"], cell["lo"], cell["hi"]) == (alone["point"], alone["lo"], alone["hi"])
    # The design effect says why: four identical rows per item are worth one.
    assert cell["n_items"] == 4 * alone["n_items"]
    assert cell["deff"] == pytest.approx(4 * alone["deff"], rel=1e-6)
    # Counting each epoch's copy of a scene as a scene of its own would halve the interval
    # (four copies), a precision the run does not have.
    as_scenes = [{**row, "scene_id": f"{row['scene_id']}#{e}"} for e, rows in same.items() for row in rows]
    assert _width(scene_bootstrap(as_scenes, n_boot=2000)) < 0.6 * _width(single)


def test_repeats_narrow_the_interval_as_far_as_they_average_out_noise():
    rows = _noisy_scenes(60, 4)
    single = scene_bootstrap(rows[1], n_boot=2000)
    pooled = scene_bootstrap(_pooled(rows), n_boot=2000)
    assert pooled["n_scenes"] == {GLYPH: 60}
    # Every scene has the same ability: the epochs' noise is all there is, and 4 epochs
    # average it down by about half...
    assert _width(pooled) < 0.75 * _width(single)
    # ...which is then what counting them as new scenes gives too (no correlation to ignore).
    as_scenes = [{**row, "scene_id": f"{row['scene_id']}#{e}"} for e, epoch_rows in rows.items()
                 for row in epoch_rows]
    assert _width(scene_bootstrap(as_scenes, n_boot=2000)) == pytest.approx(_width(pooled), rel=0.25)


def test_template_rows_are_all_counted():
    rows = _epoch_rows(1)
    assert {r["task_template"] for r in rows} == set(TEMPLATE_ORDER)
