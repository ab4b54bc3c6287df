"""Replaying scenes: compare every row, resolve the assets, render, collect the outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rose_eval import vocab
from rose_gen.check.replay.assets import (
    Resolved,
    Substitution,
    replay_manifest,
    resolve_assets,
    scene_kind,
)
from rose_gen.check.replay.draw import cue_style, render_replay
from rose_gen.check.replay.inputs import InputRow, ReplayOptions, subset_fields
from rose_gen.check.replay.scenes import (
    DIFFICULTY_OF,
    UNRATED,
    Inconsistency,
    ReplayScene,
    compare_scene,
    group_scenes,
)
from rose_gen.core.schema import CUE_TEMPLATE, SceneSpec


@dataclass
class SceneOutcome:
    """Everything the replay learnt about one scene."""

    scene: SceneSpec
    rows: list[dict[str, Any]]  # derived rows with replay fields, input order
    inconsistencies: list[Inconsistency]
    substitutions: tuple[Substitution, ...]
    kind: str
    images: dict[str, bytes]
    status: str
    visible: bool | None
    carried: tuple[str, ...] = ()  # subset fields no rule derives (the scene's identity and labels)
    difficulty: tuple[tuple[str, str], ...] = ()  # (released, ours) per rated row


def _cue_color(rs: ReplayScene) -> tuple[int, int, int] | None:
    for item in rs.rows:
        color = item.row.get("image_cue_color")
        if isinstance(color, list) and len(color) == 3:
            return (int(color[0]), int(color[1]), int(color[2]))
    return None


def _defects(rs: ReplayScene, resolved: Resolved, found: list[Inconsistency]) -> list[Inconsistency]:
    """Defects seen while resolving (the same glyph twice), merged into the scene's defect if it has one."""
    out = list(found)
    for d in resolved.defects:
        first = rs.rows[0]
        same = next((i for i, p in enumerate(out) if p.kind == "defect" and p.field == d.field), None)
        if same is None:
            out.append(Inconsistency(rs.scene.scene_id, str(first.row.get("item_id", "?")), first.where, d.field,
                                     d.released, d.derived, d.why, d.kind))
        else:
            p = out[same]
            out[same] = Inconsistency(p.scene_id, p.item_id, p.where, p.field, p.released, p.derived,
                                      f"{p.why}; {d.why}", p.kind)
    return out


def _difficulty_pairs(rs: ReplayScene) -> tuple[tuple[str, str], ...]:
    out = []
    for item in rs.rows:
        template = vocab.canonical_template(str(item.row["task_template"]))
        ours = rs.our_difficulty.get(DIFFICULTY_OF.get(template, template))
        if template not in UNRATED and ours is not None and "difficulty" in item.row:
            out.append((str(item.row["difficulty"]), ours))
    return tuple(out)


def replay_scene(rs: ReplayScene, options: ReplayOptions, manifest: Mapping[str, Any]) -> SceneOutcome:
    """Re-derive and compare every row of one scene; render it unless told not to."""
    scene = rs.scene
    rows, problems = compare_scene(rs)
    resolved = resolve_assets(scene, options, manifest)
    problems = _defects(rs, resolved, problems)
    cue_sub = cue_style(scene)[1] if CUE_TEMPLATE in scene.regions else None
    if cue_sub is not None:
        resolved = Resolved(resolved.pair, (*resolved.substitutions, cue_sub), resolved.problem)
    images: dict[str, bytes] = {}
    visible = None
    if resolved.pair is None:
        status = f"not_rendered: {resolved.problem}"
    elif not options.render or (options.render_only is not None and scene.scene_id not in options.render_only):
        status = "not_rendered: rendering not requested"
    else:
        out = render_replay(scene, resolved.pair, options, _cue_color(rs))
        images, status, visible = out.images, out.status, out.visible
    subs = [s.to_json() for s in resolved.substitutions]
    for row in rows:
        row["replay_substitutions"] = subs
        row["replay_image_status"] = status
    carried = tuple(k for k in subset_fields(rs.rows[0].row) if k not in rs.derivation.derived)
    return SceneOutcome(scene, rows, problems, resolved.substitutions, scene_kind(resolved.substitutions),
                        images, status, visible, carried, _difficulty_pairs(rs))


def replay_rows(items: Sequence[InputRow], options: ReplayOptions) -> list[SceneOutcome]:
    """Replay already-read rows (pure apart from reading asset files)."""
    manifest = replay_manifest()
    return [replay_scene(rs, options, manifest) for rs in group_scenes(items)]
