"""rose-replay on a release this generator made: its own rows re-derive field for field (our
difficulty rule included, since the rows publish its inputs), every asset is found exactly,
and the replayed images are byte-identical to the release's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose_gen.check.replay import (
    REPLAY_FIELDS,
    InputRow,
    ReplayOptions,
    input_files,
    read_rows,
    replay_rows,
    summarize,
)


@pytest.fixture(scope="module")
def release(mini_profile_release) -> Path:
    return mini_profile_release  # profile=mini, 2 scenes per subset (1 dev)


@pytest.fixture(scope="module")
def items(release) -> list[InputRow]:
    return read_rows(input_files(release), release)


@pytest.fixture(scope="module")
def replayed(items):
    return replay_rows(items, ReplayOptions())


def test_our_rows_re_derive_field_for_field(items, replayed):
    assert len(items) == 10 * 7  # five main rows and two bridge rows per scene
    derived = {r["item_id"]: r for o in replayed for r in o.rows}
    for item in items:
        ours = {k: v for k, v in derived[item.row["item_id"]].items() if k not in REPLAY_FIELDS}
        assert ours == item.row, item.where
    report = summarize(replayed)
    assert report["inconsistencies"] == []
    assert report["difficulty_agreement"]["rate"] == 1.0 and report["difficulty_agreement"]["rows"] == 10 * 6


def test_every_asset_is_found_exactly_and_the_images_are_identical(release, replayed):
    report = summarize(replayed)
    assert report["scene_kinds"]["total"] == {"exact": 10, "same_design": 0, "stand_in": 0}
    assert report["scenes_rendered"] == 10
    for o in replayed:
        assert len(o.images) == 2, o.scene.scene_id  # base and cue (the T4 row names the rectangle)
        for path, data in o.images.items():
            assert (release / path).read_bytes() == data, path


def test_a_changed_difficulty_is_an_inconsistency_when_the_rule_is_published(items):
    item = next(i for i in items if i.row["task_template"] == "T3_CLICK_LOCAL_NUMERIC")
    flipped = {"medium": "hard", "hard": "medium"}[item.row["difficulty"]]
    row = {**item.row, "difficulty": flipped}
    scene = [InputRow(row, item.file, item.line) if i is item else i for i in items
             if i.row["scene_id"] == item.row["scene_id"] and i.row["rose_subset"] == item.row["rose_subset"]]
    report = summarize(replay_rows(scene, ReplayOptions(render=False)))
    assert [(i["item_id"], i["field"]) for i in report["inconsistencies"]] == [(row["item_id"], "difficulty")]


def test_cli_replays_a_generated_release(release, tmp_path, capsys):
    from rose_gen.cli import replay as replay_cli

    out = tmp_path / "replayed"
    assert replay_cli.main([str(release), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "inconsistencies in the released rows: 0 (none)" in printed and "scenes rendered: 10" in printed
    rows = [json.loads(x) for x in (out / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["replay_image_status"] == "rendered" for r in rows)
