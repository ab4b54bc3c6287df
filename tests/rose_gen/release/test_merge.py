"""Shards and rose-gen merge: assignment, byte-identity to one run, resume, bad shard sets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rose_gen.cli.gen import main
from rose_gen.release.config import load_config
from rose_gen.release.folder import SUMMARY_FILE, release_files
from rose_gen.release.merge import merge_shards
from rose_gen.release.pipeline import generate_release
from rose_gen.release.shards import SCENES_FILE, SHARD_SUMMARY, ShardSpec, shard_name
from tests.fixtures.latin_source import latin_overrides


def _config(out: Path, *extra: str):
    return load_config([f"output_dir={out}", "progress=false", *latin_overrides(scenes=3, dev=1), *extra])


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in [*release_files(root), SUMMARY_FILE]}


def _shards(out: Path, n: int, *extra: str) -> list[Path]:
    paths = []
    for i in range(n):
        result = generate_release(_config(out, f"shard.index={i}", f"shard.count={n}", *extra))
        assert result.written and result.path == (Path(f"{out}.shards") / shard_name(i, n)).absolute()
        paths.append(result.path)
    return paths


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> Path:
    return generate_release(_config(tmp_path_factory.mktemp("single") / "rel", "workers=1")).path


def test_every_scene_belongs_to_exactly_one_shard() -> None:
    for count in (1, 2, 3, 7):
        specs = [ShardSpec(i, count, Path("x")) for i in range(count)]
        owners = [[s.index for s in specs if s.owns(p)] for p in range(50)]
        assert all(len(o) == 1 for o in owners)
        assert [s.size(50) for s in specs] == [sum(1 for o in owners if o == [s.index]) for s in specs]
        assert max(s.size(50) for s in specs) - min(s.size(50) for s in specs) <= 1


def test_a_shard_draws_only_its_own_scenes(tmp_path, monkeypatch) -> None:
    """Ranked labels are left to the merge, so a shard never draws another shard's scene."""
    from rose_gen.scene.plan import SubsetDraws

    drawn: list[tuple[str, int]] = []
    real = SubsetDraws.draw

    def counted(self, k):
        drawn.append((self.plan.subset, k))
        return real(self, k)

    monkeypatch.setattr(SubsetDraws, "draw", counted)
    config = _config(tmp_path / "rel", "shard.index=1", "shard.count=4", "workers=1")
    assert all(p.difficulty.hard_share is not None for p in config.plans)
    generate_release(config)
    order = [(p.subset, k) for p in config.plans for k in range(1, p.n_scenes + 1)]
    assert drawn == [order[pos] for pos in range(1, len(order), 4)]


@pytest.mark.parametrize("n", [1, 2, 4, 16])
def test_merged_shards_are_byte_identical_to_a_single_run(single, tmp_path, n) -> None:
    out = tmp_path / "rel"
    shards = _shards(out, n)  # 16 shards of 15 scenes: some shards hold a single scene
    records = [json.loads(line) for s in shards for line in (s / SCENES_FILE).read_text().splitlines()]
    assert sorted(r["position"] for r in records) == list(range(15))
    assert all(r["position"] % n == int(s.name.split("-")[1])
               for s in shards for r in map(json.loads, (s / SCENES_FILE).read_text().splitlines()))
    path, written, scenes = merge_shards(list(reversed(shards)), out)  # argument order does not matter
    assert written and scenes == 15
    assert _tree(path) == _tree(single)


def test_merge_through_the_cli_takes_the_folder_of_shards(single, tmp_path, capsys) -> None:
    out = tmp_path / "rel"
    _shards(out, 3)
    assert main(["merge", f"{out}.shards", str(out)]) == 0
    assert _tree(out) == _tree(single)
    assert main(["merge", f"{out}.shards", str(out)]) == 0  # again: identical, left alone
    assert "identical release already present" in capsys.readouterr().err


