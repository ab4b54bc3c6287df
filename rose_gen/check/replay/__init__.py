"""Replay a released v0.1-format folder from its own metadata.

The package is split by job; data flows one way:

- :mod:`~rose_gen.check.replay.inputs`: the released rows (file and line) and the options;
- :mod:`~rose_gen.check.replay.fields`: which fields follow from the scene and how (the rule table),
  and which equal sides make a scene defective;
- :mod:`~rose_gen.check.replay.rating`: our medium/hard rule on a replayed scene (agreement rate);
- :mod:`~rose_gen.check.replay.scenes`: scenes rebuilt from the rows, every row re-derived by our
  templates and compared field by field (:class:`Inconsistency`);
- :mod:`~rose_gen.check.replay.assets`: v0.1's asset names resolved to installable ones
  (``assets_manifest/replay_v0_1.json``; faces by :mod:`rose_gen.assets.font_match`);
- :mod:`~rose_gen.check.replay.draw`: the images; :mod:`~rose_gen.check.replay.run`: one scene end to end;
- :mod:`~rose_gen.check.replay.report`: the summary; :mod:`~rose_gen.check.replay.audit`: original images
  against their metadata.

Rows keep v0.1's ids and sizes; the pixels differ, so each row gains
``replay_substitutions`` (per asset: asked, used, kind ``exact``/``same_design``/``stand_in``,
why) and ``replay_image_status`` (``rendered``, ``rendered_base_only`` when no T4 row names the
cue rectangle, or ``not_rendered: <why>``).
"""

from rose_gen.check.replay.assets import (
    KINDS,
    Resolved,
    Substitution,
    replay_manifest,
    resolve_assets,
    scene_kind,
)
from rose_gen.check.replay.audit import audit_images, audit_scene, odd_cells
from rose_gen.check.replay.draw import render_replay, visibly_differs
from rose_gen.check.replay.fields import MANIFEST
from rose_gen.check.replay.inputs import (
    REPLAY_FIELDS,
    InputRow,
    ReplayError,
    ReplayOptions,
    input_files,
    read_rows,
)
from rose_gen.check.replay.report import summarize
from rose_gen.check.replay.run import SceneOutcome, replay_rows, replay_scene
from rose_gen.check.replay.scenes import (
    Inconsistency,
    ReplayScene,
    compare_row,
    derive_row,
    group_scenes,
    rebuild_scene,
)

__all__ = [
    "KINDS", "MANIFEST", "REPLAY_FIELDS", "Inconsistency", "InputRow", "ReplayError", "ReplayOptions", "ReplayScene",
    "Resolved", "SceneOutcome", "Substitution", "audit_images", "audit_scene", "compare_row", "derive_row",
    "group_scenes", "input_files", "odd_cells", "read_rows", "rebuild_scene", "render_replay", "replay_manifest",
    "replay_rows", "replay_scene", "resolve_assets", "scene_kind", "summarize", "visibly_differs",
]
