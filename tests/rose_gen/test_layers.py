"""The generator's folders are layers: a module never imports from a higher one (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import rose_gen

LAYERS = ("core", "assets", "sources", "render", "scene", "tasks", "release", "check", "cli")
PACKAGE = Path(rose_gen.__file__).resolve().parent


def _imported_layers(path: Path) -> list[tuple[int, str]]:
    """(line, layer) of every rose_gen.<layer> import in a module, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "rose_gen" and len(parts) > 1 and parts[1] in LAYERS:
                found.append((node.lineno, parts[1]))
    return found


def test_every_module_lives_in_a_layer_folder():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules outside the layer folders: {loose}"
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(LAYERS)


def test_no_module_imports_a_higher_layer():
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = path.relative_to(PACKAGE).parts[0]
        if layer not in rank:
            continue
        upward += [f"{path.relative_to(PACKAGE)}:{line} ({layer}) imports rose_gen.{other}"
                   for line, other in _imported_layers(path) if rank[other] > rank[layer]]
    assert upward == []


def test_the_check_itself_sees_an_upward_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from rose_gen.cli.gen import main\n\nimport rose_gen.core.rng\n")
    assert sorted(_imported_layers(sample)) == [(2, "cli"), (4, "core")]
