"""Which released fields follow from the scene, and how: the replay's derivation rules.

A :class:`FieldRule` derives one field from other fields of the released row (the scene's
identity: its two characters and their roles, its recorded emoji paths, its pixel file names,
its grid). The rules are data, in :data:`SCENE_RULES` (every subset) and
:data:`SUBSET_RULES` (per visual source); :func:`derive_fields` applies them to a scene's
first row. A rule's ``agrees`` says when a released value is the derived one written another
way (``1f9eb`` vs ``1F9EB-FE0F``, a pair listed in either order); then the released spelling is
kept, otherwise the derived value goes on the rebuilt scene and the comparison of every row
reports the disagreement. A field no rule derives is *carried* (taken from the row as the
scene's identity or one of v0.1's own labels).

:data:`IDENTITY_RULES` name the two sides that must differ for a scene to have an exception at
all (characters, emoji keys, styles, pixel files); equal or canonically equivalent sides are a
*defect* of that scene.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from assets_manifest import load_manifest
from rose_gen.assets.emoji.catalogue import chars_of_key, emoji_key, key_from_filename
from rose_gen.scene.layout import LAYOUT_FAMILIES
from rose_gen.scene.v0_1_plans import V0_1_PLANS

MANIFEST = "replay_v0_1"


class NotDerivable(ValueError):
    """The rule's inputs do not determine the field (the message says why)."""


class _Absent:
    """The field must not be on the row (e.g. ``font_size`` outside the glyph subset)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


def _equal(released: Any, derived: Any) -> bool:
    return released == derived


@dataclass(frozen=True)
class FieldRule:
    """How ``field`` follows from the row's ``inputs`` (all must be present for the rule to apply)."""

    field: str
    inputs: tuple[str, ...]
    derive: Callable[[Mapping[str, Any]], Any]  # the row -> the derived value, ABSENT, or NotDerivable
    what: str
    agrees: Callable[[Any, Any], bool] = _equal


@dataclass(frozen=True)
class FieldProblem:
    """A released field the rules find wrong: ``kind`` ``not_derivable`` or ``defect``."""

    field: str
    released: Any
    derived: Any
    why: str
    kind: str


@dataclass(frozen=True)
class Derivation:
    """The scene's field values after the rules, and what the rules found."""

    values: dict[str, Any]  # field -> value for the rebuilt scene (ABSENT: drop it)
    derived: tuple[str, ...]  # fields a rule derived
    problems: tuple[FieldProblem, ...]


# ------------------------------------------------------------------ scene rules


def _font_size(row: Mapping[str, Any]) -> Any:
    plan = V0_1_PLANS.get(str(row["rose_subset"]))
    scale = plan.font_scale if plan is not None else None
    return ABSENT if scale is None else int(int(row["cell_size"]) * scale)


def _grid_profile(row: Mapping[str, Any]) -> str:
    plan = V0_1_PLANS.get(str(row["rose_subset"]))
    if plan is None:
        raise NotDerivable(f"v0.1 has no profile table for subset {row['rose_subset']!r}")
    family = LAYOUT_FAMILIES.get(plan.layout.family)
    rows, cols = int(row["rows"]), int(row["cols"])
    for p in family.profiles:
        if p.rows[0] <= rows <= p.rows[1] and p.cols[0] <= cols <= p.cols[1]:
            return p.name
    table = ", ".join(f"{p.name} {p.rows[0]}-{p.rows[1]} x {p.cols[0]}-{p.cols[1]}" for p in family.profiles)
    raise NotDerivable(f"a {rows}x{cols} grid fits no {family.name} profile ({table})")


SCENE_RULES: tuple[FieldRule, ...] = (
    FieldRule("font_size", ("rose_subset", "cell_size"), _font_size,
              "int(cell_size * 0.72) on glyph scenes, absent elsewhere (v0.1's rule)"),
    FieldRule("grid_size_profile", ("rose_subset", "rows", "cols"), _grid_profile,
              "the profile whose row and column ranges hold the grid (v0.1's profile table)"),
)

# ------------------------------------------------------------------ glyph


def _members(released: Any, derived: Sequence[str]) -> bool:
    return isinstance(released, list) and sorted(released) == list(derived)


def _contains(released: Any, derived: Sequence[str]) -> bool:
    return isinstance(released, list) and set(derived) <= set(released)


def _chars(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row["background_char"]), str(row["target_char"])


def _undirected(row: Mapping[str, Any]) -> str:
    return "__".join(sorted(_chars(row)))


GLYPH_CHARS = ("background_char", "target_char")
GLYPH_RULES: tuple[FieldRule, ...] = (
    FieldRule("source_pair", GLYPH_CHARS, lambda r: sorted(_chars(r)),
              "the two characters (v0.1 lists them in no fixed order)", _members),
    FieldRule("source_group", GLYPH_CHARS, lambda r: sorted(_chars(r)),
              "a confusable group holding both characters", _contains),
    FieldRule("pair_direction", GLYPH_CHARS, lambda r: "{}_majority_{}_target".format(*_chars(r)),
              "<background_char>_majority_<target_char>_target"),
    FieldRule("pair_key", GLYPH_CHARS, _undirected, "the two characters sorted, joined by __"),
    FieldRule("undirected_pair_key", GLYPH_CHARS, _undirected, "the two characters sorted, joined by __"),
)

