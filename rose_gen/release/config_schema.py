"""The typed schema of ``conf/``: one dataclass per group, registered with Hydra's ConfigStore as
``rose_gen_schema``, so wrong types and unknown keys fail at composition. Types and keys
only; defaults and their documentation live in ``conf/*.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from rose_gen.core.schema import DATASET_VERSION
from rose_gen.release.parquet import DEFAULT_MAX_BYTES_PER_GROUP
from rose_gen.render.compose import CUE_PALETTE
from rose_gen.scene.presets import PresetConf

SCHEMA_NAME = "rose_gen_schema"


@dataclass
class LayoutConf:
    family: str = MISSING
    profile_weights: dict[str, float] = field(default_factory=dict)
    exception_weights: list[float] = field(default_factory=list)
    cell_size: list[int] | None = None


@dataclass
class RegionSizesConf:
    line_min: int = 1
    line_max: int = 4
    rect_min: int = 2
    rect_max: int = 6
    attempts: int = 24


@dataclass
class BalanceConf:
    max_count: int = 5
    local_max: int = 3


@dataclass
class SubsetConf:
    name: str = MISSING
    source: str = MISSING
    scenes: int = MISSING
    dev_scenes: int = MISSING
    layout: LayoutConf = field(default_factory=LayoutConf)
    region_type_weights: dict[str, float] = field(default_factory=dict)
    case_weights: dict[str, float] = field(default_factory=dict)
    region_sizes: RegionSizesConf = field(default_factory=RegionSizesConf)
    cue_type: str | None = None
    font_scale: float | None = None
    source_options: dict[str, Any] = field(default_factory=dict)
    balance: BalanceConf | None = None  # rose_gen/scene/balance.py; null = v0.1's answer mixes


@dataclass
class DifficultyConf:
    name: str = MISSING
    hard_from: dict[str, int] = field(default_factory=dict)
    hard_share: dict[str, float | None] = field(default_factory=dict)  # per subset: rank instead (difficulty.py)
    count_points: list[int] = field(default_factory=list)
    case_points: dict[str, int] = field(default_factory=dict)
    tier_points: dict[str, int] = field(default_factory=dict)
    grid_points: dict[str, int] = field(default_factory=dict)
    high_similarity: float | None = None
    high_similarity_share: float = 0.2
    preset: PresetConf = field(default_factory=PresetConf)  # difficulty preset knobs (rose_gen/scene/presets.py)


@dataclass
class CueConf:
    outline_fraction: float = 0.05
    min_outline_px: int = 2
    max_outline_px: int = 5
    mask_alpha: float = 0.35


@dataclass
class RenderConf:
    cue_type: str = "OUTLINE_BOX"
    png_compress_level: int = 2
    png_encoder: str = "zlibng-up"  # rose_gen/render/png.py: zlibng-up | libpng-up | pillow (releases before issue 27)
    cue_color: Any = "auto"  # "auto" | a cue_palette name | [r, g, b]
    cue_palette: dict[str, list[int]] = field(
        default_factory=lambda: {name: list(rgb) for name, rgb in CUE_PALETTE})
    cue: CueConf = field(default_factory=CueConf)


@dataclass
class ExportConf:
    parquet: bool = True
    parquet_rows_per_group: int = 64
    parquet_max_bytes_per_group: int = DEFAULT_MAX_BYTES_PER_GROUP
    parquet_compression: str = "zstd"
    bridges: bool = True
    parquet_rows_per_file: int = 0
    parquet_max_rows_per_file: int = 6000
    controls: list[str] = field(default_factory=list)


@dataclass
class ShardConf:
    index: int | None = None
    count: int = 1
    dir: str | None = None
    keep: bool = False


@dataclass
class GenConf:
    profile_name: str = MISSING
    seed: int = 0
    dataset_version: str = DATASET_VERSION
    output_dir: str | None = None
    workers: int = 1
    overwrite: bool = False
    progress: bool = True
    subsets: list[str] | None = None
    plugins: list[str] = field(default_factory=list)
    subset: dict[str, SubsetConf] = field(default_factory=dict)
    difficulty: DifficultyConf = field(default_factory=DifficultyConf)
    render: RenderConf = field(default_factory=RenderConf)
    export: ExportConf = field(default_factory=ExportConf)
    shard: ShardConf = field(default_factory=ShardConf)


ConfigStore.instance().store(name=SCHEMA_NAME, node=GenConf)
