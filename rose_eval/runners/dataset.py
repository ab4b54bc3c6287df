"""Load a release folder's task rows for one split and select the items to run.

A release folder holds a split's rows (``metadata_<split>.jsonl``, or its Parquet: found by
:func:`rose_eval.split_rows.find_split`) and ``images/<subset>/<image_id>.png``. Every
selected row's image must resolve inside the release folder and exist; both are checked
before any request is made, so a bad row costs nothing.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from rose_eval.io import InputError
from rose_eval.split_rows import SplitFiles, find_split, read_rows
from rose_eval.vocab import (
    BRIDGE_TEMPLATES,
    SPLITS,
    SUBSET_ID_PREFIX,
    SUBSET_ORDER,
    SUBSET_SHORT,
    TEMPLATE_ORDER,
    canonical_template,
    ordered_subsets,
)


class DatasetError(ValueError):
    """A release folder or one of its rows cannot be used; the message is one line."""


@dataclass(frozen=True)
class DatasetItem:
    """One task row ready to run: the row as released and its image's resolved path."""

    item_id: str
    row: Mapping[str, Any]
    image_path: Path | None  # None: a text-only control row (the grid is in its prompt)
    line_no: int  # the row's line in the JSONL (its row number in a Parquet file)
    where: str = ""  # "file:line" or "file:row N"


@dataclass(frozen=True)
class Selection:
    """What to select from a split (all filters optional)."""

    subsets: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    samples_per_subset: int = 0
    shuffle: bool = False
    seed: int = 42
    controls: tuple[str, ...] = ()  # interface controls whose rows follow the selected rows ("all": every one)


@dataclass(frozen=True)
class LoadedSplit:
    """The selected items of one split with the facts a run manifest records."""

    root: Path
    split: str
    metadata_path: Path
    fingerprint: str
    num_rows_in_split: int
    items: tuple[DatasetItem, ...]


def _read_rows(files: SplitFiles) -> list[tuple[int, dict[str, Any], str]]:
    """(line or row number, row, "file:place") of every row; DatasetError on a fault."""
    fix = "fix or regenerate the release"
    try:
        records = read_rows(files)
    except InputError as exc:
        raise _dataset_error(exc) from None
    rows: list[tuple[int, dict[str, Any], str]] = []
    for record in records:
        if not record.row.get("item_id"):
            raise DatasetError(f"{record.where}: row without an item_id; {fix}")
        rows.append((_place_number(record.where), record.row, record.where))
    return rows


def _dataset_error(exc: InputError) -> DatasetError:
    """rose-run's form of a reader's fault: "file:line: what; fix"."""
    return DatasetError(" ".join(f"{exc.where}: {exc.what}; {exc.fix}".split()))


def _place_number(where: str) -> int:
    """The line (JSONL, "file:12") or row (Parquet, "file:row 12") number of a record's place."""
    return int(where.rsplit(":", 1)[1].removeprefix("row "))


def _normalise(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "").replace(" ", "")


def resolve_subsets(requested: Sequence[str], present: Iterable[str] = ()) -> tuple[str, ...]:
    """Full subset names for names given in full, short (``ChineseGlyph``), id prefix (``CH``), any case.

    ``present`` adds the subsets found in the release, so plug-in subsets resolve by their own name.
    """
    known = ordered_subsets([*SUBSET_ORDER, *present])
    lookup = {_normalise(name): name for name in known}
    lookup.update({_normalise(short): name for name, short in SUBSET_SHORT.items()})
    # The id prefixes of v0.1 (CHITEM_..., PEDITITEM_...) double as short subset names.
    lookup.update({_normalise(prefix): name for name, prefix in SUBSET_ID_PREFIX.items()})
    out: list[str] = []
    for token in requested:
        if _normalise(token) in {"all", "*"}:
            return ()
        name = lookup.get(_normalise(token))
        if name is None:
            raise DatasetError(f"unknown subset {token!r}; known: {', '.join(known)}")
        if name not in out:
            out.append(name)
    return tuple(out)


def resolve_templates(requested: Sequence[str]) -> tuple[str, ...]:
    """Full template names for full names, aliases or the short forms ``T1``..``T5``."""
    known = TEMPLATE_ORDER + BRIDGE_TEMPLATES
    short = {name.split("_", 1)[0].lower(): name for name in known}
    out: list[str] = []
    for token in requested:
        name = short.get(token.lower(), canonical_template(token.upper()))
        if name not in known:
            raise DatasetError(f"unknown template {token!r}; known: T1..T5, {', '.join(known)}")
        if name not in out:
            out.append(name)
    return tuple(out)


