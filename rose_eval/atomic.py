"""The toolkit's one atomic file writer: a reader sees the old file or the new one, never half.

The data goes to a hidden temporary sibling (``.NAME.<pid>.<random>.tmp``, same folder, so
the final rename stays on one file system) and is renamed over the target when complete;
on any failure, Ctrl-C included, the temporary file is removed and the target is as it was.
The data is flushed to disk before the rename, so a crash right after cannot leave an empty
file where a predictions file (hours of paid requests) was.

The mode rule is the one a plain ``open(path, "w")`` follows, so an atomic write is never
more private or more public than an ordinary one:

- a new file gets ``0o666`` less the process umask (0644 under the usual 022), applied by
  the kernel at creation (so default ACLs apply too, and no umask is read or changed);
- replacing an existing file keeps that file's permission bits (a report you made
  group-readable stays so).

A symbolic link at the target is replaced by the new file (the link's target is not
written through), as ``os.replace`` does. Parent folders are created when missing.
Whole folders are swapped by ``rose_eval/report/outdir.py`` (evaluation outputs) and
``rose_gen/release/folder.py`` (releases); single files go through here.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

NEW_FILE_MODE = 0o666  # less the umask, as open() creates files


def _temporary_sibling(path: Path) -> tuple[int, Path]:
    """An exclusive new file beside ``path``: (descriptor, its path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, NEW_FILE_MODE), tmp
        except FileExistsError:  # a 32-bit random clash: draw again
            continue


def _kept_mode(path: Path) -> int | None:
    """Permission bits of an existing regular file at ``path`` (None: nothing to keep)."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


@contextlib.contextmanager
def atomic_output(path: Path | str, mode: str = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = None, errors: str | None = None) -> Iterator[IO[Any]]:
    """Open a file to write ``path`` atomically: it appears, complete, when the block ends.

    ``mode`` is ``"w"`` (text; ``encoding``, ``newline``, ``errors`` as for ``open``) or
    ``"wb"``. An exception in the block leaves ``path`` untouched and re-raises.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_output mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temporary_sibling(path)
    text = {"encoding": encoding, "newline": newline, "errors": errors} if mode == "w" else {}
    try:
        handle = open(fd, mode, **text)  # noqa: SIM115 - owns fd from here on; entered below
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    try:
        with handle:
            kept = _kept_mode(path)
            if kept is not None:
                os.fchmod(handle.fileno(), kept)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())  # on disk before the rename: a crash never leaves it empty
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path | str, data: bytes | str) -> None:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically (see the module rule)."""
    if isinstance(data, str):
        with atomic_output(path, "w", encoding="utf-8") as handle:
            handle.write(data)
    else:
        with atomic_output(path, "wb") as handle:
            handle.write(data)
