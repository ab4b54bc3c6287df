"""Shards: which scenes a shard makes, and the shard folder it writes them to.

A release of N scenes has a fixed scene order (subsets in config order, then scene
index); a scene's *position* is its place in that order, 0..N-1. With ``shard.count=n``,
shard ``i`` makes exactly the scenes whose position p has ``p % n == i`` (round robin:
every shard gets a share of every subset, so shards take about equally long). The rule
depends on nothing but (position, n): not on workers, hosts or the order jobs run in.
A shard draws and renders only its own scenes (any scene can be drawn alone). Difficulty
labels ranked over a whole subset (``difficulty.hard_share``) are not known to a shard, so
it records each scene's spec as drawn and ``rose-gen merge`` ranks the subsets and builds
the rows (:class:`rose_gen.release.ranked_rows.RankedRows`, as a single run does).

A shard folder (``<shard.dir>/shard-<i>-of-<n>``, written atomically like a release)::

    images/<subset>/<image_id>.png      the shard's images, as in the release
    scenes.jsonl                        one line per scene, by position: its images' sha256, its spec
                                        as drawn (difficulty not yet ranked) and its cue colour
    shard_summary.json                  index, count, the release's config, versions, assets,
                                        attributions, and the sha256 of every file

``rose-gen merge`` (:mod:`rose_gen.release.merge`) assembles shards into the release.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from rose_eval.jsonl import READ_FIX, JsonlFault, json_object
from rose_gen.core.schema import SceneSpec
from rose_gen.release.export import ReleaseInfo
from rose_gen.release.folder import AtomicFolder, ReleaseError, json_line, line_starts, read_json

SHARD_SUMMARY = "shard_summary.json"
SCENES_FILE = "scenes.jsonl"
SHARD_FORMAT = 2  # 2: scene records hold the drawn spec; the merge ranks and builds rows
ASSIGNMENT = "scene position % shard count"
# Tests only: shard <i> kills its own process with SIGKILL after writing its first scene, as the
# kernel's out-of-memory killer would (tests/rose_gen/cli/test_hydra_app.py).
KILL_SHARD_ENV = "ROSE_GEN_TEST_KILL_SHARD"
_FIX = "make this shard again"


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` of ``count``, written under ``root`` (the folder of shard folders)."""

    index: int
    count: int
    root: Path
    keep: bool = False

    @property
    def folder(self) -> Path:
        """This shard's folder."""
        return self.root / shard_name(self.index, self.count)

    def owns(self, position: int) -> bool:
        """Whether the scene at release ``position`` belongs to this shard."""
        return position % self.count == self.index

    def size(self, total: int) -> int:
        """How many of ``total`` scenes this shard makes."""
        return len(range(self.index, total, self.count))


def shard_name(index: int, count: int) -> str:
    """Folder name of shard ``index`` of ``count`` (also ``hydra.sweep.subdir`` in conf/config.yaml)."""
    return f"shard-{index}-of-{count}"


def partial_folders(root: Path, count: int, index: int | None = None) -> list[Path]:
    """The temporary ``.shard-<i>-of-<count>.partial-*`` folders under ``root`` that a killed shard left
    (of shard ``index`` only, when given); a shard's own writer removes its folder on any other failure."""
    name = shard_name(index, count) if index is not None else f"shard-*-of-{count}"
    return sorted(p for p in Path(root).glob(f".{name}.partial-*") if p.is_dir())


def remove_partial_folders(root: Path, count: int, index: int | None = None) -> None:
    """Remove what :func:`partial_folders` finds (one process per shard at a time is assumed)."""
    for folder in partial_folders(root, count, index):
        shutil.rmtree(folder, ignore_errors=True)