def resolve_image(root: Path, row: Mapping[str, Any], where: str) -> Path | None:
    """The image path of a row, refused when it leaves the release folder or is missing
    (None for a control row without an image: text_only)."""
    value = row.get("image")
    if value is None and row.get("control") is not None:
        return None
    if not isinstance(value, str) or not value:
        raise DatasetError(f"{where}: row {row.get('item_id')} has no 'image' path")
    relative = PurePosixPath(value.replace("\\", "/"))
    candidate = (root / Path(*relative.parts)).resolve()
    if relative.is_absolute() or Path(value).is_absolute() or not candidate.is_relative_to(root):
        raise DatasetError(f"{where}: image path {value!r} of {row.get('item_id')} resolves outside the "
                           f"dataset root {root}; refusing to read it")
    if not candidate.is_file():
        raise DatasetError(f"{where}: missing image {value} for {row.get('item_id')} "
                           f"(expected at {candidate}); re-export or re-download the release")
    return candidate


def select(rows: Sequence[tuple[int, dict[str, Any]]], selection: Selection) -> list[tuple[int, dict[str, Any]]]:
    """Rows kept by the subset/template filters, optionally shuffled and capped per subset."""
    subsets = set(resolve_subsets(selection.subsets, {str(r.get("rose_subset")) for _, r in rows}))
    templates = set(resolve_templates(selection.templates))
    kept = [(n, r) for n, r in rows
            if (not subsets or r.get("rose_subset") in subsets)
            and (not templates or canonical_template(str(r.get("task_template"))) in templates)]
    rng = random.Random(selection.seed)  # a local generator: selection is reproducible from --seed
    if selection.samples_per_subset > 0:
        order = ordered_subsets(str(r.get("rose_subset")) for _, r in kept)
        balanced: list[tuple[int, dict[str, Any]]] = []
        for subset in order:
            bucket = [(n, r) for n, r in kept if r.get("rose_subset") == subset]
            if selection.shuffle:
                rng.shuffle(bucket)
            balanced.extend(bucket[: selection.samples_per_subset])
        return balanced
    if selection.shuffle:
        rng.shuffle(kept)
    return kept


def load_split(root: Path | str, split: str, selection: Selection = Selection()) -> LoadedSplit:
    """Read a release folder's ``split`` rows (JSONL or Parquet) and return the selected items."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise DatasetError(f"dataset root {root} is not a directory; pass the release folder")
    try:
        files = find_split(root, split, fix=f"is {root} a release folder with a {split} split?")
    except InputError as exc:
        raise _dataset_error(exc) from None
    metadata = files.first
    rows = _read_rows(files)
    places = {id(row): where for _, row, where in rows}
    seen: set[str] = set()
    for _, row, where in rows:
        if row["item_id"] in seen:
            raise DatasetError(f"{where}: duplicate item_id {row['item_id']}")
        seen.add(row["item_id"])
    chosen = select([(number, row) for number, row, _ in rows], selection)
    if not chosen:
        raise DatasetError(f"no rows of {metadata} match the selection (subsets={list(selection.subsets)}, "
                           f"templates={list(selection.templates)})")
    items = tuple(DatasetItem(item_id=str(row["item_id"]), row=row, line_no=number,
                              image_path=resolve_image(root, row, places[id(row)]), where=places[id(row)])
                  for number, row in chosen)
    if selection.controls:
        items += control_items(root, split, selection.controls, [item.item_id for item in items])
    return LoadedSplit(root=root, split=split, metadata_path=metadata, fingerprint=files.sha256(),
                       num_rows_in_split=len(rows), items=items)


def control_items(root: Path, split: str, controls: Sequence[str], sources: Sequence[str]) -> tuple[DatasetItem, ...]:
    """The rows of ``controls`` (``all``: every control the release has) whose source is one of
    ``sources``, in source order, then control order (:mod:`rose_eval.controls`)."""
    from rose_eval.controls import read_control_rows, resolve_controls

    try:
        names = resolve_controls(tuple(controls), root, split)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    by_source: dict[str, list[DatasetItem]] = {}
    for name in names:
        try:
            records = read_control_rows(root, name, split)
        except InputError as exc:
            raise _dataset_error(exc) from None
        for record in records:
            row = record.row
            if row.get("control") != name or not row.get("item_id") or not row.get("source_item_id"):
                raise DatasetError(f"{record.where}: not a {name} control row (needs item_id, source_item_id and "
                                   f"control={name!r}); regenerate the release")
            item = DatasetItem(item_id=str(row["item_id"]), row=row, line_no=_place_number(record.where),
                               image_path=resolve_image(root, row, record.where), where=record.where)
            by_source.setdefault(str(row["source_item_id"]), []).append(item)
    return tuple(item for source in sources for item in by_source.get(source, ()))
