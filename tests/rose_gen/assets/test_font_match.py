"""Face choice for a requested font, with the installed faces: the pinned face when it draws
the characters, else the nearest by style class, lineage, weight and forms that does."""

from __future__ import annotations

from assets_manifest import load_manifest
from rose_gen.assets.font_match import FontRequest, choose_face, rank, request_for_face
from rose_gen.check.replay.assets import font_candidates

CLASS_ORDER = load_manifest("replay_v0_1")["class_order"]


def _names(request: FontRequest, n: int) -> list[str]:
    return [c.face.name for c in rank(request, font_candidates(), CLASS_ORDER)[:n]]


def test_rank_puts_class_then_lineage_then_weight_then_forms_first():
    song = FontRequest("simsun", "serif", 400, "mainland")
    assert _names(song, 3) == ["BousungEG-Light-GB", "NotoSerifCJKsc-Regular", "TW-Sung-98_1"]
    ming = FontRequest("GenRyuMinTW-Heavy", "serif", 900, "taiwan", lineage="source_han_serif")
    assert _names(ming, 1) == ["NotoSerifCJKsc-Black"]  # lineage before forms
    kai = rank(FontRequest("simkai", "kai", 400, "mainland"), font_candidates(), CLASS_ORDER)
    classes = [c.style_class for c in kai]
    assert classes == sorted(classes, key=CLASS_ORDER["kai"].index)  # kai, then fangsong, serif, sans
    assert "display" not in classes  # a class the request does not accept is never offered


def test_the_pinned_face_is_used_when_it_draws_every_character():
    req = FontRequest("SourceHanSansCN-Normal", "sans", 350, "mainland", "source_han_sans",
                      {"face": "NotoSansCJKsc-DemiLight", "kind": "same_design", "why": "one design"})
    choice = choose_face(req, "架枷", 48, font_candidates(), CLASS_ORDER)
    assert (choice.face.name, choice.kind, choice.why) == ("NotoSansCJKsc-DemiLight", "same_design", "one design")


def test_a_face_that_lacks_a_character_is_skipped_for_the_nearest_that_has_it():
    req = FontRequest("simkai", "kai", 400, "mainland")
    usual = choose_face(req, "竹", 48, font_candidates(), CLASS_ORDER)
    assert usual.face.name == "GBZenKai-Medium" and usual.kind == "stand_in"
    rare = choose_face(req, "竹⺮", 48, font_candidates(), CLASS_ORDER)  # AR PL KaitiM GB has no U+2EAE
    assert rare.face.name == "UKaiCN"
    assert "skipped: GBZenKai-Medium cannot draw ⺮ U+2EAE" in rare.why


def test_a_pinned_face_that_cannot_draw_falls_back_to_a_stand_in():
    req = FontRequest("simkai-pinned", "kai", 400, "mainland", None,
                      {"face": "GBZenKai-Medium", "kind": "exact", "why": "pinned"})
    choice = choose_face(req, "⺮", 48, font_candidates(), CLASS_ORDER)
    assert choice.kind == "stand_in" and choice.face.name == "UKaiCN"
    assert choice.why.startswith("the exact face cannot be used") and "GBZenKai-Medium (exact) cannot draw" in choice.why


def test_no_face_for_a_character_nobody_draws():
    req = FontRequest("simsun", "serif", 400, "mainland")
    choice = choose_face(req, "\U0010fffd", 48, font_candidates(), CLASS_ORDER)
    assert choice.face is None and "no installed face draws" in choice.why
    assert "BousungEG-Light-GB cannot draw" in choice.why and "NotoSansCJKsc-Regular cannot draw" in choice.why


def test_an_installed_face_requested_by_name_is_exact():
    own = next(c for c in font_candidates() if c.face.name == "LXGWWenKai-Bold")
    choice = choose_face(request_for_face(own), "架", 48, font_candidates(), CLASS_ORDER)
    assert (choice.face.name, choice.kind) == ("LXGWWenKai-Bold", "exact")