# ------------------------------------------------------------------ emoji


@dataclass(frozen=True)
class EmojiPath:
    """What a recorded emoji path says: the style (vendor) and the file stem (its code points)."""

    style: str
    stem: str

    @property
    def key(self) -> str:
        return key_from_filename(self.stem)


_CODE_POINTS = re.compile(r"[0-9a-f]{1,6}(?:-[0-9a-f]{1,6})*")


@lru_cache(maxsize=1)
def _path_patterns() -> tuple[tuple[re.Pattern[str], str | None], ...]:
    return tuple((re.compile(p["pattern"]), p.get("style")) for p in load_manifest(MANIFEST)["emoji_paths"])


def emoji_path(path: Any) -> EmojiPath:
    """Parse a recorded emoji path (``emoji_paths`` of the replay manifest); NotDerivable if unknown."""
    for pattern, style in _path_patterns():
        m = pattern.fullmatch(str(path))
        if m is not None:
            stem = m.group("stem").lower()
            if not _CODE_POINTS.fullmatch(stem) or max(int(p, 16) for p in stem.split("-")) > sys.maxunicode:
                raise NotDerivable(f"emoji path {path!r}: file name {stem!r} is not a sequence of code points")
            return EmojiPath(style or m.group("style"), stem)
    raise NotDerivable(f"emoji path {path!r} has no known layout (assets_manifest/{MANIFEST}.json emoji_paths)")


def _same_key(released: Any, derived: str) -> bool:
    return key_from_filename(str(released)) == key_from_filename(derived)


def _same_emoji(released: Any, derived: str) -> bool:
    return key_from_filename(emoji_key(str(released))) == key_from_filename(emoji_key(derived))


def _same_pair(released: Any, derived: str) -> bool:
    parts = str(released).split("__")
    return len(parts) == 2 and sorted(map(key_from_filename, parts)) == sorted(map(key_from_filename, derived.split("__")))


