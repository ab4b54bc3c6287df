"""What a preview shows of a scene, read from the release's rows only (never the generator's plan).

A scene is described by its task rows: the T1 row gives the base image, the grid, the
exception cells and the pair's metadata (the subset fields between ``target_cells`` and
``image_split``, whatever the source); the T4 row gives the cue image, its highlighted
rectangle and colour. Measurements of the pixels live in :mod:`rose_gen.check.preview.sheet`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rose_eval.vocab import TEMPLATE_ORDER, canonical_template, ordered_subsets
from rose_gen.check.audit import preset_name, scene_rows_of

Cell = tuple[int, int]
BASE_TEMPLATE, CUE_TEMPLATE = TEMPLATE_ORDER[0], TEMPLATE_ORDER[3]
PAIR_START, PAIR_END = "target_cells", "image_split"  # the subset fields sit between these keys


class PreviewError(ValueError):
    """A preview cannot be made (one-line message: what, where, how to fix)."""


@dataclass(frozen=True)
class SceneView:
    """One scene as the release describes it (plain data, JSON-safe values)."""

    subset: str
    scene_id: str
    split: str
    rows: int
    cols: int
    cell_size: int
    profile: str
    preset: str
    base_image: str  # release-relative path
    cue_image: str | None
    targets: tuple[Cell, ...]  # placement order, as the rows record it
    cue_rect: tuple[int, int, int, int] | None  # r1, r2, c1, c2
    cue_color: tuple[int, int, int] | None
    difficulty: tuple[tuple[str, str], ...]  # (template, difficulty) in template order
    pair: tuple[tuple[str, Any], ...]  # the subset fields in row order
    row: Mapping[str, Any] = field(compare=False, repr=False)  # the T1 row (for rose-audit's measure)

    @property
    def image_ids(self) -> tuple[str, str | None]:
        """Image ids (file stems) of the base and cue images."""
        stem = lambda path: path.rsplit("/", 1)[-1].rsplit(".", 1)[0]  # noqa: E731
        return stem(self.base_image), stem(self.cue_image) if self.cue_image else None


def pair_fields(row: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The subset (pair) fields of a task row, in row order."""
    keys = list(row)
    if PAIR_START not in keys:
        return ()
    start = keys.index(PAIR_START) + 1
    end = keys.index(PAIR_END) if PAIR_END in keys else len(keys)
    return tuple((k, row[k]) for k in keys[start:end])


def _rect(params: object) -> tuple[int, int, int, int] | None:
    if isinstance(params, Mapping) and all(isinstance(params.get(k), int) for k in ("r1", "r2", "c1", "c2")):
        return int(params["r1"]), int(params["r2"]), int(params["c1"]), int(params["c2"])
    return None


def scene_views(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[SceneView]]:
    """Every scene of a release's rows, by subset (paper order) and scene id."""
    by_scene: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_scene.setdefault(str(row.get("scene_id")), []).append(row)
    out: dict[str, list[SceneView]] = {}
    for base in scene_rows_of(rows):
        scene_rows = by_scene[base["scene_id"]]
        templates = {canonical_template(str(r.get("task_template"))): r for r in scene_rows}
        cue = templates.get(CUE_TEMPLATE)
        color = cue.get("image_cue_color") if cue else None
        view = SceneView(
            subset=str(base["rose_subset"]),
            scene_id=str(base["scene_id"]),
            split=str(base.get("split", "?")),
            rows=int(base["rows"]),
            cols=int(base["cols"]),
            cell_size=int(base["cell_size"]),
            profile=str(base.get("grid_size_profile", "?")),
            preset=preset_name(base),
            base_image=str(base["image"]).replace("\\", "/"),
            cue_image=str(cue["image"]).replace("\\", "/") if cue else None,
            targets=tuple((int(r), int(c)) for r, c in base["target_cells"]),
            cue_rect=_rect(cue.get("image_region_params")) if cue else None,
            cue_color=tuple(int(v) for v in color) if isinstance(color, list) and len(color) == 3 else None,
            difficulty=tuple((t, str(templates[t].get("difficulty", "?"))) for t in TEMPLATE_ORDER
                             if t in templates),
            pair=pair_fields(base),
            row=base,
        )
        out.setdefault(view.subset, []).append(view)
    return {s: sorted(out[s], key=lambda v: v.scene_id) for s in ordered_subsets(out)}


def pick(views: Sequence[SceneView], n: int) -> list[SceneView]:
    """``n`` scenes spread evenly over the subset's scene ids (all of them when there are fewer)."""
    if n <= 0:
        raise PreviewError(f"--per_subset must be at least 1, not {n}")
    if len(views) <= n:
        return list(views)
    picks = np.unique(np.linspace(0, len(views) - 1, n).round().astype(int))
    return [views[int(i)] for i in picks]
