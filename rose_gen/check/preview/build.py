"""Write a release's preview: ``<subset>.png`` per subset and ``index.html`` in one folder."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rose_eval.atomic import write_atomic
from rose_gen.check.audit import AuditError, read_release_rows
from rose_gen.check.preview.index import SubsetSheet, render_index
from rose_gen.check.preview.scenes import PreviewError, pick, scene_views
from rose_gen.check.preview.sheet import render_sheet, save_png, tile_zoom

INDEX_FILE = "index.html"
DEFAULT_PER_SUBSET = 6


@dataclass(frozen=True)
class PreviewResult:
    """What was written."""

    out: Path
    index: Path
    sheets: tuple[SubsetSheet, ...]


def default_out(root: Path) -> Path:
    """``<release>.preview`` beside the release (the release folder itself stays untouched)."""
    return root.parent / f"{root.name}.preview"


def sheet_file(subset: str) -> str:
    """A file name for a subset's sheet (safe in paths and URLs)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", subset) + ".png"


def build_preview(root: Path, out: Path | None = None, per_subset: int = DEFAULT_PER_SUBSET) -> PreviewResult:
    """Render every subset's sheet and the index; PreviewError (one line) on bad input."""
    root = Path(root)
    if not root.is_dir():
        raise PreviewError(f"{root} is not a directory; pass a release folder (rose-gen preview <release>)")
    out = Path(out) if out is not None else default_out(root)
    if out.resolve() == root.resolve() or out.resolve().is_relative_to(root.resolve()):
        raise PreviewError(f"--out {out} is inside the release; write the preview beside it")
    try:
        views = scene_views(read_release_rows(root))
    except AuditError as exc:
        raise PreviewError(str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise PreviewError(f"{root}: a row lacks a field the preview needs ({exc}); not a ROSE release?") from None
    if not views:
        raise PreviewError(f"{root}: no T1_COUNT_GLOBAL rows; nothing to preview")
    chosen = {subset: pick(all_views, per_subset) for subset, all_views in views.items()}
    out.mkdir(parents=True, exist_ok=True)
    sheets = []
    for subset, shown in chosen.items():
        title = f"{subset} · {root.name}"
        subtitle = (f"{len(shown)} of {len(views[subset])} scenes, spread evenly over the scene ids · exception "
                    f"cells framed in magenta on the base image · tiles at {tile_zoom(shown)}× (nearest neighbour)\n"
                    "SSIM and changed share: each exception against the median majority cell (rose-audit's measure)")
        image, bands = render_sheet(root, shown, title, subtitle)
        name = sheet_file(subset)
        save_png(image, out / name)
        sheets.append(SubsetSheet(subset, name, len(views[subset]), tuple(bands)))
    index = out / INDEX_FILE
    write_atomic(index, render_index(root.name, sheets))
    return PreviewResult(out, index, tuple(sheets))
