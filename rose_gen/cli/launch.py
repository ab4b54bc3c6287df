"""The generator's console scripts: rose-gen, rose-verify, rose-audit, rose-replay.

The generator's packages (Hydra, fonttools, cairosvg, scikit-image, the emoji sets) come
with the ``gen`` extra: ``pip install rose-toolkit`` alone installs the evaluator and the
runners. Each command here first checks that the extra's requirements are installed (from
the installed distribution's metadata) and loads its module only then, so without the
extra it ends with one line saying what to install instead of a usage error or a
traceback.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from importlib import metadata

DISTRIBUTION = "rose-toolkit"
EXTRA = "gen"
OWN_PACKAGES = frozenset({"rose_gen", "rose_eval", "assets_manifest", "conf"})
INSTALL_HINT = f"pip install '{DISTRIBUTION}[{EXTRA}]'"
_EXTRA_MARKER = re.compile(rf"""extra\s*==\s*["']{EXTRA}["']""")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def missing_requirements() -> list[str]:
    """Distributions the ``gen`` extra requires that are not installed (none known: [])."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # a source tree without an install: imports decide
        return []
    missing = []
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        name = _NAME.match(spec.strip())
        if name and _EXTRA_MARKER.search(marker):
            try:
                metadata.version(name.group())
            except metadata.PackageNotFoundError:
                missing.append(name.group())
    return missing


def _refuse(program: str, missing: str) -> int:
    print(f"{program}: error: the generator's packages are not installed (missing: {missing}); "
          f"install them with: {INSTALL_HINT}", file=sys.stderr)
    return 2


def run(program: str, module: str) -> int:
    """``module.main()``, or one line and status 2 when the generator's packages are missing."""
    missing = missing_requirements()
    if missing:
        return _refuse(program, ", ".join(missing))
    try:
        return int(importlib.import_module(module).main() or 0)
    except ModuleNotFoundError as exc:
        package = (exc.name or "").split(".")[0]
        if not package or package in OWN_PACKAGES:
            raise
        return _refuse(program, package)


def _command(program: str, module: str) -> Callable[[], int]:
    def main() -> int:
        return run(program, module)
    main.__doc__ = f"Entry point of {program} ({module}.main)."
    return main


gen = _command("rose-gen", "rose_gen.cli.gen")
verify = _command("rose-verify", "rose_gen.cli.verify")
audit = _command("rose-audit", "rose_gen.cli.audit")
replay = _command("rose-replay", "rose_gen.cli.replay")
