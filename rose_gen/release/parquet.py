"""A split's Parquet, streamed from its JSONL and its image files in row groups.

The Arrow schema is the union of every row's fields (core fields, then the others by
first appearance), so it is known only once the last row has arrived. The rows are
therefore written to JSONL as they come, and the Parquet is written from that file and
the image files in row groups of ``parquet_rows_per_group`` rows: memory holds one row
group, whatever the release size, and the bytes are the same for a single run and a
merge of shards. Each file is hashed as it is written. With several files per split
(Hugging Face-style names), every file is an independent job: the JSONL writer records the
byte offset where each file's rows start, so files are written in parallel.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rose_gen.release.features import IMAGE, arrow_schema


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


def write_parquet(root: Path, rel: str, rows: Iterator[dict[str, Any]], columns: list, *,
                  rows_per_group: int, compression: str, image_column: bool = True) -> str:
    """Write ``rows`` with their images (read from ``root``) to ``root/rel`` in row groups; return its sha256.

    ``image_column`` False: rows without images (the text-only control), ``image`` is a plain column.
    """
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image_column:
        schema = arrow_schema(columns)
        return _write_groups(path, rows, schema, lambda chunk: pa.Table.from_pylist(chunk, schema=schema),
                             rows_per_group=rows_per_group, compression=compression)
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

    return _write_groups(path, rows, schema, with_images, rows_per_group=rows_per_group, compression=compression)


def _write_groups(path: Path, rows: Iterator[dict[str, Any]], schema: pa.Schema,
                  to_table: Callable[[list[dict[str, Any]]], pa.Table], *, rows_per_group: int,
                  compression: str) -> str:
    """Write ``rows`` to ``path``, one row group per ``rows_per_group`` rows (``to_table`` builds
    each; an empty input is one empty table); return the file's sha256."""
    step = max(1, int(rows_per_group))
    with open(path, "wb") as fh:
        sink = HashingFile(fh)
        with pq.ParquetWriter(sink, schema, compression=compression) as writer:
            wrote = False
            while chunk := list(islice(rows, step)):
                writer.write_table(to_table(chunk))
                wrote = True
            if not wrote:
                writer.write_table(schema.empty_table())
    return sink.digest.hexdigest()