def test_a_finished_shard_is_kept_and_a_half_written_one_leaves_nothing(tmp_path) -> None:
    out = tmp_path / "rel"
    first = _shards(out, 2)[0]
    stamp = (first / SHARD_SUMMARY).stat().st_mtime_ns
    again = generate_release(_config(out, "shard.index=0", "shard.count=2"))
    assert not again.written and (first / SHARD_SUMMARY).stat().st_mtime_ns == stamp
    (first / SHARD_SUMMARY).unlink()  # not finished: refused unless overwrite
    with pytest.raises(RuntimeError, match="holds something other than shard 0 of 2"):
        generate_release(_config(out, "shard.index=0", "shard.count=2"))
    assert generate_release(_config(out, "shard.index=0", "shard.count=2", "overwrite=true")).written
    assert sorted(p.name for p in Path(f"{out}.shards").iterdir()) == ["shard-0-of-2", "shard-1-of-2"]


def test_a_shard_of_an_older_format_is_not_kept_as_finished(tmp_path) -> None:
    out = tmp_path / "rel"
    first = _shards(out, 2)[0]
    summary = json.loads((first / SHARD_SUMMARY).read_text())
    summary["shard"]["format"] = 1  # what rose-gen wrote before shards recorded drawn specs
    (first / SHARD_SUMMARY).write_text(json.dumps(summary))
    with pytest.raises(RuntimeError, match="holds something other than shard 0 of 2"):
        generate_release(_config(out, "shard.index=0", "shard.count=2"))
    assert generate_release(_config(out, "shard.index=0", "shard.count=2", "overwrite=true")).written


