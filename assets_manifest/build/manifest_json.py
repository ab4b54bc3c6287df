"""Writing the generated JSON manifests: stable, diff-friendly text.

Shared by the manifest builders (``build_emoji.py``, ``build_pixel.py``), which write it
with the toolkit's atomic writer (``rose_eval.atomic.write_atomic``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def dumps_one_record_per_line(doc: Mapping[str, Any], indent: int = 0) -> str:
    """JSON with top-level keys in order on their own lines and each record of a list of
    objects compact on one line (readable diffs).

    Top-level keys are indented by ``indent`` spaces, list records by ``indent + 2``.
    """
    pad, record_pad = " " * indent, " " * (indent + 2)
    lines = ["{"]
    items = list(doc.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{pad}{json.dumps(key)}: [")
            for m, record in enumerate(value):
                sep = "," if m < len(value) - 1 else ""
                lines.append(record_pad + json.dumps(record, ensure_ascii=False, separators=(",", ":")) + sep)
            lines.append(f"{pad}]{comma}")
        else:
            lines.append(f"{pad}{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"

