"""``rose-gen merge``: assemble shard folders into the release, byte-identical to a single run.

The shards must be exactly shards 0..n-1 of one release: the same count, config,
versions, assets and attributions, each index once. Their scenes are merged by release
position (a streaming k-way merge: one scene per shard in memory) into the same
:class:`~rose_gen.release.export.ReleaseWriter` a single run uses, so rows, counts, columns,
Parquet, card, licences and summary come out the same. Images are hard-linked from the
shards when they share a file system (copied otherwise) after their sha256 is checked.

A subset's scenes are one run of release positions, so one run of lines in each shard's
``scenes.jsonl``: the subsets are merged one by one (``--workers 1``) or by up to ``--workers``
processes at once, each writing its subsets' rows to files of its own that are appended to
the release's in release order (:meth:`~rose_gen.release.export.ReleaseRows.extend`), so the
bytes do not depend on the worker count.
"""

from __future__ import annotations

import heapq
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rose_gen.core.schema import SceneRows, SceneSpec
from rose_gen.release.export import (
    ExportSettings,
    ReleaseInfo,
    ReleaseRows,
    ReleaseWriter,
    RowsPart,
)
from rose_gen.release.folder import FolderShare, ReleaseError, check_target, sha256_path
from rose_gen.release.processes import spawn_pool
from rose_gen.release.ranked_rows import rows_of
from rose_gen.release.shards import (
    SCENES_FILE,
    SHARD_FORMAT,
    SHARD_SUMMARY,
    read_shard_summary,
    scene_line_offsets,
    shard_records,
)
from rose_gen.scene.difficulty import apply_cuts, difficulty_cuts

if TYPE_CHECKING:
    from rose_gen.scene.plan import SubsetPlan

# Tests only: a folder where each subset's merge leaves an empty file named <process id>-<subset>, and
# how many processes must have left one before any subset goes on (tests/rose_gen/release/test_merge.py:
# the subsets really ran in several processes at once).
PIDS_ENV, MEET_ENV = "ROSE_GEN_TEST_MERGE_PIDS", "ROSE_GEN_TEST_MERGE_MEET"
PARTS_DIR = ".rose-merge-parts"  # the worker processes' rows, inside the partial release folder

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


@dataclass(frozen=True)
class Span:
    """One subset's scenes: release positions ``start`` to ``stop - 1``, and for each shard (by
    index) the lines of its ``scenes.jsonl`` that hold them: (first line, its byte offset, lines)."""

    subset: str
    start: int
    stop: int
    hard_share: float | None  # None: labels by threshold, no ranking
    lines: tuple[tuple[int, int, int], ...]


def subset_spans(shards: Sequence[Shard], plans: Sequence[SubsetPlan], total: int) -> list[Span]:
    """Each subset's :class:`Span` in release order (subsets in config order); one read of each
    shard's scenes file, no JSON decoded. A shard holding more or fewer lines than its scenes is refused."""
    count = shards[0].count
    if sum(plan.n_scenes for plan in plans) != total:
        raise ReleaseError(f"{shards[0].folder}: the shard summary counts {total} scenes, its config "
                           f"{sum(plan.n_scenes for plan in plans)}; the shard is damaged: regenerate it")
    bounds, start = [], 0
    for plan in plans:
        bounds.append((plan.subset, start, start + plan.n_scenes, plan.difficulty.hard_share))
        start += plan.n_scenes
    per_shard = []
    for shard in shards:
        firsts = [len(range(shard.index, a, count)) for _, a, _, _ in bounds]
        offsets, lines = scene_line_offsets(shard.folder, firsts)
        if lines != len(range(shard.index, total, count)):
            raise ReleaseError(f"{shard.folder}: {SCENES_FILE} holds {lines} scenes where shard {shard.index} of "
                               f"{count} has {len(range(shard.index, total, count))}; the shard is damaged: "
                               f"regenerate shard {shard.index}")
        per_shard.append([(first, offset, len(range(shard.index, b, count)) - first)
                          for first, offset, (_, _, b, _) in zip(firsts, offsets, bounds, strict=True)])
    return [Span(subset, a, b, share, tuple(lines[k] for lines in per_shard))
            for k, (subset, a, b, share) in enumerate(bounds)]


