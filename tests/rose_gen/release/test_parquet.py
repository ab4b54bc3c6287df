"""Parquet row groups: bounded by rows and by image bytes, the same cut for a run and a merge."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rose_gen.cli.gen import main
from rose_gen.release.config import load_config
from rose_gen.release.parquet import DEFAULT_MAX_BYTES_PER_GROUP, row_groups, write_parquet
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides


def test_row_groups_cut_at_the_row_bound_and_the_byte_bound() -> None:
    sizes = [3, 3, 3, 3, 3, 3, 3]
    assert [len(g) for g in row_groups(sizes, 4)] == [4, 3]  # rows only
    assert [len(g) for g in row_groups(sizes, 4, 7, int)] == [2, 2, 2, 1]  # 3+3 <= 7 < 3+3+3
    assert [len(g) for g in row_groups(sizes, 4, 0, int)] == [4, 3]  # 0: no byte bound
    assert [g for g in row_groups([1, 50, 1, 1], 10, 8, int)] == [[1], [50], [1, 1]]  # too big: alone
    assert list(row_groups([], 4, 8, int)) == []
    assert [len(g) for g in row_groups(range(5), 0)] == [1] * 5  # at least one row per group


def _images(root: Path, n: int, size: int) -> list[dict]:
    rows = []
    for k in range(n):
        rel = f"images/{k}.png"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(os.urandom(size))  # incompressible, like PNG bytes
        rows.append({"item_id": f"i{k}", "image": rel})
    return rows


def test_large_images_are_written_in_groups_under_the_byte_bound(tmp_path) -> None:
    rows = _images(tmp_path, 10, 300_000)
    columns = [("item_id", "string"), ("image", "string")]
    write_parquet(tmp_path, "a.parquet", iter(rows), columns, rows_per_group=64, compression="zstd",
                  max_bytes_per_group=1_000_000)
    write_parquet(tmp_path, "b.parquet", iter(rows), columns, rows_per_group=64, compression="zstd",
                  max_bytes_per_group=0)
    bounded, unbounded = pq.ParquetFile(tmp_path / "a.parquet"), pq.ParquetFile(tmp_path / "b.parquet")
    assert [bounded.metadata.row_group(g).num_rows for g in range(bounded.num_row_groups)] == [3, 3, 3, 1]
    assert unbounded.num_row_groups == 1
    table = bounded.read()
    assert table.column("item_id").to_pylist() == [r["item_id"] for r in rows]
    assert [im["bytes"] for im in table.column("image").to_pylist()] == [
        (tmp_path / r["image"]).read_bytes() for r in rows]


def _release(out: Path, *extra: str) -> Path:
    config = load_config([f"output_dir={out}", "progress=false", *latin_overrides(scenes=2),
                          "subsets=[glyph]", *extra])
    return generate_release(config).path


def test_the_default_bound_is_not_recorded_and_a_bound_that_cuts_is(tmp_path) -> None:
    plain = _release(tmp_path / "plain")
    explicit = _release(tmp_path / "explicit", f"export.parquet_max_bytes_per_group={DEFAULT_MAX_BYTES_PER_GROUP}")
    for name in ("export_summary.json", "data/test.parquet", "data/dev.parquet"):
        assert (plain / name).read_bytes() == (explicit / name).read_bytes()
    summary = json.loads((plain / "export_summary.json").read_text())
    assert "parquet_max_bytes_per_group" not in summary["config"]["export"]

    one_image = max(p.stat().st_size for p in (plain / "images").rglob("*.png"))
    cut = _release(tmp_path / "cut", f"export.parquet_max_bytes_per_group={one_image}")
    summary = json.loads((cut / "export_summary.json").read_text())
    assert summary["config"]["export"]["parquet_max_bytes_per_group"] == one_image
    test_file = pq.ParquetFile(cut / "data" / "test.parquet")
    n_rows = test_file.metadata.num_rows
    assert test_file.num_row_groups > pq.ParquetFile(plain / "data" / "test.parquet").num_row_groups
    jsonl = [json.loads(line) for line in (cut / "metadata_test.jsonl").read_text().splitlines()]
    sizes = [(cut / r["image"]).stat().st_size for r in jsonl]
    expected = [len(g) for g in row_groups(sizes, 64, one_image, int)]
    assert [test_file.metadata.row_group(g).num_rows for g in range(test_file.num_row_groups)] == expected
    assert sum(expected) == n_rows and max(expected) <= 2  # images of similar size: one or two per group
    assert test_file.read().to_pylist() == pq.read_table(plain / "data" / "test.parquet").to_pylist()


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_a_bad_byte_bound_is_one_line_and_exit_2(tmp_path, capsys, value: str) -> None:
    code = main([f"output_dir={tmp_path / 'r'}", "progress=false", *latin_overrides(scenes=2),
                 f"export.parquet_max_bytes_per_group={value}"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "parquet_max_bytes_per_group" in err[0], err
    assert not (tmp_path / "r").exists()
