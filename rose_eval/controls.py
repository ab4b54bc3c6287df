"""Where a release keeps its interface-control rows, and reading them (rose-run, rose-eval).

``rose-gen`` with ``export.controls`` writes, per control, ``analysis/controls/<control>/``
with ``metadata_<split>.jsonl`` (and Parquet, and images for the image controls). A control
row is its source row with ``item_id = <source item_id>__<control>``, ``source_item_id``
and ``control``; it is scored like any row. Control names are ``vocab.CONTROL_ORDER``.
"""

from __future__ import annotations

from pathlib import Path

from rose_eval.io import InputError, Record
from rose_eval.split_rows import find_split, read_rows
from rose_eval.vocab import CONTROL_ORDER

CONTROLS_DIR = ("analysis", "controls")
# The rule between a labelled control image's margins and its grid (rose_gen/render/controls.py):
# a full-width row band and a full-height column band of this grey, this many px thick.
LABEL_RULE_RGB, LABEL_RULE_PX = (150, 150, 150), 2
MARGIN_WHITE_SHARE = 0.6  # a label margin is mostly white paper


def label_margins(rgb):
    """(top, left) where the grid starts in a labelled control image, or (0, 0) for any other image.

    A labelled image has a grey rule (:data:`LABEL_RULE_RGB`) across its whole width and down
    its whole height, with white label margins above and left of it; only then is it cropped.
    """
    import numpy as np

    rule = (rgb == np.asarray(LABEL_RULE_RGB, dtype=rgb.dtype)).all(axis=2)
    rows = np.nonzero(rule.all(axis=1))[0]
    cols = np.nonzero(rule.all(axis=0))[0]
    if rows.size < LABEL_RULE_PX or cols.size < LABEL_RULE_PX:
        return 0, 0
    top, left = int(rows[LABEL_RULE_PX - 1]) + 1, int(cols[LABEL_RULE_PX - 1]) + 1
    if rows[0] != top - LABEL_RULE_PX or cols[0] != left - LABEL_RULE_PX or top >= rgb.shape[0] // 2 \
            or left >= rgb.shape[1] // 2:
        return 0, 0
    white = (rgb == 255).all(axis=2)
    if white[:top - LABEL_RULE_PX, left:].mean() < MARGIN_WHITE_SHARE \
            or white[top:, :left - LABEL_RULE_PX].mean() < MARGIN_WHITE_SHARE:
        return 0, 0
    return top, left


def control_folder(root: Path, control: str) -> Path:
    """The folder of one control's rows in release ``root``."""
    return root.joinpath(*CONTROLS_DIR, control)


def present_controls(root: Path | None, split: str) -> tuple[str, ...]:
    """The controls release ``root`` has rows of for ``split``, in CONTROL_ORDER."""
    if root is None:
        return ()
    found = []
    for control in CONTROL_ORDER:
        try:
            find_split(control_folder(root.expanduser().resolve(), control), split)
        except InputError:
            continue
        found.append(control)
    return tuple(found)


def resolve_controls(requested: tuple[str, ...] | list[str], root: Path, split: str) -> tuple[str, ...]:
    """Requested control names (``all``: every control the release has) checked against the release.

    ValueError (one line) for an unknown name or a control the release lacks.
    """
    present = present_controls(root, split)
    if any(name == "all" for name in requested):
        if not present:
            raise ValueError(f"{root} has no interface controls for {split} (analysis/controls/*/metadata_{split}"
                             ".jsonl); generate it with export=controls or export.controls=[...]")
        return present
    for name in requested:
        if name not in CONTROL_ORDER:
            raise ValueError(f"unknown control {name!r}; known: {', '.join(CONTROL_ORDER)}, all")
        if name not in present:
            raise ValueError(f"{root} has no {name} rows for {split}; generate the release with "
                             f"export.controls including {name}")
    return tuple(c for c in CONTROL_ORDER if c in requested)


def read_control_rows(root: Path, control: str, split: str, fields=None) -> list[Record]:
    """Every row of one control for ``split`` (JSONL, else its Parquet), with its place."""
    return read_rows(find_split(control_folder(root.expanduser().resolve(), control), split), fields)
