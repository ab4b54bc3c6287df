"""The atomic release writer.

A release is written into a temporary sibling directory and renamed into place at the
end, so a failed or interrupted run leaves nothing half-written. An existing directory is
only replaced when ``overwrite`` is set, or when the new release is byte-identical to it
(then it is left untouched).

Scenes are written as they arrive: images and JSONL rows go to disk at once and every
file is hashed on its way there; memory holds counters, column types and hashes, not
rows or images. The Parquet files are streamed on commit from the JSONL and the images
(:mod:`rose_gen.release.parquet`). The same writer assembles a merge of shards
(:mod:`rose_gen.release.merge`), so both give the same bytes.

Layout (all paths relative to the release root, forward slashes)::

    images/<subset>/<image_id>.png                     base (2k-1) and cue (2k) images
    metadata_dev.jsonl, metadata_test.jsonl            the main task rows, five per scene
    analysis/global_click/metadata_{dev,test}.jsonl    T1B_CLICK_GLOBAL bridge rows
    analysis/matched_local_count/metadata_{dev,test}.jsonl   T2B_COUNT_LOCAL_MATCHED rows
    analysis/controls/<control>/...                    interface controls, only with export.controls
                                                       (rose_gen.release.controls)
    data/dev.parquet, data/test.parquet                main rows + an ``image`` column (HF Image);
                                                       or data/<split>-0000k-of-0000n.parquet
    README.md                                          dataset card (configs + explicit features)
    LICENSES.md                                        asset families and their licences
    export_summary.json                                counts, config, versions, sha256 of every file

Nothing written depends on the time, the host, the output path or the worker count.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Container, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rose_eval.vocab import SPLITS, TEMPLATE_ORDER, ordered_subsets
from rose_gen.core.schema import SceneRows
from rose_gen.release.card import dataset_card, licenses_text
from rose_gen.release.features import ColumnCollector, describe
from rose_gen.release.folder import AtomicFolder, ReleaseError, json_line, line_starts
from rose_gen.release.parquet import (
    DEFAULT_MAX_BYTES_PER_GROUP,
    parquet_names,
    read_rows,
    write_parquet,
)

CARD_FILE = "README.md"


LICENSES_FILE = "LICENSES.md"


# Where each bridge template's rows go (v0.1's analysis folders).
BRIDGE_DIRS: dict[str, str] = {
    "T1B_CLICK_GLOBAL": "analysis/global_click",
    "T2B_COUNT_LOCAL_MATCHED": "analysis/matched_local_count",
}


@dataclass(frozen=True)
class ExportSettings:
    """Export knobs (see ``conf/export/default.yaml``)."""

    parquet: bool = True
    parquet_rows_per_group: int = 64
    parquet_max_bytes_per_group: int = DEFAULT_MAX_BYTES_PER_GROUP  # image bytes per row group (0: no bound)
    parquet_compression: str = "zstd"
    bridges: bool = True
    parquet_rows_per_file: int = 0  # 0: one data/<split>.parquet; n: HF-style files of at most n rows
    parquet_max_rows_per_file: int = 6000  # with 0 above: larger splits get HF-style files of this many rows
    controls: tuple[str, ...] = ()  # interface controls written under analysis/controls/ (rose_gen.release.controls)

    def rows_per_file(self, split_rows: Sequence[int]) -> int:
        """Rows per Parquet file for a release whose splits have ``split_rows`` rows (0: one file per split).

        A Parquet writer keeps every row group's metadata (~100 KB for our ~120 columns) until
        the file is closed, so one file per split would make the export's memory grow with the
        release: past ``parquet_max_rows_per_file`` rows in some split, every split is written
        as Hugging Face-style files of that many rows.
        """
        if self.parquet_rows_per_file > 0:
            return self.parquet_rows_per_file
        cap = self.parquet_max_rows_per_file
        return cap if cap > 0 and max(split_rows, default=0) > cap else 0

    @property
    def file_rows_step(self) -> int:
        """Row step at which JSONL offsets are recorded (where a Parquet file may start)."""
        return self.parquet_rows_per_file or self.parquet_max_rows_per_file


@dataclass(frozen=True)
class ReleaseInfo:
    """Everything the summary records besides rows and files.

    ``config`` is the composed generation config without run-only keys; ``versions`` the
    package, renderer and library versions; ``assets`` per source the sha256 of every
    asset file it read; ``attributions`` the asset families with their licences.
    """

    config: Mapping[str, Any]
    versions: Mapping[str, Any]
    assets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    attributions: Sequence[Mapping[str, Any]] = ()
    dataset_name: str = "ROSE"


class _JsonlSink:
    """One JSONL file written line by line and hashed on the way.

    ``offsets[k]`` is the byte offset of row ``k * every`` (where each Parquet file's rows start).
    """

    def __init__(self, path: Path, every: int = 0) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed by ReleaseRows.close
        self.digest = hashlib.sha256()
        self.rows = 0
        self.size = 0
        self.every = every
        self.offsets = [0]

    def write(self, row: Mapping[str, Any]) -> None:
        if self.every and self.rows and self.rows % self.every == 0:
            self.offsets.append(self.size)
        data = (json_line(row) + "\n").encode("utf-8")
        self.digest.update(data)
        self.fh.write(data)
        self.rows += 1
        self.size += len(data)

    def append_file(self, path: Path, rows: int) -> None:
        """Append the ``rows`` lines of the JSONL file ``path``: the same bytes, hash and offsets as
        writing its rows here one by one."""
        first, base, step, ends = self.rows, self.size, self.every, 0
        if step and first and rows and first % step == 0:
            self.offsets.append(base)
        # the file's rows first + j (0 < j < rows) that start a step; row first + j starts its line j
        wanted = range((first // step + 1) * step - first, rows, step) if step else ()
        with open(path, "rb") as fh:
            for block, n, starts in line_starts(fh, wanted):
                self.offsets += [base + at for at in starts]
                self.digest.update(block)
                self.fh.write(block)
                self.size += len(block)
                ends += n
        if ends != rows:
            raise ReleaseError(f"{path} holds {ends} rows, not the {rows} written to it; it was changed meanwhile")
        self.rows += rows

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()


@dataclass(frozen=True)
class RowsPart:
    """The rows :class:`ReleaseRows` wrote for a run of scenes into files of its own (in a worker
    process), to be appended to the release's with :meth:`ReleaseRows.extend`: small (no rows)."""

    files: Mapping[str, tuple[Path, int]]  # release path -> (the part's file, its rows)
    columns: Mapping[str, ColumnCollector]
    scene_counts: Counter[tuple[str, str]]
    task_counts: Counter[tuple[str, str, str]]
    bridge_counts: Counter[tuple[str, str]]


class ReleaseRows:
    """A release's task rows as its scenes arrive: each JSONL file written and hashed on the way,
    the column types and the counts; no rows are kept.

    ``target`` gives the file a release path is written to; ``files`` holds the images stored so
    far (a row must name one). :meth:`part` and :meth:`extend` join the rows of runs of scenes
    written apart (by the merge's worker processes), in order, into the same bytes.
    """

    def __init__(self, settings: ExportSettings, target: Callable[[str], Path], files: Container[str]) -> None:
        self.settings, self.target, self.files = settings, target, files
        self.sinks: dict[str, _JsonlSink] = {}
        self.columns = {s: ColumnCollector() for s in SPLITS}
        self.scene_counts: Counter[tuple[str, str]] = Counter()
        self.task_counts: Counter[tuple[str, str, str]] = Counter()
        self.bridge_counts: Counter[tuple[str, str]] = Counter()

    def sink(self, rel: str) -> _JsonlSink:
        """The JSONL file at release path ``rel`` (opened on first use)."""
        if rel not in self.sinks:
            every = self.settings.file_rows_step if rel in {main_file(s) for s in SPLITS} else 0
            self.sinks[rel] = _JsonlSink(self.target(rel), every)
        return self.sinks[rel]

    def add(self, rows: SceneRows) -> None:
        """Append one scene's main and bridge rows (its images must be stored already)."""
        for row in rows.main:
            if row["image"] not in self.files:
                raise ReleaseError(f"row {row['item_id']} names image {row['image']} that the scene did not render")
            split = _split_of(row)
            self.sink(main_file(split)).write(row)
            self.columns[split].add(row)
            self.task_counts[(row["rose_subset"], split, row["task_template"])] += 1
        if rows.main:
            self.scene_counts[(rows.main[0]["rose_subset"], _split_of(rows.main[0]))] += 1
        for template, bridge in rows.bridges.items():
            if template not in BRIDGE_DIRS:
                raise ReleaseError(f"bridge template {template} has no analysis folder; known: {sorted(BRIDGE_DIRS)}")
            for row in bridge:
                split = _split_of(row)
                self.bridge_counts[(template, split)] += 1
                if self.settings.bridges:
                    self.sink(f"{BRIDGE_DIRS[template]}/metadata_{split}.jsonl").write(row)

    def close(self) -> None:
        for sink in self.sinks.values():
            sink.close()

    def part(self) -> RowsPart:
        """What :meth:`extend` needs to append these rows to another :class:`ReleaseRows` (closes the files)."""
        self.close()
        return RowsPart({rel: (sink.path, sink.rows) for rel, sink in self.sinks.items()}, self.columns,
                        self.scene_counts, self.task_counts, self.bridge_counts)

    def extend(self, part: RowsPart) -> None:
        """Append ``part``'s rows after these, as if its scenes had been added here (its files are removed)."""
        for rel, (path, rows) in part.files.items():
            self.sink(rel).append_file(path, rows)
            path.unlink()
        for split, collector in part.columns.items():
            self.columns[split] = self.columns[split].then(collector)
        self.scene_counts.update(part.scene_counts)
        self.task_counts.update(part.task_counts)
        self.bridge_counts.update(part.bridge_counts)


def main_file(split: str) -> str:
    """Release path of a split's main rows."""
    return f"metadata_{split}.jsonl"


class ReleaseWriter(AtomicFolder):
    """Writes a release as its scenes arrive: images and JSONL rows at once, the rest on commit.

    Memory holds counters, the column types and the file hashes, not the rows: Parquet is
    written on commit from the JSONL and the images on disk, in row groups.
    """

    def __init__(self, output_dir: Path, settings: ExportSettings, *, overwrite: bool = False,
                 parquet_writers: int = 2) -> None:
        super().__init__(output_dir, overwrite=overwrite)
        self.settings = settings
        # Parquet files written at once on commit. Each open pq.ParquetWriter holds its file's
        # row-group metadata (~70 KB a row group) and its own buffers until it closes, so this
        # bounds the commit's memory; 1 writes one file at a time (the merge's default).
        self.parquet_writers = max(1, int(parquet_writers))
        self.open_parquet_peak = 0  # most Parquet files open at once during commit (tests check the bound)
        self._task_rows: ReleaseRows | None = None  # made on __enter__ (a row checks its image in self.files)

    def __enter__(self) -> ReleaseWriter:
        super().__enter__()
        self._task_rows = ReleaseRows(self.settings, self.target, self.files)
        return self

    @property
    def task_rows(self) -> ReleaseRows:
        """The release's task rows so far."""
        assert self._task_rows is not None, "use ReleaseWriter as a context manager"
        return self._task_rows

    def close(self) -> None:
        if self._task_rows is not None:
            self._task_rows.close()

    def _sink(self, rel: str) -> _JsonlSink:
        return self.task_rows.sink(rel)

    def main_file(self, split: str) -> str:
        """Release path of a split's main rows."""
        return main_file(split)

    def add_file(self, rel_path: str, data: bytes) -> None:
        """Store one extra file at ``rel_path`` (release-relative, forward slashes) in the release.

        It is listed with its sha256 in the summary like every other file. A path that is
        absolute or leaves the release is refused.
        """
        self.write_file(rel_path, data)

    def add_scene(self, rows: SceneRows, images: Mapping[str, bytes]) -> None:
        """Store one scene: its images by release path and its main and bridge rows."""
        self.add_images(images)
        self.add_rows(rows)

    def add_images(self, images: Mapping[str, bytes]) -> None:
        """Store one scene's images by release path (its rows follow with :meth:`add_rows`)."""
        for rel, data in images.items():
            self.write_file(rel, data)

    def add_rows(self, rows: SceneRows) -> None:
        """Append one scene's main and bridge rows (its images must be stored already)."""
        self.task_rows.add(rows)

    def commit(self, info: ReleaseInfo) -> tuple[Path, bool]:
        """Write Parquet, card, licences and summary; move into place.

        Returns (release path, True) when written, (path, False) when an identical
        release was already there and left untouched.
        """
        assert self.tmp is not None, "use ReleaseWriter as a context manager"
        tmp, task = self.tmp, self.task_rows
        for split in SPLITS:  # every JSONL file exists, even without rows
            self._sink(self.main_file(split))
            if self.settings.bridges:
                for folder in BRIDGE_DIRS.values():
                    self._sink(f"{folder}/metadata_{split}.jsonl")
        self.close()
        control_counts = self._write_controls(info)
        for rel, sink in task.sinks.items():
            self.files[rel] = sink.digest.hexdigest()
        columns = task.columns["dev"].then(task.columns["test"]).columns()
        parquet_files: dict[str, list[str]] = {}
        s = replace(self.settings, parquet_rows_per_file=self.settings.rows_per_file(
            [task.sinks[self.main_file(split)].rows for split in SPLITS]))
        if s.parquet:  # every file a job, at most parquet_writers at once (pyarrow compresses without the GIL)
            jobs = []
            for split in SPLITS:
                sink = task.sinks[self.main_file(split)]
                names = parquet_names(split, sink.rows, s.parquet_rows_per_file)
                parquet_files[split] = [rel for rel, _, _ in names]
                jobs += [(rel, read_rows(sink.path, offset, stop - start))
                         for (rel, start, stop), offset in zip(names, sink.offsets[:len(names)], strict=True)]
            open_now = [0]
            lock = threading.Lock()

            def write_one(rel: str, rows: Any) -> str:
                with lock:
                    open_now[0] += 1
                    self.open_parquet_peak = max(self.open_parquet_peak, open_now[0])
                try:
                    return write_parquet(tmp, rel, rows, columns, rows_per_group=s.parquet_rows_per_group,
                                         max_bytes_per_group=s.parquet_max_bytes_per_group,
                                         compression=s.parquet_compression)
                finally:
                    with lock:
                        open_now[0] -= 1

            if self.parquet_writers == 1 or len(jobs) <= 1:
                for rel, rows in jobs:
                    self.files[rel] = write_one(rel, rows)
            else:
                with ThreadPoolExecutor(min(len(jobs), self.parquet_writers)) as pool:
                    done = [(rel, pool.submit(write_one, rel, rows)) for rel, rows in jobs]
                    for rel, job in done:
                        self.files[rel] = job.result()
        counts = self._counts()
        if control_counts:  # only with controls on: a release without them is unchanged
            counts["control_rows"] = control_counts
        self.write_file(CARD_FILE, dataset_card(info, columns, counts, s, parquet_files).encode("utf-8"))
        self.write_file(LICENSES_FILE, licenses_text(info).encode("utf-8"))
        self.write_summary({
            "dataset": info.dataset_name,
            "counts": counts,
            "columns": {name: describe(t) for name, t in columns},
            "config": info.config,
            "versions": info.versions,
            "assets": info.assets,
            "files": self.sorted_files(),
        })
        return self.move_into_place()

    def _write_controls(self, info: ReleaseInfo) -> dict[str, dict[str, int]]:
        """The interface controls' rows, images and Parquet (none unless ``settings.controls``)."""
        if not self.settings.controls:
            return {}
        from rose_gen.release.controls import write_controls
        from rose_gen.render.png import LEGACY_PNG_ENCODER

        render = info.config.get("render") or {}
        level = int(render.get("png_compress_level", 1))
        return write_controls(self, self.settings, level, str(render.get("png_encoder", LEGACY_PNG_ENCODER)))

    def _counts(self) -> dict[str, Any]:
        task = self.task_rows
        subsets = ordered_subsets(s for s, _ in task.scene_counts)
        tasks: dict[str, dict[str, dict[str, int]]] = {}
        for subset in subsets:
            tasks[subset] = {}
            for split in SPLITS:
                per = {t: task.task_counts[(subset, split, t)] for t in TEMPLATE_ORDER}
                tasks[subset][split] = {t: n for t, n in per.items() if n}
        rows = {sp: task.sinks[self.main_file(sp)].rows for sp in SPLITS}
        return {
            "scenes": {s: {sp: task.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "images": {s: {sp: 2 * task.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "tasks": tasks,
            "rows": rows,
            "bridge_rows": {t: {sp: task.bridge_counts[(t, sp)] for sp in SPLITS}
                            for t in BRIDGE_DIRS} if self.settings.bridges else {},
        }


def _split_of(row: Mapping[str, Any]) -> str:
    split = row.get("split")
    if split not in SPLITS:
        raise ReleaseError(f"row {row.get('item_id')} has split {split!r}; expected one of {', '.join(SPLITS)}")
    return split
