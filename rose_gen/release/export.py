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
    data/dev.parquet, data/test.parquet                main rows + an ``image`` column (HF Image);
                                                       or data/<split>-0000k-of-0000n.parquet
    README.md                                          dataset card (configs + explicit features)
    LICENSES.md                                        asset families and their licences
    export_summary.json                                counts, config, versions, sha256 of every file

Nothing written depends on the time, the host, the output path or the worker count.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rose_eval.vocab import SPLITS, TEMPLATE_ORDER, ordered_subsets
from rose_gen.core.schema import SceneRows
from rose_gen.release.card import dataset_card, licenses_text
from rose_gen.release.features import ColumnCollector, describe
from rose_gen.release.parquet import parquet_names, read_rows, write_parquet

SUMMARY_FILE = "export_summary.json"
CARD_FILE = "README.md"
LICENSES_FILE = "LICENSES.md"

# Where each bridge template's rows go (v0.1's analysis folders).
BRIDGE_DIRS: dict[str, str] = {
    "T1B_CLICK_GLOBAL": "analysis/global_click",
    "T2B_COUNT_LOCAL_MATCHED": "analysis/matched_local_count",
}


class ReleaseError(RuntimeError):
    """The release cannot be written (one-line message saying what to do)."""


@dataclass(frozen=True)
class ExportSettings:
    """Export knobs (see ``conf/export/default.yaml``)."""

    parquet: bool = True
    parquet_rows_per_group: int = 64
    parquet_compression: str = "zstd"
    bridges: bool = True
    parquet_rows_per_file: int = 0  # 0: one data/<split>.parquet; n: HF-style files of at most n rows


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


