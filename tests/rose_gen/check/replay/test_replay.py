"""rose-replay on the 1,112 real v0.1 rows: every row re-derives field for field (the one finding
is the v0.1 defect CHSCENE_000167), every scene has an installed face, images have v0.1's size
and visible exceptions where the metadata says; the CLI writes a release or a report; bad input
is one line."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from assets_manifest import load_manifest
from rose_gen.assets.fonts import check_glyph
from rose_gen.check.replay import (
    REPLAY_FIELDS,
    InputRow,
    ReplayOptions,
    input_files,
    odd_cells,
    read_rows,
    replay_rows,
    summarize,
)
from rose_gen.check.replay.assets import font_candidates
from rose_gen.cli import replay as replay_cli
from tests.reference import v01_rows_path

REFERENCE = v01_rows_path()
SAMPLE_PER_SUBSET = 12


@pytest.fixture(scope="module")
def reference_items() -> list[InputRow]:
    return read_rows(input_files(REFERENCE))


def _sample_ids(items: list[InputRow]) -> frozenset[str]:
    """SAMPLE_PER_SUBSET scene ids per subset, spread over each subset's scenes."""
    by_subset: dict[str, list[str]] = {}
    for item in items:
        ids = by_subset.setdefault(item.row["rose_subset"], [])
        if item.row["scene_id"] not in ids:
            ids.append(item.row["scene_id"])
    out = set()
    for ids in by_subset.values():
        picks = np.linspace(0, len(ids) - 1, SAMPLE_PER_SUBSET).round().astype(int)
        out.update(ids[i] for i in picks)
    return frozenset(out)


@pytest.fixture(scope="module")
def replayed(reference_items):
    options = ReplayOptions(render_only=_sample_ids(reference_items))
    return replay_rows(reference_items, options)


def test_every_reference_row_reproduced_field_for_field(reference_items, replayed):
    assert len(reference_items) == 1112
    derived = {r["item_id"]: r for o in replayed for r in o.rows}
    assert len(derived) == 1112
    for item in reference_items:
        ours = {k: v for k, v in derived[item.row["item_id"]].items() if k not in REPLAY_FIELDS}
        assert ours == item.row, item.where
    report = summarize(replayed)
    assert sum(report["scene_kinds"]["total"].values()) == 1112
    # The only finding: v0.1 pairs 兀 U+5140 with its compatibility ideograph U+FA0C.
    (defect,) = report["inconsistencies"]
    assert (defect["scene_id"], defect["field"], defect["kind"]) == ("CHSCENE_000167", "target_char", "defect")
    assert "NFC" in defect["why"] and "U+FA0C" in defect["why"] and "same glyph" in defect["why"]


def test_every_scene_records_its_substitutions(replayed):
    for o in replayed:
        subs = o.rows[0]["replay_substitutions"]
        assert subs, o.scene.scene_id
        assert all(s["kind"] in ("exact", "same_design", "stand_in") and s["asked"] and s["used"] and s["why"]
                   for s in subs)
    glyph = {o.rows[0]["font_name"]: o.rows[0]["replay_substitutions"][0] for o in replayed
             if o.scene.subset == "ROSE-ChineseGlyph"}
    assert glyph["SourceHanSansCN-Normal"]["used"] == "NotoSansCJKsc-DemiLight"
    assert glyph["SourceHanSansCN-Normal"]["kind"] == "same_design"
    assert glyph["文泉驿正黑"]["kind"] == "exact"
    assert glyph["GenRyuMinTW-Heavy"]["used"] == "NotoSerifCJKsc-Black"  # same class, lineage and weight
    assert glyph["msjhl"]["used"] == "NotoSansCJKsc-Light"


def test_manifest_describes_every_v01_font_name(reference_items):
    names = {i.row["font_name"] for i in reference_items if "font_name" in i.row}
    manifest = load_manifest("replay_v0_1")
    assert len(names) == 48
    assert names <= set(manifest["fonts"])
    for entry in manifest["fonts"].values():
        assert entry["class"] in manifest["class_order"] and 100 <= entry["weight"] <= 900
        assert entry["script_form"] in ("mainland", "taiwan")


