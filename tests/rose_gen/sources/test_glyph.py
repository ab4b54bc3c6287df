"""ROSE-ChineseGlyph source: pool, orientation, tiles, verification (real fonts, no mocks)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from assets_manifest import load_manifest
from rose_gen.assets.fonts import (
    all_manifest_faces,
    face_from_entry,
    manifest_faces,
    render_glyph_tile,
)
from rose_gen.release.config import load_config
from rose_gen.release.pipeline import generate_release
from rose_gen.render.compose import RenderSettings, render_scene
from rose_gen.scene.plan import pairs_reused, plan_subset
from rose_gen.scene.v0_1_plans import MINI_PLANS, V0_1_PLANS
from rose_gen.sources import SOURCES
from rose_gen.sources.base import AssetError, VisualSource
from rose_gen.sources.glyph import SOURCE, build_pool, describe_pool, verify_pair
from tests.reference import v01_rows

PIP = {"font_pool": "pip"}



@pytest.fixture(scope="module")
def pool():
    return SOURCE.pool({})


def test_registered_with_the_v0_1_subset_identity():
    src = SOURCES.get("glyph")
    assert isinstance(src, VisualSource)
    info = src.info
    assert (info.subset, info.id_prefix, info.primitive_type, info.item_seed_base, info.layout_family) == (
        "ROSE-ChineseGlyph", "CH", "CHINESE_GLYPH", 202600000000, "glyph_emoji")


def test_pool_has_at_least_600_distinct_pairs_in_a_deterministic_order(pool):
    assert len(pool) >= 600
    assert len({p.pair_key for p in pool}) == len(pool)
    again = SOURCE.pool({})
    assert [(p.pair_key, p.row_fields["font_name"]) for p in again] == \
        [(p.pair_key, p.row_fields["font_name"]) for p in pool]
    assert [p.pair_key for p in pool] == [r["pair_key"] for r in load_manifest("glyph_pairs")["pairs"]][:len(pool)]
    summary = describe_pool(pool)
    assert set(summary["per_tier"]) == {"high", "medium", "low"}
    assert len(summary["per_face"]) == len(manifest_faces()) and not summary["reduced"]


def test_every_pool_entry_uses_a_face_where_the_pair_was_verified(pool):
    verified = {r["pair_key"]: r["faces"] for r in load_manifest("glyph_pairs")["pairs"]}
    for p in pool:
        assert p.row_fields["font_name"] in verified[p.pair_key]
        assert p.similarity is not None and 0 < p.similarity <= 1


def test_a_sample_of_the_recorded_verification_still_holds(pool):
    recorded = {r["pair_key"]: r["faces"] for r in load_manifest("glyph_pairs")["pairs"]}
    for p in pool[::41]:
        face = face_from_entry(p.render["face"])
        check = verify_pair(face, p.majority, p.target)
        assert check.ok, (p.pair_key, face.name, check.reason)
        assert [check.changed_fraction, check.ssim] == pytest.approx(recorded[p.pair_key][face.name], abs=1e-4)


def test_row_fields_follow_v0_1_and_orientation_uses_both_directions(pool):
    directions = set()
    for seed in range(40):
        pair = SOURCE.orient(pool[0], np.random.default_rng(seed))
        f = pair.row_fields
        assert f["background_char"] == pair.majority and f["target_char"] == pair.target
        assert f["pair_direction"] == f"{pair.majority}_majority_{pair.target}_target"
        assert f["pair_key"] == f["undirected_pair_key"] == "__".join(sorted((pair.majority, pair.target)))
        assert pair.pair_key == pool[0].pair_key
        directions.add(pair.majority)
    assert len(directions) == 2
    a = SOURCE.orient(pool[3], np.random.default_rng(7))
    assert a == SOURCE.orient(pool[3], np.random.default_rng(7))


def test_row_fields_have_the_v0_1_glyph_field_names(pool):
    names = {"background_char", "target_char", "source_pair", "source_group", "pair_direction",
             "undirected_pair_key", "pair_key", "font_name", "similarity_level"}
    row = next(r for r in v01_rows() if "background_char" in r)
    assert names <= set(row)
    ours = SOURCE.orient(pool[0], np.random.default_rng(0)).row_fields
    assert set(ours) == names
    for k in names:
        assert type(ours[k]) is type(row[k]), k


def test_tiles_have_exact_size_ink_and_differ_between_roles(pool):
    for p in pool[::97]:
        for size in (42, 90, 156):
            tiles = [np.asarray(SOURCE.render_tile(p, role, size)) for role in ("majority", "target")]
            for t in tiles:
                assert t.shape == (size, size, 3)
                assert (t < 128).any() and (t[0, :] == 255).all() and (t[-1, :] == 255).all()
            assert (tiles[0] != tiles[1]).any()
    with pytest.raises(ValueError):
        SOURCE.render_tile(pool[0], "background", 42)


def test_a_pair_below_the_visibility_threshold_is_rejected():
    face = manifest_faces()[3]
    same = verify_pair(face, "土", "土")
    assert not same.ok and same.reason == "below visibility threshold" and same.changed_fraction == 0
    assert verify_pair(face, "土", "士").ok
    assert not verify_pair(face, "土", "士", visibility={"min_changed_fraction": 0.9}).ok
    fonts = {"faces": [face.to_json()], "licences": {}}
    pairs = {"provenance": {}, "pairs": [
        {"pair_key": "土__土", "chars": ["土", "土"], "score": 1.0, "tier": "high",
         "faces": {face.name: [0.5, 0.5]}},  # a wrong record: re-verification must catch it
        {"pair_key": "土__士", "chars": ["土", "士"], "score": 0.95, "tier": "high",
         "faces": {face.name: [0.08, 0.88]}},
    ]}
    assert [p.pair_key for p in build_pool(fonts, pairs, {"reverify": True})] == ["土__士"]


def test_recorded_measurements_below_stricter_thresholds_are_rejected(pool):
    strict = SOURCE.pool({"visibility": {"min_changed_fraction": 0.25, "max_ssim": 0.93}})
    assert 0 < len(strict) < len(pool)
    recorded = {r["pair_key"]: r["faces"] for r in load_manifest("glyph_pairs")["pairs"]}
    for p in strict:
        changed, ssim = recorded[p.pair_key][p.row_fields["font_name"]]
        assert changed >= 0.25 and ssim <= 0.93


def test_options_restrict_faces_and_tiers_and_reject_unknown_names(pool):
    few = SOURCE.pool({"faces": ["UKaiCN", "NotoSansCJKsc-Bold"], "tiers": ["high"]})
    assert few and {p.row_fields["font_name"] for p in few} == {"UKaiCN", "NotoSansCJKsc-Bold"}
    assert {p.row_fields["similarity_level"] for p in few} == {"high"}
    assert describe_pool(few, {"tiers": ["high"]})["reduced"]
    with pytest.raises(AssetError, match="unknown faces"):
        SOURCE.pool({"faces": ["Comic Sans"]})
    with pytest.raises(AssetError, match="unknown option"):
        SOURCE.pool({"font": "UKaiCN"})


def test_asset_versions_record_every_face_file_of_every_pool_and_the_manifests():
    versions = SOURCE.asset_versions()
    faces = all_manifest_faces()
    files = {f"{f.package}:{f.file}#{f.face_index}" for f in faces}
    assert len(files) == len(manifest_faces()) + 1  # the five pip faces share one variable-font file
    assert set(versions) == files | {f"assets_manifest:{n}.json" for n in ("fonts", "glyph_pairs", "glyph_pairs_pip")}
    for f in faces:
        assert versions[f"{f.package}:{f.file}#{f.face_index}"] == f.sha256


def test_a_v0_1_sized_glyph_subset_never_reuses_a_pair_and_mini_scenes_render(pool):
    scenes = plan_subset(V0_1_PLANS["ROSE-ChineseGlyph"], 2026, SOURCE, pool=pool)
    assert len(scenes) == 412 and pairs_reused(scenes) == 0
    assert len({s.pair.pair_key for s in scenes}) == 412
    assert len({s.pair.majority == min(s.pair.majority, s.pair.target) for s in scenes}) == 2
    assert len({s.pair.row_fields["font_name"] for s in scenes}) >= 20
    for scene in plan_subset(MINI_PLANS["ROSE-ChineseGlyph"], 7, SOURCE, pool=pool)[:3]:
        image = np.asarray(Image.open(io.BytesIO(render_scene(scene, SOURCE, RenderSettings()).base_png)))
        c = scene.cell_size
        target = np.asarray(SOURCE.render_tile(scene.pair, "target", c))
        majority = np.asarray(SOURCE.render_tile(scene.pair, "majority", c))
        targets = {tuple(rc) for rc in scene.target_cells}
        for r in range(1, scene.rows + 1):
            for col in range(1, scene.cols + 1):
                cell = image[(r - 1) * c:r * c, (col - 1) * c:col * c]
                assert (cell == (target if (r, col) in targets else majority)).all()


@pytest.fixture(scope="module")
def pip_pool():
    return SOURCE.pool(PIP)


def test_pip_pool_has_at_least_600_pairs_drawn_only_in_pip_faces(pip_pool):
    pip_faces = {f.name for f in manifest_faces(pool="pip")}
    assert len(pip_pool) >= 600 and len({p.pair_key for p in pip_pool}) == len(pip_pool)
    assert {p.row_fields["font_name"] for p in pip_pool} == pip_faces
    assert {p.render["font_pool"] for p in pip_pool} == {"pip"}
    summary = describe_pool(pip_pool, PIP)
    assert summary["font_pool"] == "pip" and set(summary["per_face"]) == pip_faces
    assert set(summary["per_tier"]) == {"high", "medium", "low"}
    recorded = load_manifest("glyph_pairs_pip")["pairs"]
    for p in pip_pool:
        assert p.row_fields["font_name"] in recorded[p.pair_key]["faces"]


def test_pip_pool_tiles_are_verified_and_drawn_at_the_face_weight(pip_pool):
    recorded = load_manifest("glyph_pairs_pip")["pairs"]
    debian = {f.name: f for f in manifest_faces()}
    for p in pip_pool[::53]:
        face = face_from_entry(p.render["face"])
        check = verify_pair(face, p.majority, p.target)
        assert check.ok, (p.pair_key, face.name, check.reason)
        assert [check.changed_fraction, check.ssim] == pytest.approx(recorded[p.pair_key]["faces"][face.name], abs=1e-4)
        tile = np.asarray(SOURCE.render_tile(p, "majority", 64).convert("L"), dtype=np.float64)
        twin = render_glyph_tile(debian[f"NotoSansCJKsc-{face.style}"], p.majority, 64)
        ink, twin_ink = (255 - tile).sum(), (255 - np.asarray(twin.convert("L"), dtype=np.float64)).sum()
        assert abs(ink / twin_ink - 1) <= 0.15, (p.pair_key, face.name, ink / twin_ink)


def test_pip_pool_without_its_verification_record_is_reverified_to_the_same_pool(pip_pool):
    options = {**PIP, "tiers": ["high"]}
    fresh = build_pool(load_manifest("fonts"), load_manifest("glyph_pairs"), options, None)
    recorded = SOURCE.pool(options)
    assert len(recorded) == sum(p.render["tier"] == "high" for p in pip_pool)
    assert [(p.pair_key, p.row_fields["font_name"]) for p in fresh] == \
        [(p.pair_key, p.row_fields["font_name"]) for p in recorded]


def test_font_pool_option_is_validated_and_faces_are_checked_within_the_pool():
    with pytest.raises(AssetError, match="unknown font_pool 'apt'; known: debian, pip"):
        SOURCE.pool({"font_pool": "apt"})
    with pytest.raises(AssetError, match="unknown faces"):
        SOURCE.pool({**PIP, "faces": ["UKaiCN"]})


def test_mini_release_made_with_the_pip_pool_records_the_choice(tmp_path):
    config = load_config([f"output_dir={tmp_path / 'rel'}", "progress=false", "subsets=[glyph]",
                          "+subset.glyph.source_options.font_pool=pip"])
    release = generate_release(config).path
    summary = json.loads((release / "export_summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["subset"]["glyph"]["source_options"] == {"font_pool": "pip"}
    assert "manimgx-fonts-cjk:manimgx_fonts_cjk/NotoSansCJK-VF.otf.ttc#2" in summary["assets"]["glyph"]
    rows = [json.loads(line) for name in ("metadata_dev.jsonl", "metadata_test.jsonl")
            for line in (release / name).read_text(encoding="utf-8").splitlines()]
    names = {r["font_name"] for r in rows if "font_name" in r}
    assert names and names <= {f.name for f in manifest_faces(pool="pip")}
    assert "manimgx-fonts-cjk" in (release / "LICENSES.md").read_text(encoding="utf-8")


def test_default_release_records_and_credits_only_the_debian_pool(tmp_path):
    config = load_config([f"output_dir={tmp_path / 'rel'}", "progress=false", "subsets=[glyph]"])
    release = generate_release(config).path
    summary = json.loads((release / "export_summary.json").read_text(encoding="utf-8"))
    recorded = summary["assets"]["glyph"]
    debian = {f"{f.package}:{f.file}#{f.face_index}" for f in manifest_faces(pool="debian")}
    assert debian <= set(recorded)
    assert not any(key.startswith("manimgx-fonts-cjk:") for key in recorded)
    assert "assets_manifest:glyph_pairs_pip.json" not in recorded
    licences = (release / "LICENSES.md").read_text(encoding="utf-8")
    assert "fonts-noto-cjk" in licences and "manimgx-fonts-cjk" not in licences


def test_pip_pool_with_the_package_absent_stops_with_one_line_naming_pip_install(tmp_path):
    (tmp_path / "manimgx_fonts_cjk.py").write_text("")  # shadows the installed package: no font inside
    done = subprocess.run(
        [sys.executable, "-m", "rose_gen.cli.gen", f"output_dir={tmp_path / 'rel'}", "progress=false", "subsets=[glyph]",
         "+subset.glyph.source_options.font_pool=pip"],
        capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        cwd=Path(__file__).resolve().parents[3], check=False)
    assert done.returncode != 0 and not (tmp_path / "rel").exists()
    err = done.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert "pip install manimgx-fonts-cjk" in err and "NotoSansCJKsc-VF" in err
