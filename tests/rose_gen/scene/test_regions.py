"""Region kinds: cells, phrases and case-aware sampling with truthful fallback labels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rose_gen.scene.regions import (
    REGION_KINDS,
    RegionError,
    RegionSizes,
    fallback_label,
    region_mask,
    region_phrase,
    sample_region,
)

SIZES = RegionSizes()
RANK = {"zero": 0, "partial": 1, "all": 2}


def _cells(region_type: str, params: dict, rows: int, cols: int) -> set[tuple[int, int]]:
    """Independent reading of v0.1 region_params as a cell set."""
    if region_type == "GLOBAL":
        return {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)}
    if region_type == "EXCLUSION":
        return _cells("GLOBAL", {}, rows, cols) - _cells(
            params["exclude_type"], params["exclude_params"], rows, cols
        )
    r1, r2 = params.get("r1", 1), params.get("r2", rows)
    c1, c2 = params.get("c1", 1), params.get("c2", cols)
    return {(r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)}


def _case(cells: set, targets: set) -> str:
    inside = len(cells & targets)
    return "zero" if inside == 0 else "all" if inside == len(targets) else "partial"


def _all_boxes(region_type: str, rows: int, cols: int):
    """Brute-force list of every allowed box of a numeric kind (sizes from facts section 3)."""
    out = []
    if region_type == "ROW_RANGE":
        for h in range(1, min(4, rows // 2) + 1):
            out += [{"r1": r, "r2": r + h - 1} for r in range(1, rows - h + 2)]
    elif region_type == "COL_RANGE":
        for w in range(1, min(4, cols // 2) + 1):
            out += [{"c1": c, "c2": c + w - 1} for c in range(1, cols - w + 2)]
    else:
        for h in range(2, 7):
            for w in range(2, 7):
                out += [
                    {"r1": r, "r2": r + h - 1, "c1": c, "c2": c + w - 1}
                    for r in range(1, rows - h + 2)
                    for c in range(1, cols - w + 2)
                ]
    return out


def _check_size(region_type: str, params: dict, rows: int, cols: int) -> None:
    if region_type == "ROW_RANGE":
        assert 1 <= params["r2"] - params["r1"] + 1 <= min(4, rows // 2)
    elif region_type == "COL_RANGE":
        assert 1 <= params["c2"] - params["c1"] + 1 <= min(4, cols // 2)
    else:
        assert 2 <= params["r2"] - params["r1"] + 1 <= 6
        assert 2 <= params["c2"] - params["c1"] + 1 <= 6
    assert 1 <= params.get("r1", 1) <= params.get("r2", rows) <= rows
    assert 1 <= params.get("c1", 1) <= params.get("c2", cols) <= cols


@st.composite
def scenes(draw):
    rows = draw(st.integers(7, 18))
    cols = draw(st.integers(7, 18))
    n = draw(st.integers(1, 8))
    flat = draw(st.lists(st.integers(0, rows * cols - 1), min_size=n, max_size=n, unique=True))
    return rows, cols, [(i // cols + 1, i % cols + 1) for i in flat]


@settings(max_examples=250, deadline=None)
@given(
    scene=scenes(),
    kind=st.sampled_from(["ROW_RANGE", "COL_RANGE", "RECTANGLE", "VISUAL_REGION", "EXCLUSION"]),
    excluded=st.sampled_from(["ROW_RANGE", "COL_RANGE", "RECTANGLE"]),
    wanted=st.sampled_from(["zero", "partial", "all"]),
    seed=st.integers(0, 2**32),
)
def test_sampled_regions_are_labelled_truthfully(scene, kind, excluded, wanted, seed):
    rows, cols, targets = scene
    region = sample_region(kind, np.random.default_rng(seed), rows, cols, targets, wanted,
                           SIZES, exclude_type=excluded if kind == "EXCLUSION" else None)
    assert region.type == kind and region.wanted_case == wanted
    box_type = excluded if kind == "EXCLUSION" else ("RECTANGLE" if kind == "VISUAL_REGION" else kind)
    box_params = region.params["exclude_params"] if kind == "EXCLUSION" else region.params
    if kind == "EXCLUSION":
        assert region.params["exclude_type"] == excluded
    _check_size(box_type, box_params, rows, cols)

    cells = _cells(kind if kind != "VISUAL_REGION" else "RECTANGLE", region.params, rows, cols)
    assert {tuple(x + 1) for x in np.argwhere(region_mask(kind, region.params, rows, cols))} == cells
    got = _case(cells, set(targets))
    assert region.got_case == got
    assert region.case == fallback_label(got, wanted)
    if got != wanted:  # a fallback: no region of the wanted case exists; got is a nearest one
        feasible = set()
        for params in _all_boxes(box_type, rows, cols):
            if kind == "EXCLUSION":
                params = {"exclude_type": excluded, "exclude_params": params}
            feasible.add(_case(_cells(box_type if kind != "EXCLUSION" else kind, params, rows, cols),
                               set(targets)))
        assert wanted not in feasible
        assert abs(RANK[got] - RANK[wanted]) == min(abs(RANK[c] - RANK[wanted]) for c in feasible)
    again = sample_region(kind, np.random.default_rng(seed), rows, cols, targets, wanted, SIZES,
                          exclude_type=excluded if kind == "EXCLUSION" else None)
    assert again == region


def test_fallback_labels_seen_in_v0_1():
    # one exception: no row range can be partial
    region = sample_region("ROW_RANGE", np.random.default_rng(0), 8, 8, [(3, 3)], "partial")
    assert region.case in {"fallback_zero_wanted_partial", "fallback_all_wanted_partial"}
    # exceptions in opposite corners: no 6x6 rectangle holds both -> partial instead of all
    region = sample_region("RECTANGLE", np.random.default_rng(0), 18, 18, [(1, 1), (18, 18)], "all")
    assert region.case == "fallback_partial_wanted_all"
    # every cell of every row range holds an exception? then zero is impossible
    targets = [(r, 1) for r in range(1, 8)]
    region = sample_region("ROW_RANGE", np.random.default_rng(0), 7, 7, targets[:3] + targets[3:], "zero")
    assert region.case == "fallback_partial_wanted_zero"


def test_phrases():
    assert region_phrase("GLOBAL", {}) == "in the whole grid"
    assert region_phrase("ROW_RANGE", {"r1": 7, "r2": 7}) == "in row 7"
    assert region_phrase("ROW_RANGE", {"r1": 11, "r2": 12}) == "in rows 11 to 12"
    assert region_phrase("COL_RANGE", {"c1": 3, "c2": 3}) == "in column 3"
    assert region_phrase("COL_RANGE", {"c1": 7, "c2": 8}) == "in columns 7 to 8"
    rect = {"r1": 7, "r2": 10, "c1": 2, "c2": 7}
    assert region_phrase("RECTANGLE", rect) == "from row 7 column 2 to row 10 column 7"
    assert region_phrase("VISUAL_REGION", rect) == "inside the highlighted region"
    excl = {
        ("ROW_RANGE", (("r1", 4), ("r2", 4))): "row 4",
        ("ROW_RANGE", (("r1", 3), ("r2", 5))): "rows 3 to 5",
        ("COL_RANGE", (("c1", 2), ("c2", 2))): "column 2",
        ("COL_RANGE", (("c1", 2), ("c2", 3))): "columns 2 to 3",
        ("RECTANGLE", (("r1", 2), ("r2", 5), ("c1", 3), ("c2", 6))):
            "the cells from row 2 column 3 to row 5 column 6",
    }
    for (kind, params), text in excl.items():
        assert region_phrase("EXCLUSION", {"exclude_type": kind, "exclude_params": dict(params)}) == text


def test_registry_and_errors():
    assert set(REGION_KINDS.names()) == {
        "ROW_RANGE", "COL_RANGE", "RECTANGLE", "VISUAL_REGION", "GLOBAL", "EXCLUSION"
    }
    with pytest.raises(RegionError, match="outside"):
        region_mask("ROW_RANGE", {"r1": 5, "r2": 9}, 8, 8)
    with pytest.raises(RegionError, match="no RECTANGLE"):
        sample_region("RECTANGLE", np.random.default_rng(0), 1, 9, [(1, 1)], "zero")
    with pytest.raises(RegionError, match="cannot exclude"):
        sample_region("EXCLUSION", np.random.default_rng(0), 9, 9, [(1, 1)], "zero",
                      exclude_type="VISUAL_REGION")
    with pytest.raises(RegionError, match="unknown region case"):
        sample_region("RECTANGLE", np.random.default_rng(0), 9, 9, [(1, 1)], "some")


# -- the vectorised enumeration and the lazy case codes equal the straightforward ones ----------


def _enumerated(kind, rows: int, cols: int, sizes: RegionSizes) -> tuple[np.ndarray, np.ndarray]:
    """Every box class by class, one meshgrid of top-left corners each."""
    parts, groups = [], []
    for g, (h, w) in enumerate(kind.size_classes(rows, cols, sizes)):
        r1, c1 = np.meshgrid(np.arange(1, rows - h + 2), np.arange(1, cols - w + 2), indexing="ij")
        r1, c1 = r1.ravel(), c1.ravel()
        parts.append(np.stack([r1, r1 + h - 1, c1, c1 + w - 1], axis=1))
        groups.append(np.full(r1.size, g))
    return np.concatenate(parts), np.concatenate(groups)


@pytest.mark.parametrize("name", ["ROW_RANGE", "COL_RANGE", "RECTANGLE"])
def test_candidates_equal_a_meshgrid_per_size_class(name):
    kind = REGION_KINDS.get(name)
    for rows in range(2, 13):
        for cols in range(2, 13):
            for sizes in (SIZES, RegionSizes(1, 6, 1, 9)):
                if not kind.size_classes(rows, cols, sizes):
                    continue
                boxes, group = _enumerated(kind, rows, cols, sizes)
                cand = kind.candidates(rows, cols, sizes)
                assert cand.boxes.dtype == boxes.dtype and np.array_equal(cand.boxes, boxes)
                assert np.array_equal(cand.group, group)
                assert np.array_equal(cand.starts, np.searchsorted(group, np.arange(cand.n_groups)))
                assert np.array_equal(cand.counts, np.bincount(group))


def _sampled_box(kind, rng, rows, cols, targets, wanted_rank, sizes, complement):
    """Every candidate's case first, then the bounded draws, then the nearest-case fallback."""
    boxes, group = _enumerated(kind, rows, cols, sizes)
    n_groups = int(group.max()) + 1
    inside = np.array([targets[r1 - 1:r2, c1 - 1:c2].sum() for r1, r2, c1, c2 in boxes])
    total = int(targets.sum())
    if complement:
        inside = total - inside
    codes = np.where(inside == 0, 0, np.where(inside == total, 2, 1))
    group_draw = rng.integers(0, n_groups, size=sizes.attempts)
    pos_draw = rng.random(sizes.attempts)
    fallback_draw = rng.random()
    starts, counts = np.searchsorted(group, np.arange(n_groups)), np.bincount(group)
    picks = starts[group_draw] + (pos_draw * counts[group_draw]).astype(int)
    for idx in picks:
        if codes[idx] == wanted_rank:
            return boxes[idx], int(codes[idx])
    distance = np.abs(codes - wanted_rank)
    pool = np.flatnonzero(distance == distance.min())
    idx = pool[min(int(fallback_draw * pool.size), pool.size - 1)]
    return boxes[idx], int(codes[idx])


def test_sampled_boxes_equal_the_all_candidates_reference():
    from rose_gen.scene.regions import _sample_box

    rng = np.random.default_rng(11)
    for trial in range(300):
        rows, cols = (int(v) for v in rng.integers(3, 12, size=2))
        targets = rng.random((rows, cols)) < rng.choice([0.02, 0.1, 0.4])
        kind = REGION_KINDS.get(str(rng.choice(["ROW_RANGE", "COL_RANGE", "RECTANGLE"])))
        sizes = RegionSizes(attempts=int(rng.choice([1, 3, 24])))
        if not kind.size_classes(rows, cols, sizes):
            continue
        wanted, complement = int(rng.integers(0, 3)), bool(rng.integers(0, 2))
        want = _sampled_box(kind, np.random.default_rng(trial), rows, cols, targets, wanted, sizes, complement)
        got = _sample_box(kind, np.random.default_rng(trial), rows, cols, targets, wanted, sizes, complement)
        assert np.array_equal(got[0], want[0]) and got[1] == want[1], (trial, kind.name, rows, cols)
