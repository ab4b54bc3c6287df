"""``rose-gen merge``: assemble shard folders into the release, byte-identical to a single run.

The shards must be exactly shards 0..n-1 of one release: the same count, config,
versions, assets and attributions, each index once. Their scenes are merged by release
position (a streaming k-way merge: one scene per shard in memory) into the same
:class:`~rose_gen.release.export.ReleaseWriter` a single run uses, so rows, counts, columns,
Parquet, card, licences and summary come out the same. Images are hard-linked from the
shards when they share a file system (copied otherwise) after their sha256 is checked.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

from rose_gen.core.schema import SceneSpec
from rose_gen.release.export import ReleaseInfo, ReleaseWriter
from rose_gen.release.folder import ReleaseError, check_target, sha256_path
from rose_gen.release.ranked_rows import hard_shares, rows_of
from rose_gen.release.shards import (
    SCENES_FILE,
    SHARD_FORMAT,
    SHARD_SUMMARY,
    read_shard_summary,
    shard_records,
)
from rose_gen.scene.difficulty import apply_cuts, difficulty_cuts

# Summary keys every shard of one release must agree on, with what a mismatch means.
_SAME: tuple[tuple[str, str], ...] = (
    ("config", "a different config"),
    ("versions", "different library versions"),
    ("assets", "different asset files"),
    ("attributions", "different asset licences"),
    ("dataset", "a different dataset name"),
)


@dataclass(frozen=True)
class Shard:
    """One shard folder and its summary."""

    folder: Path
    summary: Mapping[str, Any]

    @property
    def index(self) -> int:
        return int(self.summary["shard"]["index"])

    @property
    def count(self) -> int:
        return int(self.summary["shard"]["count"])


def expand_shard_args(paths: Sequence[Path]) -> list[Path]:
    """Shard folders from the arguments: a shard folder, or a folder of shard folders (``<out>.shards``)."""
    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise ReleaseError(f"shard folder {path} does not exist; give the shard folders (or the folder "
                               "holding them) made by rose-gen shard.index=... shard.count=...")
        if (path / SHARD_SUMMARY).is_file():
            out.append(path)
            continue
        inner = sorted(p for p in path.iterdir() if (p / SHARD_SUMMARY).is_file())
        if not inner:
            raise ReleaseError(f"{path} is not a shard folder and holds none ({SHARD_SUMMARY} missing); "
                               "give the shard folders made by rose-gen shard.index=... shard.count=...")
        out += inner
    return out


def load_shards(folders: Sequence[Path]) -> list[Shard]:
    """Read and check a shard set: one release, every index 0..n-1 exactly once. Sorted by index."""
    if not folders:
        raise ReleaseError("no shard folders given; usage: rose-gen merge <shard folder>... <release folder>")
    shards = []
    for folder in folders:
        summary = read_shard_summary(folder)
        if summary is None or not isinstance(summary.get("shard"), Mapping):
            raise ReleaseError(f"{folder} is not a shard folder ({SHARD_SUMMARY} missing)")
        if summary["shard"].get("format") != SHARD_FORMAT:
            raise ReleaseError(f"{folder}: shard format {summary['shard'].get('format')!r} is not {SHARD_FORMAT}; "
                               "regenerate the shard with this rose-gen")
        recorded = summary.get("files", {}).get(SCENES_FILE)
        if not (folder / SCENES_FILE).is_file() or sha256_path(folder / SCENES_FILE) != recorded:
            raise ReleaseError(f"{folder}: {SCENES_FILE} is missing or does not match the sha256 recorded for it; "
                               "the shard is damaged: regenerate it")
        # The file list is the shard's largest part and the merge needs none of it: not kept.
        shards.append(Shard(folder, {key: value for key, value in summary.items() if key != "files"}))
    first = shards[0]
    for shard in shards[1:]:
        if shard.count != first.count:
            raise ReleaseError(f"{shard.folder} is shard {shard.index} of {shard.count} but {first.folder} is one of "
                               f"{first.count}; merge shards of one shard.count")
        for key, what in _SAME:
            if shard.summary.get(key) != first.summary.get(key):
                where = _first_difference(first.summary.get(key), shard.summary.get(key), key)
                raise ReleaseError(f"{shard.folder} was made with {what} than {first.folder} (first difference: "
                                   f"{where}); shards of one release must share it: regenerate the odd one")
    seen: dict[int, Path] = {}
    for shard in shards:
        if shard.index in seen:
            raise ReleaseError(f"shard {shard.index} of {shard.count} is given twice ({seen[shard.index]} and "
                               f"{shard.folder}); give each shard once")
        seen[shard.index] = shard.folder
    missing = [i for i in range(first.count) if i not in seen]
    if missing:
        listed = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
        raise ReleaseError(f"shard(s) {listed} of {first.count} missing ({len(missing)} of {first.count}); make them "
                           f"with rose-gen shard.index=<i> shard.count={first.count} (same config), then merge again")
    return sorted(shards, key=lambda s: s.index)


def _first_difference(a: Any, b: Any, where: str) -> str:
    """Dotted path of the first place two JSON values differ, with both values when short."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    shown = f"{json.dumps(a)} vs {json.dumps(b)}"
    return f"{where}: {shown}" if len(shown) <= 80 else where


