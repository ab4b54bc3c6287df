"""Run one function in a fresh Python interpreter and return its JSON result.

The heap-walking memory tests count live objects with ``gc.get_objects()``; inside a long test
session that heap holds every module and fixture loaded so far (inspect_ai, pyarrow, a browser
driver...), so each walk cost ~6x what it costs in a process that imported only the code under
test. Running the measured part in its own interpreter keeps the count exact and the walk cheap,
whatever ran before it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_RUNNER = """
import importlib, json, sys
module, name = sys.argv[1].split(":")
result = getattr(importlib.import_module(module), name)(*json.loads(sys.argv[2]))
sys.stdout.write("\\n@@result@@" + json.dumps(result))
"""


def run_fresh(target: str, *args: Any, timeout: float = 600) -> Any:
    """Call ``target`` ("package.module:function") with JSON-serialisable ``args`` in a new
    interpreter rooted at the repository, and return what it returned (JSON round-trip).

    A failure in the child fails the caller with the child's stderr.
    """
    done = subprocess.run([sys.executable, "-c", _RUNNER, target, json.dumps(list(args))],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or "@@result@@" not in done.stdout:
        raise AssertionError(f"{target} failed in its own process (exit {done.returncode}):\n"
                             f"{done.stderr[-4000:]}")
    return json.loads(done.stdout.rsplit("@@result@@", 1)[1])
