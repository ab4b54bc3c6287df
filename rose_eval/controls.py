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