def _records(folder: Path, index: int, lines: tuple[int, int, int]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    for record in shard_records(folder, *lines):
        yield int(record["position"]), index, record


def _span_records(folders: Sequence[Path], span: Span) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The scene records of ``span`` in release order, each with its shard folder (``folders`` by
    index; one record per shard in memory); a scene missing, twice, in the wrong shard or of
    another subset is refused."""
    count = len(folders)
    expected = span.start
    streams = (_records(folder, i, lines) for i, (folder, lines) in enumerate(zip(folders, span.lines, strict=True)))
    for position, index, record in heapq.merge(*streams, key=lambda t: t[0]):
        folder = folders[index]
        if position % count != index or position < expected:
            raise ReleaseError(f"{folder}: holds the scene at position {position} twice or of another "
                               f"shard; the shard is damaged: regenerate shard {index}")
        if position != expected:
            raise ReleaseError(f"{folders[expected % count]}: misses the scene at position {expected}; the shard is "
                               f"incomplete: regenerate shard {expected % count}")
        if record["scene"].get("subset") != span.subset:
            raise ReleaseError(f"{folder}: holds a scene of {record['scene'].get('subset')!r} at position {position}, "
                               f"where the config has {span.subset}; the shard is damaged: regenerate shard {index}")
        yield folder, record
        expected += 1
    if expected != span.stop:
        raise ReleaseError(f"{folders[expected % count]}: misses the scene at position {expected}; the shard is "
                           f"incomplete: regenerate shard {expected % count}")


class _Target(Protocol):
    """Where a subset's merge puts its scenes: the release writer, or a worker's share of it."""

    def link_file(self, rel_path: str, source: Path, sha256: str, where: str) -> None: ...

    def add_rows(self, rows: SceneRows) -> None: ...


def merge_span(folders: Sequence[Path], span: Span, target: _Target) -> None:
    """One subset's scenes into ``target``, in release order: each scene's images, then its rows,
    labelled under the subset's difficulty cuts when it is ranked (a first pass over its records
    keeps only each task's (score, tie_break): :func:`~rose_gen.scene.difficulty.difficulty_cuts`)."""
    _record_process(span.subset)
    cuts = None
    if span.hard_share is not None:
        cuts = difficulty_cuts((record["scene"]["difficulty_inputs"] for _, record in _span_records(folders, span)),
                               span.hard_share)
    for folder, record in _span_records(folders, span):
        for rel, sha in record["images"].items():
            target.link_file(rel, folder / rel, sha, str(folder))
        scene = SceneSpec.from_json(record["scene"])
        if cuts is not None:
            scene = apply_cuts(scene, cuts)
        color = record["cue_color"]
        target.add_rows(rows_of(scene, None if color is None else tuple(color)))


def _record_process(subset: str) -> None:
    """Tests only (:data:`PIDS_ENV`): say which process merges ``subset``; wait (at most a minute) until
    :data:`MEET_ENV` processes have said so."""
    folder = os.environ.get(PIDS_ENV)
    if not folder:
        return
    (Path(folder) / f"{os.getpid()}-{subset}").touch()
    deadline = time.monotonic() + 60
    while (len({p.name.split("-")[0] for p in Path(folder).iterdir()}) < int(os.environ.get(MEET_ENV, "0"))
           and time.monotonic() < deadline):
        time.sleep(0.01)


class _Share(FolderShare):
    """A worker process's share of the release: images linked into its partial folder, rows into
    files of the share's own (``folder``)."""

    def __init__(self, partial: Path, folder: Path, settings: ExportSettings) -> None:
        folder.mkdir(parents=True)
        super().__init__(partial, folder / "files.sqlite")
        self.rows = ReleaseRows(settings, lambda rel: _part_file(folder, rel), self.files)

    def add_rows(self, rows: SceneRows) -> None:
        self.rows.add(rows)

    def close(self) -> None:
        """Close the row files, and the index unless :meth:`keep` has (then it is deleted: a failure)."""
        self.rows.close()
        self._close_index()


def _part_file(folder: Path, rel: str) -> Path:
    path = folder / "rows" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _merge_span_apart(folders: tuple[Path, ...], span: Span, partial: Path, folder: Path,
                      settings: ExportSettings) -> tuple[RowsPart, Path]:
    """:func:`merge_span` in a worker process: (its rows, its file index) for the release writer to take in."""
    share = _Share(partial, folder, settings)
    try:
        merge_span(folders, span, share)
        return share.rows.part(), share.keep()
    finally:
        share.close()


def merge_rows(folders: Sequence[Path], spans: Sequence[Span], writer: ReleaseWriter, workers: int) -> None:
    """Every subset's images and rows into ``writer``, in release order: one subset after the other
    here (``workers`` 1), or up to ``workers`` subsets at once in as many processes, whose rows are
    appended to the writer's in release order as each is done (the same bytes)."""
    n = min(workers, len(spans))
    if n <= 1:
        for span in spans:
            merge_span(folders, span, writer)
        return
    assert writer.tmp is not None
    parts = writer.tmp / PARTS_DIR
    # spawn, as the rendering workers: a fresh interpreter whatever threads this process runs
    # (a Hydra launcher's, say); the worker imports only what the rows need
    with spawn_pool(n) as pool:
        jobs = [pool.apply_async(_merge_span_apart, (tuple(folders), span, writer.tmp, parts / str(k), writer.settings))
                for k, span in enumerate(spans)]
        for job in jobs:
            part, index = job.get()
            writer.take_files(index)
            writer.task_rows.extend(part)
        pool.close()
        pool.join()
    shutil.rmtree(parts)


def merge_shards(folders: Sequence[Path], output_dir: Path, *, overwrite: bool = False,
                 workers: int = 1) -> tuple[Path, bool, int]:
    """Merge shard folders into the release at ``output_dir`` atomically: (path, written, scenes).

    Subset by subset (:func:`merge_rows`; up to ``workers`` at once), each in two passes over
    its records: its difficulty cuts when it is ranked, then each scene's images and rows. Memory
    holds one record per shard and the writer's counters, whatever the release size. At most
    ``workers`` Parquet files are open at once on commit; the bytes do not depend on ``workers``.
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
    spans = subset_spans(shards, recorded.plans, total)
    with ReleaseWriter(output_dir, recorded.export, overwrite=overwrite, parquet_writers=workers) as writer:
        merge_rows([shard.folder for shard in shards], spans, writer, workers)
        path, written = writer.commit(info)
    return path, written, total
