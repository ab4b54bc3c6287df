"""A split's Parquet, streamed from its JSONL and its image files in row groups.

The Arrow schema is the union of every row's fields (core fields, then the others by
first appearance), so it is known only once the last row has arrived. The rows are
therefore written to JSONL as they come, and the Parquet is written from that file and
the image files in row groups of at most ``parquet_rows_per_group`` rows and (for rows with
images) ``parquet_max_bytes_per_group`` image bytes: memory holds one row group, whatever the
release size and however large its images, and the bytes are the same for a single run and a
merge of shards. Each file is hashed as it is written. With several files per split
(Hugging Face-style names), every file is an independent job: the JSONL writer records the
byte offset where each file's rows start, so files are written in parallel.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from rose_gen.release.features import IMAGE, arrow_schema

T = TypeVar("T")


class HashingFile(io.RawIOBase):
    """A write-only file that hashes (sha256) every byte on its way to ``fh``."""

    def __init__(self, fh: Any) -> None:
        super().__init__()
        self.fh = fh
        self.digest = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:  # type: ignore[override]
        view = memoryview(data)
        self.digest.update(view)
        self.size += view.nbytes
        self.fh.write(view)
        return view.nbytes

    def tell(self) -> int:
        return self.size


def parquet_names(split: str, n_rows: int, rows_per_file: int) -> list[tuple[str, int, int]]:
    """(release path, first row, end row) of each Parquet file of a split.

    ``rows_per_file`` 0 gives one ``data/<split>.parquet``; otherwise Hugging Face-style
    ``data/<split>-00000-of-00004.parquet`` files of at most that many rows (at least one file).
    """
    if rows_per_file <= 0:
        return [(f"data/{split}.parquet", 0, n_rows)]
    n_files = max(1, -(-n_rows // rows_per_file))
    return [(f"data/{split}-{k:05d}-of-{n_files:05d}.parquet", k * rows_per_file,
             min(n_rows, (k + 1) * rows_per_file)) for k in range(n_files)]


def read_rows(jsonl: Path, offset: int, n_rows: int) -> Iterator[dict[str, Any]]:
    """``n_rows`` rows of ``jsonl`` from byte ``offset`` (a line start)."""
    with open(jsonl, "rb") as fh:
        fh.seek(offset)
        for line in islice(fh, n_rows):
            yield json.loads(line)


DEFAULT_MAX_BYTES_PER_GROUP = 16 * 1024 * 1024  # conf/export/default.yaml's parquet_max_bytes_per_group


def row_groups(rows: Iterable[T], max_rows: int, max_bytes: int = 0,
               size_of: Callable[[T], int] | None = None) -> Iterator[list[T]]:
    """``rows`` cut into groups of at most ``max_rows`` rows and, with ``size_of``, at most
    ``max_bytes`` bytes (0: no byte bound); a row larger than ``max_bytes`` is a group alone.

    Pure: the cut depends only on the rows' sizes, so a single run and a merge of shards cut
    the same groups.
    """
    step = max(1, int(max_rows))
    group: list[T] = []
    used = 0
    for row in rows:
        size = size_of(row) if size_of is not None and max_bytes > 0 else 0
        if group and (len(group) >= step or (max_bytes > 0 and used + size > max_bytes)):
            yield group
            group, used = [], 0
        group.append(row)
        used += size
    if group:
        yield group


def write_parquet(root: Path, rel: str, rows: Iterator[dict[str, Any]], columns: list, *,
                  rows_per_group: int, compression: str, image_column: bool = True,
                  max_bytes_per_group: int = DEFAULT_MAX_BYTES_PER_GROUP) -> str:
    """Write ``rows`` with their images (read from ``root``) to ``root/rel`` in row groups; return its sha256.

    A row group holds at most ``rows_per_group`` rows and ``max_bytes_per_group`` bytes of image
    files (0: no byte bound), so a release of large images keeps the writer's memory bounded.
    ``image_column`` False: rows without images (the text-only control), ``image`` is a plain column.
    """
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image_column:
        schema = arrow_schema(columns)
        return _write_groups(path, row_groups(rows, rows_per_group), schema,
                             lambda chunk: pa.Table.from_pylist(chunk, schema=schema), compression=compression)
    schema = arrow_schema([(name, IMAGE if name == "image" else t) for name, t in columns])
    at = schema.get_field_index("image")
    plain = pa.schema([f for f in schema if f.name != "image"])
    image_fields = list(schema.field("image").type)

    def with_images(chunk: list[dict[str, Any]]) -> pa.Table:
        # Rows without the image convert fast; the image column is built from arrays.
        table = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "image"} for r in chunk], schema=plain)
        paths = [r["image"] for r in chunk]
        images = pa.StructArray.from_arrays(
            [pa.array([(root / p).read_bytes() for p in paths], pa.binary()), pa.array(paths, pa.string())],
            fields=image_fields)
        return table.add_column(at, schema.field("image"), images).replace_schema_metadata(schema.metadata)

    groups = row_groups(rows, rows_per_group, max_bytes_per_group, lambda r: (root / r["image"]).stat().st_size)
    return _write_groups(path, groups, schema, with_images, compression=compression)


def _write_groups(path: Path, groups: Iterator[list[dict[str, Any]]], schema: pa.Schema,
                  to_table: Callable[[list[dict[str, Any]]], pa.Table], *, compression: str) -> str:
    """Write each of ``groups`` to ``path`` as one row group (``to_table`` builds it; no group
    is one empty table); return the file's sha256."""
    with open(path, "wb") as fh:
        sink = HashingFile(fh)
        with pq.ParquetWriter(sink, schema, compression=compression) as writer:
            wrote = False
            for chunk in groups:
                writer.write_table(to_table(chunk))
                wrote = True
            if not wrote:
                writer.write_table(schema.empty_table())
    return sink.digest.hexdigest()