class ShardWriter(AtomicFolder):
    """Writes one shard folder: images as they arrive, one ``scenes.jsonl`` line per scene."""

    summary_file = SHARD_SUMMARY

    def __init__(self, spec: ShardSpec, *, overwrite: bool = False) -> None:
        super().__init__(spec.folder, overwrite=overwrite)
        self.spec = spec
        self.fh: Any = None
        self.digest = hashlib.sha256()
        self.scenes = 0
        self.last = -1

    def __enter__(self) -> ShardWriter:
        super().__enter__()
        self.fh = open(self.target(SCENES_FILE), "wb")  # noqa: SIM115 - closed by close()
        return self

    def close(self) -> None:
        if self.fh is not None and not self.fh.closed:
            self.fh.close()

    def add_scene(self, position: int, images: Mapping[str, bytes], scene: SceneSpec,
                  cue_color: tuple[int, int, int] | None) -> None:
        """Store the scene at release ``position`` (positions must rise and belong to this shard): its
        images, and a record of their sha256, its spec as drawn and its cue colour (the merge builds
        its rows)."""
        if not self.spec.owns(position) or position <= self.last:
            raise ReleaseError(f"scene position {position} does not belong to shard {self.spec.index} of "
                               f"{self.spec.count} here (after {self.last})")
        for rel, data in images.items():
            self.write_file(rel, data)
        record = {"position": position, "images": {rel: self.files[rel] for rel in images},
                  "scene": scene.to_json(), "cue_color": None if cue_color is None else list(cue_color)}
        data = (json_line(record) + "\n").encode("utf-8")
        self.digest.update(data)
        self.fh.write(data)
        self.scenes += 1
        self.last = position
        if self.scenes == 1 and os.environ.get(KILL_SHARD_ENV) == str(self.spec.index):
            os.kill(os.getpid(), signal.SIGKILL)

    def commit(self, info: ReleaseInfo, release_scenes: int) -> tuple[Path, bool]:
        """Write the shard summary and move the folder into place."""
        self.close()
        self.files[SCENES_FILE] = self.digest.hexdigest()
        want = self.spec.size(release_scenes)
        if self.scenes != want:
            raise ReleaseError(f"shard {self.spec.index} of {self.spec.count} made {self.scenes} scenes, "
                               f"expected {want}")
        self.write_summary(shard_summary(self.spec, release_scenes, self.scenes, info, self.sorted_files()))
        return self.move_into_place()


def shard_summary(spec: ShardSpec, release_scenes: int, scenes: int, info: ReleaseInfo,
                  files: Mapping[str, str]) -> dict[str, Any]:
    """The shard summary: what the merge checks shards against each other with."""
    return {
        "shard": {"format": SHARD_FORMAT, "index": spec.index, "count": spec.count, "assignment": ASSIGNMENT,
                  "scenes": scenes, "release_scenes": release_scenes},
        "dataset": info.dataset_name,
        "config": info.config,
        "versions": info.versions,
        "assets": info.assets,
        "attributions": list(info.attributions),
        "files": dict(files),
    }


def read_shard_summary(folder: Path) -> dict[str, Any] | None:
    """The shard summary in ``folder``, or None when it holds none."""
    return read_json(folder / SHARD_SUMMARY)


def finished_shard(spec: ShardSpec, config: Mapping[str, Any]) -> bool:
    """Whether ``spec``'s folder already holds this shard of a release with ``config`` (resume), in this
    rose-gen's shard format (an older shard is not kept: the merge could not read it).

    A folder holding anything else is refused later by the writer unless overwrite is set.
    """
    summary = read_shard_summary(spec.folder)
    if summary is None:
        return False
    meta = summary.get("shard", {})
    return (meta.get("format") == SHARD_FORMAT and meta.get("index") == spec.index and meta.get("count") == spec.count
            and summary.get("config") == json.loads(json.dumps(config))
            and all((spec.folder / rel).is_file() for rel in summary.get("files", {})))


def check_shard_target(spec: ShardSpec, *, overwrite: bool) -> None:
    """Refuse early when the shard folder holds anything but this finished shard (checked before)."""
    folder = spec.folder
    if overwrite or not folder.exists():
        return
    if not folder.is_dir() or any(folder.iterdir()):
        raise ReleaseError(f"shard folder {folder} holds something other than shard {spec.index} of {spec.count} "
                           "of this config; remove it, choose another shard.dir or pass overwrite=true")


def shard_records(folder: Path, first_line: int = 0, offset: int = 0,
                  count: int | None = None) -> Iterator[dict[str, Any]]:
    """The scene records of a shard folder, in position order: all of them, or ``count`` records from
    line ``first_line`` (0-based), which starts at byte ``offset`` (:func:`scene_line_offsets`)."""
    path = folder / SCENES_FILE
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read ({exc.strerror or exc}); {READ_FIX}") from None
    with fh:
        fh.seek(offset)
        for line_no, line in enumerate(islice(fh, count), first_line + 1):
            try:
                yield json_object(path, line_no, line.decode("utf-8"))
            except UnicodeDecodeError:
                raise ReleaseError(f"{path}:{line_no}: undecodable bytes (not UTF-8); {_FIX}") from None
            except JsonlFault as fault:
                raise ReleaseError(f"{fault}; {_FIX}") from None


def scene_line_offsets(folder: Path, lines: Sequence[int]) -> tuple[list[int], int]:
    """(byte offset of each of ``lines`` (0-based, rising) in the shard's scenes file, its number of lines).

    A line past the end gets the file's size. One read of the file, no JSON decoded.
    """
    offsets = [0 for line in lines if line == 0]
    ends = size = 0
    with open(folder / SCENES_FILE, "rb") as fh:
        for block, n, starts in line_starts(fh, [line for line in lines if line > 0]):
            offsets += starts
            ends += n
            size += len(block)
    return offsets + [size] * (len(lines) - len(offsets)), ends
