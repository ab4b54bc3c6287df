"""What a replay reads: the released rows (with file and line), and the user's options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rose_eval.jsonl import iter_jsonl_objects
from rose_gen.render.compose import CueSettings
from rose_gen.render.png import DEFAULT_PNG_ENCODER, DEFAULT_PNG_LEVEL

# Input files of a v0.1-format folder, relative to it (bridge files as in the public repo
# ``analysis/data/<bridge>/`` and as in our own releases ``analysis/<bridge>/``).
INPUT_GLOBS = ("metadata_dev.jsonl", "metadata_test.jsonl", "analysis/data/*/metadata_*.jsonl",
               "analysis/*/metadata_*.jsonl")

# Fields every task row has that are not the asset pair's subset fields.
COMMON_FIELDS = frozenset({
    "item_id", "scene_id", "image_id", "split", "dataset_version", "protocol_version", "item_seed",
    "primitive_type", "task_template", "task_mode", "reference_source", "selection_predicate",
    "target_rule", "region_type", "region_params", "region_case", "cue_type", "prompt_global",
    "prompt_local", "expected_output_format", "ground_truth_count", "ground_truth_clicks",
    "ground_truth_formal_answer", "all_target_cells", "region_target_cells", "region_non_target_count",
    "num_out_region_targets", "global_target_count", "region_target_count", "region_cell_count",
    "region_ratio", "difficulty", "rose_subset", "image", "prompt", "answer", "rows", "cols",
    "cell_size", "font_size", "image_width", "image_height", "grid_size_profile", "target_cells",
    "image_split", "image_cue_type", "image_region_type", "image_region_params", "image_note",
    "image_cue_color", "bridge_task", "bridge_type", "source_item_id", "source_click_item_id",
    "source_task_template", "source_task_mode", "difficulty_inputs",
})
REPLAY_FIELDS = ("replay_substitutions", "replay_image_status")


class ReplayError(ValueError):
    """Input that cannot be replayed (one line: what, where, how to fix)."""


@dataclass(frozen=True)
class InputRow:
    """One released row and where it came from (file relative to the input, 1-based line)."""

    row: Mapping[str, Any]
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ReplayOptions:
    """Replay knobs: ``pixel_assets`` a folder of the original pixel-art files (optional)."""

    pixel_assets: str | None = None
    render: bool = True
    render_only: frozenset[str] | None = None  # scene ids to render (None: all)
    cue: CueSettings = field(default_factory=CueSettings)
    png_compress_level: int = DEFAULT_PNG_LEVEL
    png_encoder: str = DEFAULT_PNG_ENCODER


def need(item: InputRow, key: str) -> Any:
    """The row's ``key``; a missing scene field is one line naming file and line."""
    if key not in item.row:
        raise ReplayError(f"{item.where}: row lacks field {key!r}; a v0.1 row carries its whole scene")
    return item.row[key]


def subset_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The asset pair's fields of a row (everything that is not a common task field), in order."""
    return {k: v for k, v in row.items() if k not in COMMON_FIELDS and k not in REPLAY_FIELDS}


def input_files(path: Path) -> list[Path]:
    """The JSONL files to replay: ``path`` itself, or the v0.1 layout's files under it."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ReplayError(f"{path} does not exist; pass a v0.1 release folder or a metadata .jsonl file")
    found: dict[Path, None] = {}
    for pattern in INPUT_GLOBS:
        for p in sorted(path.glob(pattern)):
            found.setdefault(p, None)
    if not found:
        raise ReplayError(f"{path} holds no metadata_dev.jsonl, metadata_test.jsonl or "
                          "analysis/data/*/metadata_*.jsonl; pass a v0.1 release folder or a .jsonl file")
    return list(found)


def read_rows(paths: Sequence[Path], root: Path | None = None) -> list[InputRow]:
    """Every row of ``paths`` (bad JSON or a non-object line: one line naming file and line)."""
    out: list[InputRow] = []
    for path in paths:
        name = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else path.name
        for n, row in iter_jsonl_objects(path, ReplayError, "fix or remove the line"):
            out.append(InputRow(row, name, n))
    return out
