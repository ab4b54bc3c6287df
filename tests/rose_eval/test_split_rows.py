"""The one split reader: JSONL, one Parquet file or HF-style parts, for every command.

Issue 22 measured: a release whose Parquet is split into parts (any split past the file cap, 6,000 rows,
or ``export.parquet_rows_per_file``) was refused by ``rose-export lmms-eval`` and by
rose-eval's Parquet path ("has no data/dev.parquet"), and rose-run refused a Parquet-only
release that rose-eval scores. These run the real commands on a real rose-gen release.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rose_eval.cli.eval import main as rose_eval
from rose_eval.cli.export import main as rose_export
from rose_eval.cli.run import main as rose_run
from rose_eval.io import InputError, drop_nulls
from rose_eval.report.runs import load_release
from rose_eval.report.tables import PARITY_FILES, SUMMARY
from rose_eval.runners.dataset import load_split
from rose_eval.split_rows import JSONL, PARQUET, find_split, read_rows, split_of_file

ROWS_PER_PART = 7


def _generate(out: Path, *extra: str) -> Path:
    from rose_gen.release.config import load_config
    from rose_gen.release.pipeline import generate_release
    from tests.fixtures.latin_source import latin_overrides

    overrides = [f"output_dir={out}", "progress=false", *latin_overrides(scenes=2, dev=1), *extra]
    return generate_release(load_config(overrides)).path


@pytest.fixture(scope="module")
def parts_release(tmp_path_factory) -> Path:
    """A real release whose splits rose-gen wrote as HF-style parts of 7 rows."""
    root = _generate(tmp_path_factory.mktemp("parts") / "release",
                     f"export.parquet_rows_per_file={ROWS_PER_PART}")
    assert len(list((root / "data").glob("test-*-of-*.parquet"))) > 2
    return root


def _jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _copy(release: Path, to: Path, *, drop_jsonl: bool) -> Path:
    shutil.copytree(release, to)
    if drop_jsonl:
        for split in ("dev", "test"):
            (to / f"metadata_{split}.jsonl").unlink()
    return to


def test_parts_read_as_the_jsonl_rows_in_order(parts_release, tmp_path):
    only = _copy(parts_release, tmp_path / "rel", drop_jsonl=True)
    for split in ("dev", "test"):
        files = find_split(only, split)
        parts = sorted((only / "data").glob(f"{split}-*-of-*.parquet"))
        assert files.kind == PARQUET and files.paths == tuple(parts)
        expected = [drop_nulls(row) for row in _jsonl_rows(parts_release / f"metadata_{split}.jsonl")]
        records = read_rows(files)
        assert [r.row for r in records] == expected  # the image column reads as its path
        assert records[ROWS_PER_PART].where == f"{parts[1]}:row 1"
    assert find_split(parts_release, "test").kind == JSONL  # the JSONL comes first


def test_one_part_given_reads_the_whole_split(parts_release):
    second = sorted((parts_release / "data").glob("test-*-of-*.parquet"))[1]
    files = split_of_file(second)
    assert files.paths[1] == second and len(files.paths) > 2
    assert len(read_rows(files)) == len(_jsonl_rows(parts_release / "metadata_test.jsonl"))


def test_a_missing_or_foreign_part_is_one_line(parts_release, tmp_path):
    rel = _copy(parts_release, tmp_path / "rel", drop_jsonl=True)
    parts = sorted((rel / "data").glob("test-*-of-*.parquet"))
    parts[1].unlink()
    with pytest.raises(InputError, match=rf"part {parts[1].name} of the test split is missing"):
        find_split(rel, "test")
    shutil.copy(parts[0], rel / "data" / "test-00001-of-00099.parquet")
    with pytest.raises(InputError, match="parts of two exports"):
        find_split(rel, "test")
    (rel / "data" / "test-00001-of-00099.parquet").unlink()
    shutil.copy(parts[0], parts[1])
    shutil.copy(parts[0], rel / "data" / "test.parquet")
    with pytest.raises(InputError, match="both data/test.parquet and"):
        find_split(rel, "test")
    with pytest.raises(InputError) as caught:
        find_split(tmp_path, "test")
    assert "metadata_test.jsonl" in caught.value.one_line()


def test_sha256_is_the_files_bytes(parts_release):
    one = find_split(parts_release, "test")
    assert one.sha256() == hashlib.sha256(one.first.read_bytes()).hexdigest()
    parts = split_of_file(sorted((parts_release / "data").glob("test-*.parquet"))[0])
    joined = b"".join(p.read_bytes() for p in parts.paths)
    assert parts.sha256() == hashlib.sha256(joined).hexdigest()


def test_rose_eval_scores_parts_as_it_scores_the_jsonl(parts_release, tmp_path, capsys):
    only = _copy(parts_release, tmp_path / "rel", drop_jsonl=True)
    preds = tmp_path / "oracle.jsonl"
    assert rose_run(["--dataset_root", str(parts_release), "--solver", "oracle", "--output", str(preds),
                     "--no_progress"]) == 0
    second = sorted((only / "data").glob("test-*-of-*.parquet"))[1]
    outs = {}
    for name, source in (("jsonl", ["--dataset_root", str(parts_release)]),
                         ("parts", ["--dataset_root", str(only)]),
                         ("one_part", ["--metadata", str(second)])):  # scored 7 of 25 before
        outs[name] = tmp_path / f"eval_{name}"
        assert rose_eval([*source, "--predictions", str(preds), "--out_dir", str(outs[name]),
                          "--no_analyses"]) == 0
    for file in PARITY_FILES:
        if file != SUMMARY:
            assert (outs["parts"] / file).read_bytes() == (outs["jsonl"] / file).read_bytes(), file
            assert (outs["one_part"] / file).read_bytes() == (outs["jsonl"] / file).read_bytes(), file
    summary = json.loads((outs["parts"] / SUMMARY).read_text(encoding="utf-8"))
    first = sorted((only / "data").glob("test-*-of-*.parquet"))[0]
    assert summary["metadata_jsonl"] == str(first)
    assert summary["paper_metrics"]["table1"]["Avg. PASS"] == 1.0
    assert summary["coverage"]["num_evaluated"] == len(_jsonl_rows(parts_release / "metadata_test.jsonl"))


def test_rose_run_answers_a_parquet_only_release(parts_release, tmp_path, capsys):
    only = _copy(parts_release, tmp_path / "rel", drop_jsonl=True)
    loaded = load_split(only, "test")
    first = sorted((only / "data").glob("test-*-of-*.parquet"))[0]
    assert loaded.metadata_path == first
    assert [i.item_id for i in loaded.items] == [r["item_id"] for r in
                                                 _jsonl_rows(parts_release / "metadata_test.jsonl")]
    assert loaded.items[0].where == f"{first}:row 1"
    rows = {}
    for name, root in (("jsonl", parts_release), ("parquet", only)):
        out = tmp_path / f"{name}.jsonl"
        assert rose_run(["--dataset_root", str(root), "--solver", "cv", "--output", str(out),
                         "--no_progress"]) in (0, 1)  # 1: the cv solver gave up on some item
        rows[name] = sorted((r["item_id"], r["raw_text"]) for r in _jsonl_rows(out))
    assert rows["parquet"] == rows["jsonl"]  # the same images and prompts were read
    assert sum(text is not None for _, text in rows["parquet"]) > len(rows["parquet"]) / 2


def test_rose_export_lmms_eval_lists_the_parts(parts_release, tmp_path, capsys):
    import datasets
    import yaml

    out = tmp_path / "tasks"
    assert rose_export(["lmms-eval", str(parts_release), str(out)]) == 0
    config = yaml.safe_load((out / "rose_test.yaml").read_text(encoding="utf-8"))
    listed = config["dataset_kwargs"]["data_files"]["test"]
    assert listed == [p.as_posix() for p in sorted((parts_release / "data").glob("test-*.parquet"))]
    loaded = datasets.load_dataset("parquet", data_files={"test": listed},
                                   cache_dir=str(tmp_path / "hf"))["test"]
    assert loaded.num_rows == sum(pq.read_metadata(p).num_rows for p in listed)


def test_the_report_finds_rows_in_parts(parts_release, tmp_path):
    from rose_eval.report.runs import ReportRun

    only = _copy(parts_release, tmp_path / "rel", drop_jsonl=True)
    wanted = {r["item_id"] for r in _jsonl_rows(parts_release / "metadata_test.jsonl")[::9]}
    run = ReportRun("m", tmp_path, {"split": "test"}, ())
    release = load_release(only, [run], wanted)
    assert set(release.rows) == wanted
    assert all(release.image_path(release.row(i)).is_file() for i in wanted)
    recorded = ReportRun("m", tmp_path, {"split": "test", "metadata_jsonl": str(
        sorted((only / "data").glob("test-*.parquet"))[2])}, ())
    assert set(load_release(None, [recorded], wanted).rows) == wanted