def json_line(row: Mapping[str, Any]) -> str:
    """The release's JSONL encoding of one row (compact, UTF-8 kept, key order kept)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def sha256_path(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_files(root: Path) -> list[str]:
    """Every file under ``root`` as sorted release-relative paths (the summary excluded)."""
    files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(f for f in files if f != SUMMARY_FILE)


def read_summary(root: Path) -> dict[str, Any] | None:
    """The release summary at ``root``, or None when ``root`` holds no release."""
    return read_json(root / SUMMARY_FILE)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON summary file's content, or None when there is no such file."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path} is not valid JSON ({exc}); remove the directory or pass overwrite=true") from None


def check_target(output_dir: Path, *, overwrite: bool, config: Mapping[str, Any]) -> None:
    """Refuse early when ``output_dir`` holds something a new release must not replace."""
    if overwrite or not output_dir.exists():
        return
    if not output_dir.is_dir():
        raise ReleaseError(f"output_dir {output_dir} exists and is not a directory")
    if not any(output_dir.iterdir()):
        return
    summary = read_summary(output_dir)
    if summary is None:
        raise ReleaseError(f"output_dir {output_dir} is not empty and holds no ROSE release; "
                           "choose another directory or pass overwrite=true")
    if summary.get("config") != json.loads(json.dumps(config)):
        raise ReleaseError(f"output_dir {output_dir} holds a release made with a different config; "
                           "choose another directory or pass overwrite=true")


class AtomicFolder:
    """A folder written into a temporary sibling directory and renamed into place on commit.

    Files are hashed as they are written (:meth:`write_file`, :meth:`link_file`), so the
    summary needs no second read. An existing non-empty target is replaced only with
    ``overwrite``, or left untouched when the new folder's summary is byte-identical.
    """

    summary_file = SUMMARY_FILE

    def __init__(self, output_dir: Path, *, overwrite: bool = False) -> None:
        self.output_dir = Path(output_dir).absolute()
        self.overwrite = overwrite
        self.tmp: Path | None = None
        self.files: dict[str, str] = {}  # release path -> sha256 of every file written so far

    def __enter__(self) -> AtomicFolder:
        self.output_dir.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.output_dir.name}.partial-", dir=self.output_dir.parent))
        umask = os.umask(0)
        os.umask(umask)
        self.tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; a release is an ordinary folder
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
        if self.tmp is not None and self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp = None

    def close(self) -> None:
        """Close open files (subclasses); called on commit and on failure."""

    def target(self, rel_path: str) -> Path:
        """The temporary location of release path ``rel_path`` (parents created); bad paths are refused."""
        assert self.tmp is not None, f"use {type(self).__name__} as a context manager"
        parts = PurePosixPath(rel_path).parts
        if not parts or rel_path.startswith("/") or "\\" in rel_path or ".." in parts:
            raise ReleaseError(f"release file path {rel_path!r} must be relative, with forward slashes, "
                               "and stay inside the release")
        path = self.tmp.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write_file(self, rel_path: str, data: bytes) -> None:
        """Write ``data`` at ``rel_path`` and record its sha256."""
        self.target(rel_path).write_bytes(data)
        self.files[rel_path] = hashlib.sha256(data).hexdigest()

    def link_file(self, rel_path: str, source: Path, sha256: str, where: str) -> None:
        """Place ``source`` at ``rel_path`` (hard link, else copy) after checking its sha256.

        ``where`` names the source for the error message when the bytes do not match.
        """
        if sha256_path(source) != sha256:
            raise ReleaseError(f"{where}: {rel_path} does not match the sha256 recorded for it; the folder was "
                               "changed or damaged after it was written; regenerate it")
        dest = self.target(rel_path)
        try:
            os.link(source, dest)
        except OSError:
            shutil.copyfile(source, dest)
        self.files[rel_path] = sha256

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Write the summary file (not listed in itself)."""
        assert self.tmp is not None
        (self.tmp / self.summary_file).write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n",
                                                  encoding="utf-8")

    def sorted_files(self) -> dict[str, str]:
        """Every file written, by sorted release path (what the summary lists)."""
        return dict(sorted(self.files.items()))

    def move_into_place(self) -> tuple[Path, bool]:
        """Rename the finished folder into place; (path, False) when an identical one was there."""
        self.close()
        out, tmp = self.output_dir, self.tmp
        assert tmp is not None
        if out.exists() and any(out.iterdir()):
            old = read_json(out / self.summary_file)
            if old is not None and old.get("files") == self.sorted_files() and \
                    (out / self.summary_file).read_bytes() == (tmp / self.summary_file).read_bytes():
                return out, False
            if not self.overwrite:
                raise ReleaseError(f"output_dir {out} holds a different release; choose another directory "
                                   "or pass overwrite=true")
            trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, trash / out.name)
            os.replace(tmp, out)
            shutil.rmtree(trash)
        else:
            if out.exists():
                out.rmdir()
            os.replace(tmp, out)
        self.tmp = None
        return out, True


class _JsonlSink:
    """One JSONL file written line by line and hashed on the way.

    ``offsets[k]`` is the byte offset of row ``k * every`` (where each Parquet file's rows start).
    """

    def __init__(self, path: Path, every: int = 0) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed by ReleaseWriter.close
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

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()