def test_every_reference_scene_has_a_face_that_draws_it(replayed):
    """The five scenes the old per-font mapping could not draw (昹, ⺮, 㺭, 㔭, 䯂) get the nearest
    face that draws every character of the scene; the face skipped and why are recorded."""
    report = summarize(replayed)
    assert report["not_rendered"] == []
    by_id = {o.scene.scene_id: o for o in replayed}
    for scene_id in ("CHSCENE_000056", "CHSCENE_000083", "CHSCENE_000236", "CHSCENE_000239", "CHSCENE_000296"):
        (sub,) = by_id[scene_id].substitutions
        assert sub.kind == "stand_in" and "skipped" in sub.why and "cannot draw" in sub.why, sub.why
        fields = by_id[scene_id].scene.pair.row_fields
        face = next(c.face for c in font_candidates() if c.face.name == sub.used)
        for c in fields["background_char"] + fields["target_char"]:
            assert check_glyph(face, c, by_id[scene_id].scene.cell_size).ok


def test_a_scene_no_installed_face_can_draw_is_named_not_rendered(reference_items):
    row = dict(next(i for i in reference_items if i.row["rose_subset"] == "ROSE-ChineseGlyph").row)
    row["target_char"] = "\U0010fffd"  # private use: no face maps it
    (outcome,) = replay_rows([InputRow(row, "rows.jsonl", 1)], ReplayOptions())
    assert not outcome.images and outcome.status.startswith("not_rendered: cannot draw")
    assert "no installed face draws" in outcome.status and "NotoSansCJKsc-Regular" in outcome.status
    report = summarize([outcome])
    assert [r["scene_id"] for r in report["not_rendered"]] == [row["scene_id"]]


def test_sample_images_have_v01_size_and_visible_exceptions_where_the_metadata_says(replayed):
    rendered = [o for o in replayed if o.images]
    assert len(rendered) == 5 * SAMPLE_PER_SUBSET
    report = summarize(replayed)
    for o in rendered:
        (data,) = o.images.values()
        assert o.rows[0]["replay_image_status"].startswith("rendered")
        image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert image.shape[:2] == (o.scene.rows * o.scene.cell_size, o.scene.cols * o.scene.cell_size)
        if o.visible is False:  # reported, not hidden
            assert o.scene.scene_id in {r["scene_id"] for r in report["invisible_exceptions"]}
            continue
        found = odd_cells(image, o.scene.rows, o.scene.cols, o.scene.cell_size)
        assert sorted(found) == sorted([list(c) for c in o.scene.target_cells]), o.scene.scene_id


def test_an_altered_answer_is_reported_as_an_inconsistency(reference_items):
    items = [i for i in reference_items if i.row["rose_subset"] == "ROSE-EmojiContent"][:3]
    row = copy.deepcopy(dict(items[1].row))
    row["answer"] = row["ground_truth_formal_answer"] = f"COUNT({row['ground_truth_count'] + 1})"
    altered = [items[0], InputRow(row, items[1].file, items[1].line), items[2]]
    report = summarize(replay_rows(altered, ReplayOptions(render=False)))
    found = {(i["item_id"], i["field"]) for i in report["inconsistencies"]}
    assert found == {(row["item_id"], "answer"), (row["item_id"], "ground_truth_formal_answer")}
    assert all(i["where"] == items[1].where for i in report["inconsistencies"])


