"""A release folder on disk: its files and summary, the checks before one is replaced, and
:class:`AtomicFolder`, written into a temporary sibling and renamed into place on commit.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

SUMMARY_FILE = "export_summary.json"
FILE_INDEX = ".rose-file-index.sqlite"  # inside the partial folder; removed before it is renamed into place


class ReleaseError(RuntimeError):
    """The release cannot be written (one-line message saying what to do)."""


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


def line_starts(fh: Any, lines: Iterable[int], block_size: int = 1 << 20) -> Iterator[tuple[bytes, int, list[int]]]:
    """Read ``fh`` to its end in blocks: each block, how many line ends (``\\n``) it holds and where
    (byte offsets from where ``fh`` was) those of ``lines`` start that start after one of them.

    ``lines`` are 0-based line numbers of at least 1, rising: line j starts after the j-th line end.
    """
    want = iter(lines)
    nxt, ends, base = next(want, None), 0, 0
    for block in iter(lambda: fh.read(block_size), b""):
        n = block.count(b"\n")
        starts: list[int] = []
        at, seen = -1, ends
        while nxt is not None and nxt <= ends + n:
            while seen < nxt:
                at, seen = block.index(b"\n", at + 1), seen + 1
            starts.append(base + at + 1)
            nxt = next(want, None)
        yield block, n, starts
        base += len(block)
        ends += n


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


class FileIndex(Mapping[str, str]):
    """Release path -> sha256 of every file written, kept in a SQLite file on disk, not in memory.

    A release of 100x v0.1 has ~300,000 images; a dict of their hashes (and the summary text
    made from it) would make a writer's memory grow with the release. Iteration is by sorted
    path (SQLite's BINARY order on UTF-8 is Python's code-point order), which is what the
    summary lists. Writing the same path again replaces its hash, as a dict would.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-2048;"
                              "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha TEXT) WITHOUT ROWID;"
                              "BEGIN;")

    def __setitem__(self, path: str, sha256: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?)", (path, sha256))

    def __getitem__(self, path: str) -> str:
        row = self.db.execute("SELECT sha FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            raise KeyError(path)
        return row[0]

    def __contains__(self, path: object) -> bool:
        return self.db.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone() is not None

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM files").fetchone()[0])

    def __iter__(self) -> Iterator[str]:
        return (path for path, _ in self.sorted_items())

    def sorted_items(self) -> Iterator[tuple[str, str]]:
        """(path, sha256) by sorted path, streamed (a cursor of its own, so lookups may go on meanwhile)."""
        yield from self.db.cursor().execute("SELECT path, sha FROM files ORDER BY path")

    def close(self) -> None:
        """Close and delete the index file."""
        self.db.close()
        self.path.unlink(missing_ok=True)

    def keep(self) -> Path:
        """Close, keeping the index file (for another process to :meth:`take`); its path."""
        self.db.execute("COMMIT")
        self.db.close()
        return self.path

    def take(self, path: Path) -> None:
        """Add every entry of the index file at ``path`` (made by :meth:`keep`), streamed; then delete it."""
        other = sqlite3.connect(path)
        try:
            self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?)", other.execute("SELECT path, sha FROM files"))
        finally:
            other.close()
        path.unlink()


def _dump_summary(summary: Mapping[str, Any], fh: Any) -> None:
    """Write ``json.dumps(summary, ensure_ascii=False, indent=2) + "\\n"`` to ``fh``, streaming a top-level
    :class:`FileIndex` value entry by entry (same bytes as dumping it as a dict)."""
    streamed = {key: value for key, value in summary.items() if isinstance(value, FileIndex)}
    marker = "\u0000file index {}\u0000"
    text = json.dumps({key: marker.format(key) if key in streamed else value for key, value in summary.items()},
                      ensure_ascii=False, indent=2) + "\n"
    for key, index in streamed.items():
        before, text = text.split(json.dumps(marker.format(key)), 1)
        fh.write(before)
        first = True
        for path, sha in index.sorted_items():
            fh.write(("{\n    " if first else ",\n    ") + json.dumps(path, ensure_ascii=False) + ": " + json.dumps(sha))
            first = False
        fh.write("{}" if first else "\n  }")
    fh.write(text)


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
        self._files: FileIndex | None = None  # release path -> sha256 of every file written so far

    @property
    def files(self) -> FileIndex:
        """Release path -> sha256 of every file written so far (on disk in the partial folder)."""
        assert self._files is not None, f"use {type(self).__name__} as a context manager"
        return self._files

    def __enter__(self) -> AtomicFolder:
        self.output_dir.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.output_dir.name}.partial-", dir=self.output_dir.parent))
        umask = os.umask(0)
        os.umask(umask)
        self.tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; a release is an ordinary folder
        self._files = FileIndex(self.tmp / FILE_INDEX)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
        self._close_index()
        if self.tmp is not None and self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp = None

    def close(self) -> None:
        """Close open files (subclasses); called on commit and on failure."""

    def _close_index(self) -> None:
        if self._files is not None:
            self._files.close()
            self._files = None

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

    def take_files(self, index: Path) -> None:
        """Record the files another process wrote into this open folder (a :class:`FolderShare`'s index)."""
        self.files.take(index)

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Write the summary file (not listed in itself)."""
        assert self.tmp is not None
        with open(self.tmp / self.summary_file, "w", encoding="utf-8", newline="\n") as fh:
            _dump_summary(summary, fh)

    def sorted_files(self) -> FileIndex:
        """Every file written, by sorted release path (what the summary lists; streamed when written)."""
        return self.files

    def move_into_place(self) -> tuple[Path, bool]:
        """Rename the finished folder into place; (path, False) when an identical one was there."""
        self.close()
        self._close_index()
        out, tmp = self.output_dir, self.tmp
        assert tmp is not None
        if out.exists() and any(out.iterdir()):
            # Same summary bytes = same files with the same hashes (the summary lists every one).
            old = out / self.summary_file
            if old.is_file() and filecmp.cmp(old, tmp / self.summary_file, shallow=False):
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


class FolderShare(AtomicFolder):
    """Files another process writes into an open :class:`AtomicFolder`: into its partial folder
    ``partial``, their hashes into an index file of this share's own (``index``), which the folder
    takes in with :meth:`AtomicFolder.take_files` once :meth:`keep` has closed it.

    Used without ``with``: the folder belongs to the process that opened it.
    """

    def __init__(self, partial: Path, index: Path) -> None:
        super().__init__(partial)
        self.tmp = Path(partial)
        self._files = FileIndex(index)

    def keep(self) -> Path:
        """Close the index, keeping its file; its path (for :meth:`AtomicFolder.take_files`)."""
        path = self.files.keep()
        self._files = None
        return path
