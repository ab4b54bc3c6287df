"""The shipped ROSE v0.1 reference rows (MIT, see tests/data/rose_v0_1/README.md).

The rows live gzip-compressed in the repository; tests that need a plain JSONL path (the
commands read files, not streams) get one decompressed once per test process.
"""

from __future__ import annotations

import atexit
import functools
import gzip
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

V01_DIR = Path(__file__).resolve().parent / "data" / "rose_v0_1"
V01_MATCHED_LOCAL_GZ = V01_DIR / "matched_local_count_test.jsonl.gz"
V01_MATCHED_LOCAL_SHA256 = "944590ccd270ba2378f69f7f08dab1a2c492db272a02cf76452693fd8a516b72"
V01_TEST_SCENES = 1112


@functools.cache
def v01_rows_path() -> Path:
    """A plain JSONL copy of the 1,112 v0.1 rows, checked against the recorded sha256."""
    data = gzip.decompress(V01_MATCHED_LOCAL_GZ.read_bytes())
    if hashlib.sha256(data).hexdigest() != V01_MATCHED_LOCAL_SHA256:
        raise AssertionError(f"{V01_MATCHED_LOCAL_GZ} does not hold the recorded v0.1 rows")
    folder = Path(tempfile.mkdtemp(prefix="rose-v01-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "matched_local_count_test.jsonl"
    path.write_bytes(data)
    return path


def v01_rows() -> list[dict[str, Any]]:
    """The v0.1 rows as dicts, in file order (a fresh list each call)."""
    with v01_rows_path().open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
