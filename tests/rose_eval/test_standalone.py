"""rose_eval stands alone: no module of it imports the generator (rose_gen)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rose_eval

PACKAGE = Path(rose_eval.__file__).resolve().parent
IMPORT_FUNCTIONS = frozenset({"import_module", "__import__", "find_spec"})


def imported_names(path: Path) -> set[str]:
    """Every module a file imports: import statements, and import_module("...") literals."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in IMPORT_FUNCTIONS:
                names.update(arg.value for arg in node.args
                             if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return names


def test_the_scan_sees_every_kind_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import rose_gen.core.rng\nfrom rose_gen import plan\n"
                      "import importlib\nimportlib.import_module('rose_gen.cli.gen')\n"
                      "def f():\n    from rose_gen.vocab import X\n")
    assert {"rose_gen.core.rng", "rose_gen", "rose_gen.cli.gen", "rose_gen.vocab"} <= imported_names(sample)


def test_no_rose_eval_module_imports_rose_gen():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    offenders = {
        str(path.relative_to(PACKAGE.parent)): sorted(name for name in imported_names(path)
                                                      if name.split(".")[0] == "rose_gen")
        for path in files
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_every_rose_eval_module_imports_with_rose_gen_blocked():
    modules = sorted(
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in PACKAGE.rglob("*.py")
    )
    code = (
        "import importlib, sys\n"
        "sys.modules['rose_gen'] = None  # any import of the generator now fails\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('ok', len(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")