def _stem(field: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: emoji_path(row[field]).stem


def _emoji(field: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: chars_of_key(emoji_path(row[field]).key)


def _style(field: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda row: emoji_path(row[field]).style


PATHS = ("background_path", "target_path")
EMOJI_STYLE_RULES: tuple[FieldRule, ...] = (
    FieldRule("unicode_key", ("background_path",), _stem("background_path"),
              "the code points of the majority's file name", _same_key),
    FieldRule("emoji_char", ("background_path",), _emoji("background_path"),
              "the emoji of the majority's file name", _same_emoji),
    FieldRule("background_emoji", ("background_path",), _emoji("background_path"),
              "the emoji of the majority's file name", _same_emoji),
    FieldRule("target_emoji", ("target_path",), _emoji("target_path"),
              "the emoji of the exception's file name", _same_emoji),
    FieldRule("majority_style", ("background_path",), _style("background_path"),
              "the style folder (vendor) of the majority's path"),
    FieldRule("target_style", ("target_path",), _style("target_path"),
              "the style folder (vendor) of the exception's path"),
)
EMOJI_CONTENT_RULES: tuple[FieldRule, ...] = (
    FieldRule("background_unicode", ("background_path",), _stem("background_path"),
              "the code points of the majority's file name", _same_key),
    FieldRule("target_unicode", ("target_path",), _stem("target_path"),
              "the code points of the exception's file name", _same_key),
    FieldRule("background_emoji", ("background_path",), _emoji("background_path"),
              "the emoji of the majority's file name", _same_emoji),
    FieldRule("target_emoji", ("target_path",), _emoji("target_path"),
              "the emoji of the exception's file name", _same_emoji),
    FieldRule("pair_key", PATHS, lambda r: "__".join(sorted(emoji_path(r[f]).stem for f in PATHS)),
              "the two file names' code points, sorted, joined by __", _same_pair),
)

# ------------------------------------------------------------------ pixel art

_IMAGE_FILE = re.compile(r"[^\\/]+\.(?:png|gif|jpe?g|webp|bmp)", re.IGNORECASE)


def _file_names(key: str) -> list[str]:
    """The two image file names a v0.1 PixelContent pair_key joins with ``__``."""
    splits = [(key[:m.start()], key[m.end():]) for m in re.finditer("__", key)]
    found = [[a, b] for a, b in splits if _IMAGE_FILE.fullmatch(a) and _IMAGE_FILE.fullmatch(b)]
    if len(found) != 1:
        raise NotDerivable(f"pair_key {key!r} does not name two image files as <name>.png__<name>.png")
    return found[0]


def _content_names(row: Mapping[str, Any]) -> list[str]:
    if "background_sprite" in row and "target_sprite" in row:  # our rows record both sprites
        return [str(row["background_sprite"]), str(row["target_sprite"])]
    return _file_names(str(row["pair_key"]))


def _edit_name(row: Mapping[str, Any]) -> str:
    key = str(row["pair_key"])
    ours = "sprite_source" in row  # our rows name a sprite of our library, not a file
    if "__" in key or not key or not (ours or _IMAGE_FILE.fullmatch(key)):
        raise NotDerivable(f"pair_key {key!r} does not name one image file as <name>.png")
    return key


def _unordered(released: Any, derived: str) -> bool:
    return sorted(str(released).split("__")) == sorted(derived.split("__"))


PIXEL_EDIT_RULES: tuple[FieldRule, ...] = (
    FieldRule("pair_key", ("pair_key",), _edit_name, "the recorded base sprite's file name"),
)
PIXEL_CONTENT_RULES: tuple[FieldRule, ...] = (
    FieldRule("pair_key", ("pair_key",), lambda r: "__".join(sorted(_content_names(r))),
              "the two recorded sprite file names, sorted, joined by __", _unordered),
)

SUBSET_RULES: dict[str, tuple[FieldRule, ...]] = {
    "glyph": GLYPH_RULES,
    "emoji_style": EMOJI_STYLE_RULES,
    "emoji_content": EMOJI_CONTENT_RULES,
    "pixel_edit": PIXEL_EDIT_RULES,
    "pixel_content": PIXEL_CONTENT_RULES,
}

# ------------------------------------------------------------------ identity (defects)


def _text_sameness(a: str, b: str) -> str:
    """Why two characters are one (identical, NFC- or NFKC-equivalent), or ''."""
    if a == b:
        return "identical"
    for form in ("NFC", "NFKC"):
        if unicodedata.normalize(form, a) == unicodedata.normalize(form, b):
            kind = "canonically" if form == "NFC" else "compatibility"
            return f"{kind} equivalent ({form}-identical)"
    return ""


def _codepoints(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text)


@dataclass(frozen=True)
class IdentityRule:
    """The two sides of a scene that must differ; ``sides`` reads them off the row."""

    field: str  # the exception's field, named in the report
    sides: Callable[[Mapping[str, Any]], tuple[str, str]]
    sameness: Callable[[str, str], str]  # why the two are one, or ''
    inputs: tuple[str, ...]


def _equal_keys(a: str, b: str) -> str:
    return "the same emoji" if key_from_filename(a) == key_from_filename(b) else ""


def _equal_names(a: str, b: str) -> str:
    return "the same" if a == b else ""


IDENTITY_RULES: dict[str, IdentityRule] = {
    "glyph": IdentityRule("target_char", _chars, _text_sameness, GLYPH_CHARS),
    "emoji_style": IdentityRule("target_style", lambda r: (emoji_path(r["background_path"]).style,
                                                          emoji_path(r["target_path"]).style),
                                _equal_names, PATHS),
    "emoji_content": IdentityRule("target_unicode", lambda r: (emoji_path(r["background_path"]).stem,
                                                              emoji_path(r["target_path"]).stem),
                                  _equal_keys, PATHS),
    "pixel_content": IdentityRule("pair_key", lambda r: tuple(_content_names(r)), _equal_names, ("pair_key",)),
}


def identity_defect(row: Mapping[str, Any], source: str) -> FieldProblem | None:
    """A defect when the scene's majority and exception are one (None: they differ or cannot be read)."""
    rule = IDENTITY_RULES.get(source)
    if rule is None or any(k not in row for k in rule.inputs):
        return None
    try:
        a, b = rule.sides(row)
    except NotDerivable:
        return None  # reported by the field rules
    why = rule.sameness(a, b)
    if not why:
        return None
    detail = f" ({_codepoints(a)} / {_codepoints(b)})" if source == "glyph" else ""
    return FieldProblem(rule.field, row.get(rule.field), None,
                        f"majority {a!r} and exception {b!r} are {why}{detail}",
                        "defect")


# ------------------------------------------------------------------ applying the rules


def rules_for(source: str) -> tuple[FieldRule, ...]:
    """The scene rules and the source's own rules."""
    return SCENE_RULES + SUBSET_RULES.get(source, ())


def derive_fields(row: Mapping[str, Any], source: str) -> Derivation:
    """Apply :func:`rules_for` ``source`` to a scene's row (see the module docstring)."""
    values: dict[str, Any] = {}
    derived: list[str] = []
    problems: list[FieldProblem] = []
    for rule in rules_for(source):
        if any(k not in row for k in rule.inputs):
            continue
        released = row.get(rule.field, ABSENT)
        try:
            value = rule.derive(row)
        except NotDerivable as exc:
            problems.append(FieldProblem(rule.field, None if released is ABSENT else released, None, str(exc),
                                         "not_derivable"))
            continue
        derived.append(rule.field)
        agrees = released is not ABSENT and value is not ABSENT and rule.agrees(released, value)
        values[rule.field] = released if agrees else value
    defect = identity_defect(row, source)
    if defect is not None:
        problems.append(defect)
    return Derivation(values, tuple(derived), tuple(problems))


def rule_notes(source: str) -> dict[str, str]:
    """Field -> how the rule derives it (attached to the inconsistencies it finds)."""
    return {r.field: r.what for r in rules_for(source)}
