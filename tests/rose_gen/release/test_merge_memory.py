"""rose-gen merge holds no per-scene state: at no point does memory hold a subset's scene specs,
or a container of every image path (the file index lives on disk), however many scenes."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from rose_gen.core.schema import SceneSpec
from rose_gen.release import export as export_mod
from rose_gen.release import folder as folder_mod
from rose_gen.release.config import load_config
from rose_gen.release.folder import SUMMARY_FILE, FileIndex, release_files
from rose_gen.release.merge import merge_shards
from rose_gen.release.pipeline import generate_release
from tests.fixtures.latin_source import latin_overrides
from tests.fresh_process import run_fresh

SCENES, DEV, SHARDS = 8, 2, 4  # per subset (5 subsets): 40 scenes, 80 images, in 4 shards
MAX_SPECS = 3  # live SceneSpecs at any point: the scene being written (a whole-subset hold is 8)
MAX_PATHS = 12  # image paths in any one container (a file dict holds all 80)


def _config(out: Path, *extra: str):
    return load_config([f"output_dir={out}", "progress=false", "workers=1",
                        *latin_overrides(scenes=SCENES, dev=DEV), *extra])


def _held() -> tuple[int, int]:
    """(live SceneSpec objects, most image paths held by one container) in this process."""
    gc.collect()
    specs, paths = 0, 0
    for obj in gc.get_objects():
        if isinstance(obj, SceneSpec):
            specs += 1
        elif isinstance(obj, dict | list | set | tuple | frozenset):
            members = obj.keys() if isinstance(obj, dict) else obj
            try:
                n = sum(1 for m in members if isinstance(m, str) and m.startswith("images/"))
            except RuntimeError:  # changed while counted (another thread): not ours
                continue
            paths = max(paths, n)
    return specs, paths


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> tuple[Path, Path]:
    """(folder of 4 shard folders, the same release made in one run)."""
    root = tmp_path_factory.mktemp("mem")
    for i in range(SHARDS):
        generate_release(_config(root / "rel", f"shard.index={i}", f"shard.count={SHARDS}"))
    single = generate_release(_config(root / "single")).path
    return Path(f"{root / 'rel'}.shards"), single


def merge_counting_what_it_holds(folder: str, out: str) -> dict:
    """Merge ``folder``'s shards into ``out``, counting :func:`_held` at every row hand-off and at
    the summary. Run by :func:`tests.fresh_process.run_fresh`: patches this process for good."""
    seen: list[tuple[int, int]] = []
    add_rows, write_summary = export_mod.ReleaseWriter.add_rows, folder_mod.AtomicFolder.write_summary

    def counted_rows(self, rows):
        seen.append(_held())
        return add_rows(self, rows)

    def counted_summary(self, summary):
        seen.append(_held())
        return write_summary(self, summary)

    export_mod.ReleaseWriter.add_rows = counted_rows
    folder_mod.AtomicFolder.write_summary = counted_summary
    path, written, scenes = merge_shards([Path(folder)], Path(out))
    return {"path": str(path), "written": bool(written), "scenes": scenes, "seen": seen}


def test_merge_holds_no_subset_of_specs_and_no_file_list(shards, tmp_path) -> None:
    folder, single = shards
    # in a fresh interpreter: the heap walk then sees the merge, not the whole test session
    merged = run_fresh(f"{__name__}:merge_counting_what_it_holds", str(folder), str(tmp_path / "merged"))
    path, written, scenes, seen = Path(merged["path"]), merged["written"], merged["scenes"], merged["seen"]
    assert written and scenes == 5 * SCENES and len(seen) == scenes + 1
    assert max(s for s, _ in seen) <= MAX_SPECS, f"live SceneSpecs per row hand-off: {[s for s, _ in seen]}"
    assert max(p for _, p in seen) <= MAX_PATHS, f"image paths in one container: {[p for _, p in seen]}"
    assert max(s for s, _ in seen) >= 1  # the walk does see the scene being written
    for rel in [*release_files(single), SUMMARY_FILE]:  # and the merge is still the one run's release
        assert (path / rel).read_bytes() == (single / rel).read_bytes(), rel
    assert sorted(release_files(path)) == sorted(release_files(single))


def test_file_index_streams_the_summary_as_a_dict_dump(tmp_path) -> None:
    """The on-disk file index gives the summary bytes a sorted dict would, and forgets on close."""
    import io
    import json

    index = FileIndex(tmp_path / "index.sqlite")
    files = {"images/b/2.png": "bb", "images/a/10.png": "aa", "README.md": "cc", "données/é.txt": "dd"}
    for rel, sha in files.items():
        index[rel] = sha
    index["README.md"] = "ee"  # written again: the last hash counts, as in a dict
    files["README.md"] = "ee"
    assert len(index) == 4 and "images/a/10.png" in index and "images/c.png" not in index
    assert list(index) == sorted(files) and index["README.md"] == "ee"
    summary = {"dataset": "ROSE", "counts": {"rows": [1, 2]}, "files": index}
    out = io.StringIO()
    folder_mod._dump_summary(summary, out)
    assert out.getvalue() == json.dumps({**summary, "files": dict(sorted(files.items()))},
                                        ensure_ascii=False, indent=2) + "\n"
    index.close()
    assert not (tmp_path / "index.sqlite").exists()
