"""Choosing an installed face for a requested font: the font itself, its same design, or the
nearest stand-in that draws every character asked for.

Used where a font is *named* but not shipped (replaying v0.1's glyph scenes, whose rows name
48 fonts, many proprietary). Generation never calls this module: its faces come from
:mod:`rose_gen.assets.fonts` pools unchanged.

A :class:`FontRequest` describes the requested font (style class, weight, character forms,
design lineage) and may pin a face that *is* that font or the same design under another name
(``design_match``, kind ``exact`` or ``same_design``). :func:`choose_face` tries that face first;
when it is missing or cannot draw a character, every installed candidate face is ranked by

1. style-class distance (the request's class lists the classes nearest first),
2. design lineage (a face derived from the same design ranks first),
3. weight distance (``|usWeightClass - requested|``),
4. character forms (``mainland`` / ``taiwan``) matching the request,
5. the candidates' listed order (the declared tie-break),

and the first that is installed (file present, checksum as recorded) and draws every character
(:func:`rose_gen.assets.fonts.check_glyph`) is taken. The choice says why, including the better-ranked
faces it skipped. No face at all: the choice is empty and says what each candidate lacked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rose_gen.assets.fonts import FontFace, check_glyph, resolve_face
from rose_gen.core.errors import AssetError

KINDS = ("exact", "same_design", "stand_in")


@dataclass(frozen=True)
class FontRequest:
    """A named font as the caller knows it (``design_match``: face name, kind, why; or None)."""

    name: str
    style_class: str
    weight: int
    script_form: str
    lineage: str | None = None
    design_match: Mapping[str, str] | None = None

    def describe(self) -> str:
        lineage = f", {self.lineage} lineage" if self.lineage else ""
        return f"{self.name} ({self.style_class}, weight {self.weight}, {self.script_form} forms{lineage})"


@dataclass(frozen=True)
class Candidate:
    """An installable face with the style facts ranking needs."""

    face: FontFace
    style_class: str
    lineage: str | None = None

    def describe(self) -> str:
        lineage = f", {self.lineage} lineage" if self.lineage else ""
        return f"{self.face.name} ({self.style_class}, weight {self.face.weight}, {self.face.script_form} forms{lineage})"


@dataclass(frozen=True)
class FaceChoice:
    """The face chosen for a request and a set of characters (``face`` None: none can draw them)."""

    face: FontFace | None
    kind: str
    why: str


def request_from_entry(name: str, entry: Mapping[str, Any]) -> FontRequest:
    """A :class:`FontRequest` from a manifest entry (``class``, ``weight``, ``script_form``,
    optional ``lineage`` and ``design_match``)."""
    return FontRequest(name=name, style_class=str(entry["class"]), weight=int(entry["weight"]),
                       script_form=str(entry["script_form"]), lineage=entry.get("lineage"),
                       design_match=entry.get("design_match"))


def request_for_face(candidate: Candidate) -> FontRequest:
    """A request naming an installed face itself (exact when it can draw the characters)."""
    face = candidate.face
    return FontRequest(name=face.name, style_class=candidate.style_class, weight=face.weight,
                       script_form=face.script_form, lineage=candidate.lineage,
                       design_match={"face": face.name, "kind": "exact", "why": f"{face.name} is an installed face"})


def rank(request: FontRequest, candidates: Sequence[Candidate],
         class_order: Mapping[str, Sequence[str]]) -> list[Candidate]:
    """Candidates of a class the request's class accepts, nearest first (module docstring)."""
    order = list(class_order.get(request.style_class, (request.style_class,)))
    usable = [(i, c) for i, c in enumerate(candidates) if c.style_class in order]

    def key(item: tuple[int, Candidate]) -> tuple[int, int, int, int, int]:
        i, c = item
        return (order.index(c.style_class), int(bool(request.lineage) and c.lineage != request.lineage),
                abs(c.face.weight - request.weight), int(c.face.script_form != request.script_form), i)

    return [c for _, c in sorted(usable, key=key)]


@lru_cache(maxsize=128)
def installed_problem(face: FontFace) -> str:
    """'' when the face's file is installed with its recorded checksum, else why not (one line)."""
    try:
        resolve_face(face)
    except AssetError as exc:
        return str(exc)
    return ""


def drawing_problem(face: FontFace, chars: Iterable[str], cell_size: int) -> str:
    """'' when the face draws every character at ``cell_size`` (glyph checks), else the first failure."""
    problem = installed_problem(face)
    if problem:
        return "not installed"
    for char in chars:
        check = check_glyph(face, char, cell_size)
        if not check.ok:
            return f"cannot draw {char} U+{ord(char):04X} ({check.reason()})"
    return ""


def choose_face(request: FontRequest, text: str, cell_size: int, candidates: Sequence[Candidate],
                class_order: Mapping[str, Sequence[str]]) -> FaceChoice:
    """The face for ``request`` that draws every character of ``text`` (see the module docstring)."""
    chars = list(dict.fromkeys(text))
    by_name = {c.face.name: c for c in candidates}
    skipped: list[str] = []
    match = request.design_match
    if match is not None:
        pinned = by_name.get(match["face"])
        problem = "not a candidate face" if pinned is None else drawing_problem(pinned.face, chars, cell_size)
        if not problem:
            return FaceChoice(pinned.face, match["kind"], match["why"])
        skipped.append(f"{match['face']} ({match['kind'].replace('_', ' ')}) {problem}")
    for cand in rank(request, candidates, class_order):
        if match is not None and cand.face.name == match["face"]:
            continue
        problem = drawing_problem(cand.face, chars, cell_size)
        if not problem:
            lead = (f"{request.describe()} is not installed" if match is None
                    else f"the {match['kind'].replace('_', ' ')} face cannot be used")
            tried = f"; skipped: {'; '.join(skipped)}" if skipped else ""
            return FaceChoice(cand.face, "stand_in",
                              f"{lead}; nearest installed face by style class, lineage and weight that draws "
                              f"every character of the scene: {cand.describe()}{tried}")
        skipped.append(f"{cand.face.name} {problem}")
    return FaceChoice(None, "stand_in", f"no installed face draws {''.join(chars)} for {request.describe()}: "
                                        + "; ".join(skipped))