def _merge_error(capsys, *args: str | Path) -> str:
    assert main(["merge", *map(str, args)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rose-gen: error: "), err
    return err


def test_merge_refuses_bad_shard_sets_with_one_line(tmp_path, capsys) -> None:
    out = tmp_path / "rel"
    a = _shards(out, 3)
    other = _shards(tmp_path / "seed5", 3, "seed=5")
    pair = _shards(tmp_path / "two", 2)
    release = tmp_path / "merged"
    assert "shard(s) 2 of 3 missing" in _merge_error(capsys, a[0], a[1], release)
    assert "shard 1 of 3 is given twice" in _merge_error(capsys, a[0], a[1], a[1], a[2], release)
    err = _merge_error(capsys, a[0], other[1], a[2], release)
    assert "different config" in err and "config.seed: 0 vs 5" in err
    assert "merge shards of one shard.count" in _merge_error(capsys, a[0], pair[1], release)
    assert "is not a shard folder" in _merge_error(capsys, tmp_path, release)
    assert "does not exist" in _merge_error(capsys, tmp_path / "nope", release)
    assert "need shard folders and a release folder" in _merge_error(capsys, release)
    image = next((a[1] / "images").rglob("*.png"))
    image.write_bytes(image.read_bytes() + b"\0")
    assert "does not match the sha256 recorded" in _merge_error(capsys, *a, release)
    assert not release.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "rel.shards", "seed5.shards", "two.shards"]


def test_a_shard_missing_a_scene_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "rel"
    shards = _shards(out, 2)
    lines = (shards[1] / SCENES_FILE).read_text().splitlines()
    (shards[1] / SCENES_FILE).write_text("\n".join(lines[:-1]) + "\n")
    err = _merge_error(capsys, *shards, tmp_path / "m")
    assert f"{shards[1]}: scenes.jsonl is missing or does not match the sha256" in err


def test_parquet_as_hugging_face_shards_reads_as_one_split(tmp_path, monkeypatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    extra = ("export.parquet_rows_per_file=20",)
    single = generate_release(_config(tmp_path / "single", *extra)).path
    names = sorted(p.name for p in (single / "data").iterdir())
    assert names == ["dev-00000-of-00002.parquet", "dev-00001-of-00002.parquet", "test-00000-of-00003.parquet",
                     "test-00001-of-00003.parquet", "test-00002-of-00003.parquet"]
    assert [pq.read_metadata(single / "data" / n).num_rows for n in names] == [20, 5, 20, 20, 10]
    card = (single / "README.md").read_text()
    assert "path: data/test-*.parquet" in card and "metadata_test.jsonl\n" not in card.split("---")[1]
    got = datasets.load_dataset(str(single), cache_dir=str(tmp_path / "cache"))
    rows = [json.loads(line) for line in (single / "metadata_test.jsonl").read_text().splitlines()]
    assert got["test"].num_rows == 50 and got["test"]["item_id"] == [r["item_id"] for r in rows]
    assert sorted(got) == ["dev", "test"] and got["dev"].num_rows == 25
    assert got["test"][49]["image"].size == (rows[49]["image_width"], rows[49]["image_height"])
    out = tmp_path / "sharded"
    path, _, _ = merge_shards(_shards(out, 2, *extra), out)
    assert _tree(path) == _tree(single)
    shutil.rmtree(f"{out}.shards")


def test_merged_shards_with_controls_equal_a_single_run(tmp_path) -> None:
    single = generate_release(_config(tmp_path / "one", "workers=1", "export=controls")).path
    out = tmp_path / "rel"
    path, written, _ = merge_shards(_shards(out, 2, "export=controls"), out)
    tree = _tree(path)
    assert written and any(rel.startswith("analysis/controls/exceptions_given/images/") for rel in tree)
    assert tree == _tree(single)


def test_merge_opens_at_most_workers_parquet_files_at_once(tmp_path, monkeypatch, capsys) -> None:
    import threading

    from rose_gen.release import parquet as parquet_mod

    extra = ("export.parquet_rows_per_file=10",)  # 3 dev + 5 test files
    live, peak, lock = [0], [0], threading.Lock()

    class CountedWriter(pq.ParquetWriter):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            with lock:
                live[0] += 1
                peak[0] = max(peak[0], live[0])

        def close(self) -> None:
            if getattr(self, "is_open", False):
                with lock:
                    live[0] -= 1
            super().close()

    monkeypatch.setattr(parquet_mod.pq, "ParquetWriter", CountedWriter)
    folders = _shards(tmp_path / "rel", 2, *extra)
    serial, _, _ = merge_shards(folders, tmp_path / "serial", workers=1)
    assert peak[0] == 1 and live[0] == 0  # one file at a time
    assert len(list((serial / "data").iterdir())) == 8
    peak[0] = 0
    assert main(["merge", *map(str, folders), str(tmp_path / "two"), "--workers", "2"]) == 0
    assert 1 <= peak[0] <= 2 and live[0] == 0
    assert _tree(tmp_path / "two") == _tree(serial)
    assert main(["merge", *map(str, folders), str(tmp_path / "bad"), "--workers=0"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("rose-gen: error: merge: --workers needs a whole number") and not (tmp_path / "bad").exists()


def test_subsets_merged_in_parallel_are_byte_identical_to_one_at_a_time(tmp_path, monkeypatch, capsys) -> None:
    """--workers N merges up to N subsets at once in as many processes (recorded by each process itself,
    which waits until two have started): the same bytes as one at a time and as one run."""
    import os

    from rose_gen.release.merge import MEET_ENV, PIDS_ENV

    extra = ("export.parquet_rows_per_file=7",)  # file starts fall inside subsets, so inside appended parts
    single = generate_release(_config(tmp_path / "single", "workers=1", *extra)).path
    folders = _shards(tmp_path / "rel", 3, *extra)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv(PIDS_ENV, str(pids))

    def ran() -> list[tuple[str, str]]:
        seen = sorted(tuple(p.name.split("-", 1)) for p in pids.iterdir())
        for p in pids.iterdir():
            p.unlink()
        return seen

    serial, _, _ = merge_shards(folders, tmp_path / "one", workers=1)
    seen = ran()
    subsets = [subset for _, subset in seen]
    assert len(subsets) == 5 and {pid for pid, _ in seen} == {str(os.getpid())}  # one at a time, here
    monkeypatch.setenv(MEET_ENV, "2")
    path, written, scenes = merge_shards(folders, tmp_path / "two", workers=2)
    seen = ran()
    assert written and scenes == 15 and sorted(subset for _, subset in seen) == sorted(subsets)
    workers = {pid for pid, _ in seen}
    assert len(workers) == 2 and str(os.getpid()) not in workers  # two processes, at most --workers
    assert _tree(path) == _tree(serial) == _tree(single)
    assert main(["merge", *map(str, folders), str(tmp_path / "three"), "--workers", "3"]) == 0
    assert len({pid for pid, _ in ran()}) == 3 and _tree(tmp_path / "three") == _tree(single)
    capsys.readouterr()

    monkeypatch.delenv(PIDS_ENV)
    image = next((folders[2] / "images").rglob("*.png"))
    image.write_bytes(image.read_bytes() + b"\0")  # found by a worker process: still one line, exit 2
    err = _merge_error(capsys, *folders, "--workers", "2", tmp_path / "bad")
    assert "does not match the sha256 recorded" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "pids", "rel.shards", "single", "three", "two"]