class ReleaseWriter(AtomicFolder):
    """Writes a release as its scenes arrive: images and JSONL rows at once, the rest on commit.

    Memory holds counters, the column types and the file hashes, not the rows: Parquet is
    written on commit from the JSONL and the images on disk, in row groups.
    """

    def __init__(self, output_dir: Path, settings: ExportSettings, *, overwrite: bool = False) -> None:
        super().__init__(output_dir, overwrite=overwrite)
        self.settings = settings
        self.sinks: dict[str, _JsonlSink] = {}
        self.columns = {s: ColumnCollector() for s in SPLITS}
        self.scene_counts: Counter[tuple[str, str]] = Counter()
        self.task_counts: Counter[tuple[str, str, str]] = Counter()
        self.bridge_counts: Counter[tuple[str, str]] = Counter()

    def __enter__(self) -> ReleaseWriter:
        super().__enter__()
        return self

    def close(self) -> None:
        for sink in self.sinks.values():
            sink.close()

    def _sink(self, rel: str, every: int = 0) -> _JsonlSink:
        if rel not in self.sinks:
            self.sinks[rel] = _JsonlSink(self.target(rel), every)
        return self.sinks[rel]

    def main_file(self, split: str) -> str:
        """Release path of a split's main rows."""
        return f"metadata_{split}.jsonl"

    def add_file(self, rel_path: str, data: bytes) -> None:
        """Store one extra file at ``rel_path`` (release-relative, forward slashes) in the release.

        It is listed with its sha256 in the summary like every other file. A path that is
        absolute or leaves the release is refused.
        """
        self.write_file(rel_path, data)

    def add_scene(self, rows: SceneRows, images: Mapping[str, bytes]) -> None:
        """Store one scene: its images by release path and its main and bridge rows."""
        for rel, data in images.items():
            self.write_file(rel, data)
        self.add_rows(rows)

    def add_rows(self, rows: SceneRows) -> None:
        """Append one scene's main and bridge rows (its images must be stored already)."""
        for row in rows.main:
            if row["image"] not in self.files:
                raise ReleaseError(f"row {row['item_id']} names image {row['image']} that the scene did not render")
            split = _split_of(row)
            self._sink(self.main_file(split), self.settings.parquet_rows_per_file).write(row)
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
                    self._sink(f"{BRIDGE_DIRS[template]}/metadata_{split}.jsonl").write(row)

    def commit(self, info: ReleaseInfo) -> tuple[Path, bool]:
        """Write Parquet, card, licences and summary; move into place.

        Returns (release path, True) when written, (path, False) when an identical
        release was already there and left untouched.
        """
        assert self.tmp is not None, "use ReleaseWriter as a context manager"
        tmp = self.tmp
        for split in SPLITS:  # every JSONL file exists, even without rows
            self._sink(self.main_file(split))
            if self.settings.bridges:
                for folder in BRIDGE_DIRS.values():
                    self._sink(f"{folder}/metadata_{split}.jsonl")
        self.close()
        for rel, sink in self.sinks.items():
            self.files[rel] = sink.digest.hexdigest()
        columns = self.columns["dev"].then(self.columns["test"]).columns()
        parquet_files: dict[str, list[str]] = {}
        if self.settings.parquet:  # every file a job: pyarrow compresses and writes without the GIL
            s = self.settings
            jobs = []
            for split in SPLITS:
                sink = self.sinks[self.main_file(split)]
                names = parquet_names(split, sink.rows, s.parquet_rows_per_file)
                parquet_files[split] = [rel for rel, _, _ in names]
                jobs += [(rel, read_rows(sink.path, offset, stop - start))
                         for (rel, start, stop), offset in zip(names, sink.offsets, strict=True)]
            with ThreadPoolExecutor(max(2, min(len(jobs), os.cpu_count() or 2))) as pool:
                done = [(rel, pool.submit(write_parquet, tmp, rel, rows, columns, rows_per_group=s.parquet_rows_per_group,
                                          compression=s.parquet_compression)) for rel, rows in jobs]
                for rel, job in done:
                    self.files[rel] = job.result()
        counts = self._counts()
        self.write_file(CARD_FILE, dataset_card(info, columns, counts, self.settings, parquet_files).encode("utf-8"))
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

    def _counts(self) -> dict[str, Any]:
        subsets = ordered_subsets(s for s, _ in self.scene_counts)
        tasks: dict[str, dict[str, dict[str, int]]] = {}
        for subset in subsets:
            tasks[subset] = {}
            for split in SPLITS:
                per = {t: self.task_counts[(subset, split, t)] for t in TEMPLATE_ORDER}
                tasks[subset][split] = {t: n for t, n in per.items() if n}
        rows = {sp: self.sinks[self.main_file(sp)].rows for sp in SPLITS}
        return {
            "scenes": {s: {sp: self.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "images": {s: {sp: 2 * self.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "tasks": tasks,
            "rows": rows,
            "bridge_rows": {t: {sp: self.bridge_counts[(t, sp)] for sp in SPLITS}
                            for t in BRIDGE_DIRS} if self.settings.bridges else {},
        }


def _split_of(row: Mapping[str, Any]) -> str:
    split = row.get("split")
    if split not in SPLITS:
        raise ReleaseError(f"row {row.get('item_id')} has split {split!r}; expected one of {', '.join(SPLITS)}")
    return split
