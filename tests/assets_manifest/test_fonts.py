"""Fonts manifest and font verification (rose_gen.assets.fonts) against the installed Debian fonts."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from assets_manifest import load_manifest, sha256_file
from rose_gen.assets.fonts import (
    FontFace,
    all_manifest_faces,
    check_glyph,
    dedupe_faces,
    glyph_ink,
    licences,
    manifest_faces,
    render_glyph_tile,
    resolve_face,
)
from rose_gen.sources.base import AssetError
from rose_gen.sources.glyph import build_pool

RARE = "訚"  # kTGH level 2; absent from Smiley Sans and the two AR PL GB faces
COMMON = "未末己已土士人入"


def _face(name: str) -> FontFace:
    return next(f for f in manifest_faces() if f.name == name)


def test_manifest_lists_about_24_mainland_faces_with_checksums_that_match():
    faces = manifest_faces()
    assert 20 <= len(faces) <= 30
    assert len({f.name for f in faces}) == len(faces)
    assert {f.script_form for f in faces} == {"mainland"}
    assert sum(f.family == "Noto Sans CJK SC" for f in faces) == 7
    assert sum(f.family == "Noto Serif CJK SC" for f in faces) == 7
    assert all(f.face_index == 2 for f in faces if f.family.startswith("Noto"))
    for face in faces:
        assert resolve_face(face) == Path(face.file)


def test_manifest_records_why_faces_were_left_out():
    excluded = {e["name"]: e["reason"] for e in load_manifest("fonts")["excluded"]}
    assert "renders like LXGWWenKai-Regular" in excluded["LXGWWenKaiMono-Regular"]
    assert "taiwan" in excluded["TW-Kai-98_1"]


def test_common_characters_pass_every_glyph_check_in_every_face():
    for face in manifest_faces():
        for c in COMMON:
            check = check_glyph(face, c, 42)
            assert check.ok, (face.name, c, check.reason())


def test_missing_glyph_drawn_as_notdef_box_is_caught_by_cmap_and_rendering():
    # Smiley Sans draws a visible .notdef box: ink exists, only the checks catch it.
    check = check_glyph(_face("SmileySans-Oblique"), RARE, 42)
    assert check.has_ink
    assert not check.in_cmap
    assert not check.differs_from_notdef
    assert not check.ok and check.reason() == "not in cmap"


def test_missing_glyph_with_empty_notdef_is_caught():
    check = check_glyph(_face("GBZenKai-Medium"), RARE, 42)
    assert not check.in_cmap and not check.differs_from_notdef and not check.has_ink
    assert check_glyph(_face("NotoSansCJKsc-Regular"), RARE, 42).ok


def test_checksum_mismatch_is_refused(tmp_path):
    face = _face("SmileySans-Oblique")
    copy = tmp_path / "SmileySans-Oblique.ttf"
    shutil.copyfile(face.file, copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    tampered = dataclasses.replace(face, file=str(copy))
    with pytest.raises(AssetError, match="checksum mismatch"):
        resolve_face(tampered)
    fonts = {"faces": [tampered.to_json()], "licences": {}}
    with pytest.raises(AssetError, match="checksum mismatch"):
        build_pool(fonts, {"provenance": {}, "pairs": []})
    # The untouched copy passes.
    shutil.copyfile(face.file, copy)
    assert sha256_file(copy) == face.sha256 and resolve_face(tampered) == copy


def test_missing_font_file_names_the_file_and_the_debian_package(tmp_path):
    gone = dataclasses.replace(_face("UKaiCN"), file=str(tmp_path / "ukai.ttc"))
    with pytest.raises(AssetError) as err:
        resolve_face(gone)
    msg = str(err.value)
    assert "\n" not in msg and "ukai.ttc" in msg and "fonts-arphic-ukai" in msg


def test_mono_variant_is_a_rendering_duplicate_and_different_faces_are_not():
    kept = [_face("LXGWWenKai-Regular"), _face("LXGWWenKai-Bold")]
    mono = dataclasses.replace(kept[0], name="LXGWWenKaiMono-Regular",
                               file="/usr/share/fonts/truetype/lxgw-wenkai/LXGWWenKaiMono-Regular.ttf")
    assert dedupe_faces([*kept, mono], list(COMMON)) == {"LXGWWenKaiMono-Regular": "LXGWWenKai-Regular"}


def test_glyph_tile_has_exact_size_and_centred_ink():
    for size in (42, 64, 156):
        tile = render_glyph_tile(_face("NotoSerifCJKsc-Regular"), "未", size)
        assert tile.size == (size, size) and tile.mode == "RGB"
        grey = tile.convert("L")
        left, top, right, bottom = grey.point(lambda v: 255 if v < 128 else 0).getbbox()
        assert abs((left + right) - size) <= 2 and abs((top + bottom) - size) <= 2
        assert grey.getpixel((0, 0)) == 255


def test_licences_cover_every_face_package():
    recs = licences()
    packages = {f.package for f in all_manifest_faces()}
    assert {r["package"] for r in recs} == packages and "manimgx-fonts-cjk" in packages
    assert all(r["licence"] and r["copyright"] and r["faces"] and r["url"] and r["package_version"] for r in recs)


def _tiny_variable_font(path: Path) -> Path:
    """A two-glyph variable font: 一 is a bar that thickens with weight; .notdef is a box."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib.tables.TupleVariation import TupleVariation

    def rect(x0, y0, x1, y1):
        pen = TTGlyphPen(None)
        pen.moveTo((x0, y0))
        pen.lineTo((x0, y1))
        pen.lineTo((x1, y1))
        pen.lineTo((x1, y0))
        pen.closePath()
        return pen.glyph()

    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder([".notdef", "uni4E00"])
    fb.setupCharacterMap({0x4E00: "uni4E00"})
    fb.setupGlyf({".notdef": rect(100, 0, 500, 700), "uni4E00": rect(100, 400, 900, 450)})
    fb.setupHorizontalMetrics({".notdef": (600, 100), "uni4E00": (1000, 100)})
    fb.setupHorizontalHeader(ascent=880, descent=-120)
    fb.setupNameTable({"familyName": "TinyVar", "styleName": "Regular"})
    fb.setupOS2()
    fb.setupPost()
    fb.setupFvar(axes=[("wght", 100, 400, 900, "Weight")], instances=[])
    thicker = [(0, 0), (0, 250), (0, 250), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)]
    fb.setupGvar({"uni4E00": [TupleVariation({"wght": (0, 1.0, 1.0)}, thicker)], ".notdef": []})
    fb.save(str(path))
    return path