def test_cli_release_and_image_audit(reference_items, tmp_path, capsys):
    folder = tmp_path / "v01"
    bridge = folder / "analysis" / "data" / "matched_local_count" / "metadata_test.jsonl"
    bridge.parent.mkdir(parents=True)
    picked = [i.row for i in reference_items if i.row["rose_subset"] in ("ROSE-ChineseGlyph", "ROSE-EmojiStyle")][:4]
    bridge.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked), encoding="utf-8")
    out = tmp_path / "out"
    assert replay_cli.main([str(folder), str(out)]) == 0
    rows = [json.loads(line) for line in
            (out / "analysis" / "matched_local_count" / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in picked]
    report = json.loads((out / "replay_report.json").read_text(encoding="utf-8"))
    assert report["inconsistencies"] == [] and report["scenes"] == 4
    assert all((out / r["image"]).is_file() for r in rows)

    audit = tmp_path / "audit.json"
    assert replay_cli.main([str(folder), "--compare_images", str(out), "--audit_out", str(audit)]) == 0
    assert {r["status"] for r in json.loads(audit.read_text())} == {"match"}
    # Paint a majority cell with the exception's tile: the audit names that cell.
    first = rows[0]
    path = out / first["image"]
    image = np.asarray(Image.open(path).convert("RGB")).copy()
    cell = first["cell_size"]
    (tr, tc) = first["target_cells"][0]
    free = next((r, c) for r in range(1, first["rows"] + 1) for c in range(1, first["cols"] + 1)
                if [r, c] not in first["target_cells"])
    image[(free[0] - 1) * cell:free[0] * cell, (free[1] - 1) * cell:free[1] * cell] = \
        image[(tr - 1) * cell:tr * cell, (tc - 1) * cell:tc * cell]
    Image.fromarray(image).save(path)
    capsys.readouterr()
    assert replay_cli.main([str(folder), "--compare_images", str(out), "--audit_out", str(audit)]) == 0
    doctored = next(r for r in json.loads(audit.read_text()) if r["scene_id"] == first["scene_id"])
    assert doctored["status"] == "mismatch" and doctored["extra"] == [list(free)]
    assert "mismatch 1" in capsys.readouterr().out


def test_cli_report_only_draws_nothing_and_writes_the_report(reference_items, tmp_path, capsys):
    src = tmp_path / "rows.jsonl"
    picked = [i.row for i in reference_items if i.row["scene_id"] in ("CHSCENE_000167", "ECONSCENE_000001")]
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked), encoding="utf-8")
    out = tmp_path / "report.json"
    assert replay_cli.main([str(src), "--report_only", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["scenes"] == 2 and report["scenes_rendered"] == 0 and report["not_rendered"] == []
    assert report["inconsistencies_by_field"] == {"target_char (defect)": 1}
    printed = capsys.readouterr().out
    assert "inconsistencies in the released rows: 1 (target_char (defect) 1)" in printed
    assert set(tmp_path.iterdir()) == {src, out}  # no release, no images, no temporary left


def test_missing_input_is_one_line(tmp_path, capsys):
    assert replay_cli.main([str(tmp_path / "nope.jsonl"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rose-replay: error:") and "\n" not in err and "nope.jsonl" in err
    assert not (tmp_path / "out").exists()


def test_bad_json_line_is_one_line_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "metadata_test.jsonl"
    bad.write_text('{"item_id": "x"}\n{not json\n', encoding="utf-8")
    assert replay_cli.main([str(tmp_path), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "metadata_test.jsonl:2" in err


def test_row_without_scene_fields_is_one_line(tmp_path, capsys):
    bad = tmp_path / "rows.jsonl"
    bad.write_text(json.dumps({"item_id": "CHITEM_000001", "scene_id": "CHSCENE_000001",
                               "rose_subset": "ROSE-ChineseGlyph"}) + "\n", encoding="utf-8")
    assert replay_cli.main([str(bad), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rows.jsonl:1" in err and "rows" in err


def _main_rows_for(item: InputRow) -> list[dict]:
    """v0.1-format T1..T5 and bridge rows for a reference scene, made by our templates with
    T2/T4/T5 regions chosen here (v0.1 publishes no main rows to read)."""
    from dataclasses import replace

    from rose_gen.check.replay import rebuild_scene
    from rose_gen.core.schema import RegionSpec, base_image_record, cue_image_record
    from rose_gen.scene.regions import case_of, region_mask, target_mask
    from rose_gen.tasks.templates import build_scene_rows

    scene = rebuild_scene([item]).scene
    targets = target_mask(scene.rows, scene.cols, scene.target_cells)

    def region(rtype: str, params: dict) -> RegionSpec:
        inside = region_mask(rtype, params, scene.rows, scene.cols)
        case = case_of(int((targets & inside).sum()), int(targets.sum()))
        return RegionSpec(rtype, params, case, case)

    regions = {
        **scene.regions,
        "T2_COUNT_LOCAL_NUMERIC": region("ROW_RANGE", {"r1": 1, "r2": 2}),
        "T4_CLICK_VISUAL_REGION": region("VISUAL_REGION", {"r1": 2, "r2": 4, "c1": 2, "c2": 5}),
        "T5_CLICK_COUNT_EXCLUSION": region("EXCLUSION", {"exclude_type": "COL_RANGE",
                                                         "exclude_params": {"c1": 1, "c2": 2}}),
    }
    difficulty = dict.fromkeys(("T1_COUNT_GLOBAL", "T2_COUNT_LOCAL_NUMERIC", "T3_CLICK_LOCAL_NUMERIC",
                                "T4_CLICK_VISUAL_REGION", "T5_CLICK_COUNT_EXCLUSION"), "medium")
    scene = replace(scene, regions=regions, difficulty=difficulty, cue_type="OUTLINE_BOX")
    rows = build_scene_rows(scene, base_image_record(scene), cue_image_record(scene))
    out = rows.main + [r for rs in rows.bridges.values() for r in rs]
    for r in out:
        r.pop("difficulty_inputs")
    return out


def _write_v01_folder(folder: Path, rows: list[dict]) -> None:
    main = [r for r in rows if not r.get("bridge_task")]
    (folder).mkdir(parents=True)
    (folder / "metadata_test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in main),
                                                encoding="utf-8")
    for template, name in (("T1B_CLICK_GLOBAL", "global_click"), ("T2B_COUNT_LOCAL_MATCHED", "matched_local_count")):
        path = folder / "analysis" / "data" / name / "metadata_test.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["task_template"] == template),
                        encoding="utf-8")


def test_main_rows_and_cue_images_replay(reference_items, tmp_path):
    by_scene = {i.row["scene_id"]: i for i in reference_items}
    rows = _main_rows_for(by_scene["ECONSCENE_000001"]) + _main_rows_for(by_scene["CHSCENE_000056"])
    folder, out = tmp_path / "v01", tmp_path / "out"
    _write_v01_folder(folder, rows)
    assert replay_cli.main([str(folder), str(out)]) == 0
    report = json.loads((out / "replay_report.json").read_text(encoding="utf-8"))
    assert report["inconsistencies"] == [] and report["rows"] == 14
    # CHSCENE_000056 (simsun, 昹) is drawn by the nearest face that has 昹: nothing is withheld.
    assert report["withheld_main_rows"] == []
    main = [json.loads(line) for line in (out / "metadata_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["item_id"] for r in main] == [r["item_id"] for r in rows[7:12] + rows[:5]]  # subset order
    assert {r["replay_image_status"] for r in main} == {"rendered"}
    main = main[5:]  # the emoji scene
    t4 = main[3]
    assert t4["image"].endswith("ECONIMG_000002.png")
    base = np.asarray(Image.open(out / main[0]["image"]).convert("RGB")).astype(int)
    cue = np.asarray(Image.open(out / t4["image"]).convert("RGB")).astype(int)
    cell = t4["cell_size"]
    changed = np.abs(base - cue).max(axis=-1) > 0
    inside = np.zeros_like(changed)
    inside[1 * cell:4 * cell, 1 * cell:5 * cell] = True
    assert changed.any() and not (changed & ~inside).any()  # the outline stays in the rectangle
    assert not changed[1 * cell + 8:4 * cell - 8, 1 * cell + 8:5 * cell - 8].any()  # only along its edge


def test_replay_is_deterministic(reference_items, tmp_path):
    picked = [i.row for i in reference_items if i.row["rose_subset"] == "ROSE-PixelContent"][:2]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked), encoding="utf-8")
    assert replay_cli.main([str(src), str(tmp_path / "a")]) == 0
    assert replay_cli.main([str(src), str(tmp_path / "b")]) == 0
    a = (tmp_path / "a" / "export_summary.json").read_bytes()
    assert a == (tmp_path / "b" / "export_summary.json").read_bytes()


def test_pixel_assets_folder_supplies_the_original_file(reference_items, tmp_path):
    from rose_gen.assets.pixel import procedural as px_proc

    item = next(i for i in reference_items if i.row["rose_subset"] == "ROSE-PixelEdit")
    folder = tmp_path / "pixels"
    folder.mkdir()
    sprite = px_proc.procedural_family(7, 0)[0]
    Image.fromarray(sprite, mode="RGBA").save(folder / item.row["pair_key"])
    (outcome,) = replay_rows([item], ReplayOptions(pixel_assets=str(folder)))
    (sub,) = outcome.substitutions
    assert sub.asked == item.row["pair_key"] and str(folder) in sub.used and sub.kind == "same_design"
    assert outcome.visible and outcome.images
    (other,) = replay_rows([item], ReplayOptions(render=False))
    assert other.substitutions[0].kind == "stand_in"


def test_audit_of_a_missing_image_folder_is_one_line(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("", encoding="utf-8")
    assert replay_cli.main([str(rows), "--compare_images", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "none" in err


def test_non_integer_grid_is_one_line(reference_items, tmp_path, capsys):
    bad = tmp_path / "rows.jsonl"
    bad.write_text(json.dumps({**reference_items[0].row, "rows": "many"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert replay_cli.main([str(bad), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rows.jsonl:1" in err and "integers" in err


def test_unusable_region_is_one_line(reference_items, tmp_path, capsys):
    row = dict(reference_items[0].row)
    row["region_params"] = {"r1": 40, "r2": 41}
    bad = tmp_path / "rows.jsonl"
    bad.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert replay_cli.main([str(bad), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rows.jsonl:1" in err and not (tmp_path / "out").exists()
