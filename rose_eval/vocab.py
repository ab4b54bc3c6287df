"""One source of truth for the ROSE vocabulary shared by generator and evaluator.

Pure constants, no imports beyond the standard library: the evaluator imports this
module without pulling in any rendering code.
"""

from __future__ import annotations

PROTOCOL_VERSION = "v0.3"

SUBSET_ORDER: tuple[str, ...] = (
    "ROSE-ChineseGlyph",
    "ROSE-EmojiStyle",
    "ROSE-EmojiContent",
    "ROSE-PixelEdit",
    "ROSE-PixelContent",
)

SUBSET_SHORT: dict[str, str] = {name: name.removeprefix("ROSE-") for name in SUBSET_ORDER}

# Id prefixes of the v0.1 subsets: CHSCENE_000001, CHITEM_000001, CHIMG_000001, ...
SUBSET_ID_PREFIX: dict[str, str] = {
    "ROSE-ChineseGlyph": "CH",
    "ROSE-EmojiStyle": "ESTY",
    "ROSE-EmojiContent": "ECON",
    "ROSE-PixelEdit": "PEDIT",
    "ROSE-PixelContent": "PCONT",
}

TEMPLATE_ORDER: tuple[str, ...] = (
    "T1_COUNT_GLOBAL",
    "T2_COUNT_LOCAL_NUMERIC",
    "T3_CLICK_LOCAL_NUMERIC",
    "T4_CLICK_VISUAL_REGION",
    "T5_CLICK_COUNT_EXCLUSION",
)

# The dataset card once called template 5 by another name; read it as the evaluator's.
TEMPLATE_ALIASES: dict[str, str] = {"T5_CLICK_EXCLUSION_SUBMIT": "T5_CLICK_COUNT_EXCLUSION"}

# Every name a main template goes by (its own and its aliases).
TEMPLATE_NAMES: dict[str, frozenset[str]] = {
    template: frozenset({template, *(a for a, t in TEMPLATE_ALIASES.items() if t == template)})
    for template in TEMPLATE_ORDER
}

BRIDGE_TEMPLATES: tuple[str, ...] = ("T1B_CLICK_GLOBAL", "T2B_COUNT_LOCAL_MATCHED")

# The interface controls (rose_gen/tasks/controls.py), nested: each gives what the one before gives and more.
CONTROL_ORDER: tuple[str, ...] = ("coords_given", "exceptions_given", "text_only")

TEMPLATE_SHORT: dict[str, str] = {
    "T1_COUNT_GLOBAL": "G-Cnt",
    "T2_COUNT_LOCAL_NUMERIC": "L-Cnt",
    "T3_CLICK_LOCAL_NUMERIC": "L-Clk",
    "T4_CLICK_VISUAL_REGION": "V-Clk",
    "T5_CLICK_COUNT_EXCLUSION": "Excl. C+S",
}

TASK_MODES: tuple[str, ...] = ("COUNT", "CLICK", "CLICK_COUNT")

REGION_TYPES: tuple[str, ...] = (
    "GLOBAL",
    "ROW_RANGE",
    "COL_RANGE",
    "RECTANGLE",
    "VISUAL_REGION",
    "EXCLUSION",
)

REGION_CASES: tuple[str, ...] = ("zero", "partial", "all")

SPLITS: tuple[str, ...] = ("dev", "test")

REFERENCE_SOURCE = "REF_MAJORITY"
SELECTION_PREDICATE = "SELECT_DIFFERENT"
TARGET_RULE = "ODD_FROM_MAJORITY"


def ordered_subsets(names) -> list[str]:
    """Subsets present in ``names``: known ones in the paper's order, then plug-in subsets sorted."""
    present = set(names)
    return [s for s in SUBSET_ORDER if s in present] + sorted(present - set(SUBSET_ORDER))


class _CanonicalNames(dict):
    """name -> the evaluator's name; unknown names map to themselves (remembered, bounded)."""

    def __missing__(self, name: str) -> str:
        if len(self) < 10_000:
            self[name] = name
        return name


_CANONICAL = _CanonicalNames(TEMPLATE_ALIASES)


def canonical_template(name: str) -> str:
    """Return the evaluator's name for a task template (aliases resolved)."""
    return _CANONICAL[name]


def template_of(row) -> str:
    """A row's task template under the evaluator's name (the row's ``task_template``, as text)."""
    return _CANONICAL[str(row.get("task_template"))]