def test_variable_weight_is_applied_and_notdef_box_is_recognised(tmp_path):
    file = _tiny_variable_font(tmp_path / "tiny.ttf")
    face = FontFace(name="TinyVar", family="TinyVar", style="Regular", weight=400, script_form="mainland",
                    file=str(file), face_index=0, sha256=sha256_file(file), package="none", licence="none")
    thin = dataclasses.replace(face, variation_weight=100.0)
    black = dataclasses.replace(face, name="TinyVar-Black", variation_weight=900.0)
    assert glyph_ink(black, "一", 100).shape[0] > 3 * glyph_ink(thin, "一", 100).shape[0]
    assert check_glyph(black, "一", 64).ok
    missing = check_glyph(black, "丁", 64)  # drawn as the .notdef box: inked, but caught
    assert missing.has_ink and not missing.in_cmap and not missing.differs_from_notdef


def _ink(face: FontFace, chars: str, cell: int = 64) -> float:
    return float(sum((255 - np.asarray(render_glyph_tile(face, c, cell).convert("L"), dtype=np.float64)).sum()
                     for c in chars))


def test_pip_pool_faces_are_the_variable_noto_sans_sc_at_explicit_weights():
    faces = manifest_faces(pool="pip")
    assert [f.variation_weight for f in faces] == [300.0, 400.0, 500.0, 700.0, 900.0]
    assert {f.installer for f in faces} == {"pip"} and {f.package for f in faces} == {"manimgx-fonts-cjk"}
    assert {f.face_index for f in faces} == {2} and {f.family for f in faces} == {"Noto Sans CJK SC"}
    assert all(not f.file.startswith("/") for f in faces)  # package-relative: nothing host-specific recorded
    assert not {f.name for f in faces} & {f.name for f in manifest_faces()}  # font_name tells the pools apart
    assert {f.installer for f in manifest_faces()} == {"debian"}


def test_pip_faces_resolve_in_the_installed_package_and_draw_at_their_weight_not_thin():
    debian = {f.name: f for f in manifest_faces()}
    for face in manifest_faces(pool="pip"):
        assert resolve_face(face).name == "NotoSansCJK-VF.otf.ttc"
        twin = debian[f"NotoSansCJKsc-{face.style}"]
        for c in COMMON:
            assert check_glyph(face, c, 42).ok, (face.name, c)
        ratio = _ink(face, COMMON) / _ink(twin, COMMON)
        assert 0.85 <= ratio <= 1.15, (face.name, ratio)
    regular = next(f for f in manifest_faces(pool="pip") if f.style == "Regular")
    default_instance = dataclasses.replace(regular, variation_weight=None)  # the font's default: Thin
    thin_ratio = _ink(default_instance, COMMON) / _ink(debian["NotoSansCJKsc-Regular"], COMMON)
    assert thin_ratio < 0.6
    assert abs(_ink(default_instance, COMMON) / _ink(debian["NotoSansCJKsc-Thin"], COMMON) - 1) < 0.15


def test_missing_pip_package_names_the_pip_command_in_one_line():
    face = dataclasses.replace(manifest_faces(pool="pip")[0], file="no_such_font_package_rose/NotoSansCJK-VF.otf.ttc")
    with pytest.raises(AssetError) as err:
        resolve_face(face)
    msg = str(err.value)
    assert "\n" not in msg and "pip install manimgx-fonts-cjk" in msg and "rose-toolkit[pipfonts]" in msg
    fonts = {"faces": [], "pip_faces": [face.to_json()], "licences": {}}
    with pytest.raises(AssetError, match="pip install manimgx-fonts-cjk"):
        build_pool(fonts, {"provenance": {}, "pairs": []}, {"font_pool": "pip"})
