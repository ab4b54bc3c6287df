"""Where a release keeps one split's rows, and reading them: the toolkit's one split reader.

rose-eval, rose-run (and rose-human, the inspect task, rose-export) and the report all find
a split here. A release folder holds a split's rows as

1. ``metadata_<split>.jsonl`` (what rose-gen writes and v0.1 ships), else
2. ``data/<split>.parquet`` (one file), else
3. ``data/<split>-00000-of-0000N.parquet`` ... (Hugging Face-style parts: rose-gen writes
   them for a split past ``export.parquet_max_rows_per_file`` rows, or with
   ``export.parquet_rows_per_file``); every part must be there, from one export.

A Parquet row reads as its JSONL row: struct padding (nulls) is dropped and the ``image``
column (HF Image: bytes and path) becomes its release path, as in the JSONL; the image
bytes are never read here. Faults raise :class:`rose_eval.io.InputError` (one line: what,
where, how to fix).
"""

from __future__ import annotations

import glob
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rose_eval.io import InputError, Record, drop_nulls, read_jsonl

JSONL, PARQUET = "jsonl", "parquet"
IMAGE_COLUMN = "image"
_PART = re.compile(r"^(?P<split>.+)-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.parquet$")


@dataclass(frozen=True)
class SplitFiles:
    """The files that hold one split's rows: one JSONL file, or one or more Parquet files."""

    kind: str  # JSONL or PARQUET
    paths: tuple[Path, ...]  # in row order, under the resolved release (or given file's) folder

    @property
    def first(self) -> Path:
        """The file a summary records as the metadata path (the first part of several)."""
        return self.paths[0]

    def sha256(self) -> str:
        """Hex sha256 of the files' bytes, read in order (of the one file when there is one)."""
        return sha256_files(self.paths)


def sha256_files(paths: Iterable[Path]) -> str:
    """Hex sha256 of the files' bytes, read in order and streamed."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            for chunk in iter(lambda h=handle: h.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _parts(folder: Path, split: str) -> tuple[Path, ...]:
    """The complete set of HF-style Parquet parts of ``split`` in ``folder`` (() if none)."""
    found: dict[int, tuple[int, Path]] = {}
    counts: set[int] = set()
    for path in folder.glob(f"{glob.escape(split)}-*-of-*.parquet"):
        match = _PART.match(path.name)
        if match is None or match["split"] != split:
            continue
        index, count = int(match["index"]), int(match["count"])
        counts.add(count)
        found[index] = (count, path)
    if not found:
        return ()
    where = folder / f"{split}-*-of-*.parquet"
    if len(counts) > 1:
        raise InputError(f"Parquet parts of two exports of the {split} split "
                         f"(-of-{', -of-'.join(f'{c:05d}' for c in sorted(counts))})", where,
                         "keep the parts of one export only (re-export the release)")
    count = counts.pop()
    missing = [f"{split}-{k:05d}-of-{count:05d}.parquet" for k in range(count) if k not in found]
    extra = sorted(k for k in found if k >= count)
    if missing or extra:
        what = (f"part {missing[0]} of the {split} split is missing ({len(missing)} of {count})"
                if missing else f"part index {extra[0]} is past the part count {count}")
        raise InputError(what, where, "copy every part of the split, or re-export the release")
    return tuple(found[k][1] for k in range(count))


def find_parquet(root: Path, split: str) -> SplitFiles | None:
    """The split's Parquet in a release folder (one file or its parts), None when it has none."""
    data = root / "data"
    single = data / f"{split}.parquet"
    parts = _parts(data, split) if data.is_dir() else ()
    if single.is_file() and parts:
        raise InputError(f"both data/{split}.parquet and {len(parts)} data/{split}-*-of-*.parquet "
                         "parts: which one is the split is unclear", data,
                         "keep one layout (re-export the release)")
    if single.is_file():
        return SplitFiles(PARQUET, (single,))
    return SplitFiles(PARQUET, parts) if parts else None


def find_split(root: Path, split: str, *, fix: str = "") -> SplitFiles:
    """Where release folder ``root`` keeps ``split``'s rows (the module's order); InputError when
    nowhere (``fix`` replaces the default hint)."""
    root = root.expanduser().resolve()
    jsonl = root / f"metadata_{split}.jsonl"
    if jsonl.is_file():
        return SplitFiles(JSONL, (jsonl,))
    parquet = find_parquet(root, split) if root.is_dir() else None
    if parquet is not None:
        return parquet
    raise InputError(f"missing release metadata metadata_{split}.jsonl", jsonl,
                     fix or f"point at a release folder holding metadata_{split}.jsonl, "
                            f"data/{split}.parquet or its data/{split}-*-of-*.parquet parts")


def split_of_file(path: Path) -> SplitFiles:
    """The rows behind one given file: a JSONL or Parquet file, or, for one HF-style part
    (``test-00001-of-00004.parquet``), the whole set of its parts."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise InputError("metadata file not found", path, "check the metadata path")
    if path.suffix.lower() != ".parquet":
        return SplitFiles(JSONL, (path,))
    match = _PART.match(path.name)
    if match is None:
        return SplitFiles(PARQUET, (path,))
    return SplitFiles(PARQUET, _parts(path.parent, match["split"]))


def resolve_split(*, dataset_root: Path | None, metadata: Path | None, split: str,
                  fix: str = "") -> SplitFiles:
    """``--metadata FILE`` (see :func:`split_of_file`), else ``--dataset_root``'s split."""
    if metadata is not None:
        return split_of_file(metadata)
    if dataset_root is None:
        raise InputError("no metadata given", "command line",
                         "pass --dataset_root RELEASE_DIR or --metadata FILE "
                         "(rose-eval never downloads)")
    return find_split(dataset_root, split, fix=fix)


def read_rows(files: SplitFiles, fields: Iterable[str] | None = None) -> list[Record]:
    """Every row of the split's files, keeping ``fields`` (None: all), each with its place
    (``file:line`` for JSONL, ``file:row N`` for Parquet)."""
    wanted = None if fields is None else frozenset(fields)
    if files.kind == JSONL:
        return read_jsonl(files.first, role="metadata", fields=wanted)
    return [record for path in files.paths for record in _parquet_rows(path, wanted)]


def _parquet_rows(path: Path, wanted: frozenset[str] | None) -> list[Record]:
    try:
        import pyarrow.parquet as pq  # only Parquet input needs pyarrow

        schema = pq.read_schema(path)
        columns = [name for name in schema.names if wanted is None or name in wanted]
        selected = [f"{name}.path" if _is_hf_image(schema.field(name).type, name) else name
                    for name in columns]  # an HF image's path only: its bytes are never read
        table = pq.read_table(path, columns=selected)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a damaged file
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"unreadable Parquet file: {first}", path,
                         "re-export the release or pass its metadata JSONL") from None
    rows = table.rename_columns(columns).to_pylist()
    return [Record(f"{path}:row {index}", drop_nulls(row)) for index, row in enumerate(rows, 1)]


def _is_hf_image(arrow_type: object, name: str) -> bool:
    """The release's ``image`` column as HF datasets stores an Image: struct<bytes, path>."""
    import pyarrow as pa

    return (name == IMAGE_COLUMN and pa.types.is_struct(arrow_type)
            and {arrow_type.field(i).name for i in range(arrow_type.num_fields)} >= {"bytes", "path"})