def _records(shard: Shard) -> Iterator[tuple[int, int, dict[str, Any]]]:
    for record in shard_records(shard.folder):
        yield int(record["position"]), shard.index, record


def _release_records(shards: Sequence[Shard], total: int) -> Iterator[tuple[Shard, dict[str, Any]]]:
    """Every scene record of the shard set in release order, with its shard (one record per shard in
    memory); a scene missing, twice or in the wrong shard is refused."""
    by_index = {s.index: s for s in shards}
    expected = 0
    for position, index, record in heapq.merge(*(_records(s) for s in shards), key=lambda t: t[0]):
        shard = by_index[index]
        if position % shard.count != index or position < expected:
            raise ReleaseError(f"{shard.folder}: holds the scene at position {position} twice or of another "
                               f"shard; the shard is damaged: regenerate shard {index}")
        if position != expected:
            owner = by_index[expected % shard.count]
            raise ReleaseError(f"{owner.folder}: misses the scene at position {expected}; the shard is "
                               f"incomplete: regenerate shard {owner.index}")
        yield shard, record
        expected += 1
    if expected != total:
        short = next(s for s in shards if s.index == expected % shards[0].count)
        raise ReleaseError(f"{short.folder}: the shards hold {expected} of {total} scenes; the shard is "
                           f"incomplete: regenerate shard {short.index}")


def ranked_cuts(shards: Sequence[Shard], total: int,
                shares: Mapping[str, float | None]) -> dict[str, dict[str, tuple[int, float]]]:
    """Pass 1 of the merge: each ranked subset's difficulty cuts (subset -> template -> cut).

    Streams the shard records and keeps only each task's (score, tie_break), so no scene spec
    is held: pass 2 labels each scene with its subset's cuts as it goes
    (:func:`rose_gen.scene.difficulty.apply_cuts`), the same labels a whole-subset
    :func:`~rose_gen.scene.difficulty.rank_difficulty` gives.
    """
    records = (record["scene"] for _, record in _release_records(shards, total))
    cuts: dict[str, dict[str, tuple[int, float]]] = {}
    for subset, scenes in groupby(records, key=lambda scene: scene["subset"]):
        share = shares.get(subset)
        inputs = (scene["difficulty_inputs"] for scene in scenes)
        if share is None:
            for _ in inputs:  # consumed, so every record is checked
                pass
            continue
        cuts[subset] = difficulty_cuts(inputs, share)
    return cuts


def merge_shards(folders: Sequence[Path], output_dir: Path, *, overwrite: bool = False,
                 workers: int = 1) -> tuple[Path, bool, int]:
    """Merge shard folders into the release at ``output_dir`` atomically: (path, written, scenes).

    Two passes over the shard records: the ranked subsets' difficulty cuts
    (:func:`ranked_cuts`), then each scene's images and rows in release order. Memory holds
    one record per shard and the writer's counters, whatever the release size. At most
    ``workers`` Parquet files are open at once on commit (1: one at a time, the flattest
    memory); the bytes do not depend on it.
    """
    from rose_gen.release.config import ConfigError, config_from_recorded

    shards = load_shards(expand_shard_args(folders))
    summary = shards[0].summary
    total = int(summary["shard"]["release_scenes"])
    try:
        recorded = config_from_recorded(summary["config"])
    except ConfigError as exc:
        raise ReleaseError(f"{shards[0].folder}: {exc}") from None
    info = ReleaseInfo(config=summary["config"], versions=summary["versions"], assets=summary["assets"],
                       attributions=summary["attributions"], dataset_name=summary["dataset"])
    check_target(output_dir, overwrite=overwrite, config=info.config)
    cuts = ranked_cuts(shards, total, hard_shares(recorded.plans))
    with ReleaseWriter(output_dir, recorded.export, overwrite=overwrite, parquet_writers=workers) as writer:
        for shard, record in _release_records(shards, total):
            for rel, sha in record["images"].items():
                writer.link_file(rel, shard.folder / rel, sha, str(shard.folder))
            scene = SceneSpec.from_json(record["scene"])
            if scene.subset in cuts:
                scene = apply_cuts(scene, cuts[scene.subset])
            color = record["cue_color"]
            writer.add_rows(rows_of(scene, None if color is None else tuple(color)))
        path, written = writer.commit(info)
    return path, written, total
