"""The generation config: Hydra composition, a typed schema, and the map onto plan dataclasses.

``conf/config.yaml`` composes the groups ``profile/`` (which subsets and how many scenes),
``subset/`` (one subset's knobs, pulled in by the profile), ``difficulty/`` (the
medium/hard rule), ``render/`` (cue style, PNG level) and ``export/`` (Parquet, bridges).
The dataclasses below are registered in Hydra's ConfigStore as the schema, so a wrong
type or an unknown key fails at composition; :func:`build_config` then checks what the
schema cannot (ranges, impossible plans) and returns a :class:`GenConfig`.

Every failure is a :class:`ConfigError` with a one-line message naming the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rose_eval import vocab
from rose_gen.release.config_schema import GenConf, SubsetConf
from rose_gen.release.export import ExportSettings
from rose_gen.release.parquet import DEFAULT_MAX_BYTES_PER_GROUP
from rose_gen.release.shards import ShardSpec
from rose_gen.render.compose import CUE_OVERLAYS, CueSettings, RenderSettings
from rose_gen.render.png import LEGACY_PNG_ENCODER, PNG_ENCODERS
from rose_gen.scene.balance import BalanceSpec
from rose_gen.scene.difficulty import DifficultyParams
from rose_gen.scene.layout import LayoutParams
from rose_gen.scene.plan import PlanError, SubsetPlan, validate_plan
from rose_gen.scene.presets import PresetError, preset_from_conf
from rose_gen.scene.regions import RegionSizes
from rose_gen.tasks.controls import check_controls

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


# Keys that say how to run, not what to make: never recorded in the release.
RUN_KEYS: tuple[str, ...] = ("output_dir", "workers", "overwrite", "progress", "shard")
# Subset keys newer than the releases already made: not recorded while null (their default),
# so those releases' recorded configs (and bytes) stay as they were.
UNRECORDED_WHEN_NULL: tuple[str, ...] = ("balance",)


class ConfigError(ValueError):
    """The composed config is invalid or impossible (one-line message naming the key)."""


@dataclass(frozen=True)
class GenConfig:
    """A validated generation config.

    ``plans`` are the selected subsets in v0.1 order; ``recorded`` is the composed
    config without run-only keys (what the release stores and ``rose-verify`` reads).
    """

    seed: int
    plans: tuple[SubsetPlan, ...]
    render: RenderSettings
    export: ExportSettings
    plugins: tuple[str, ...]
    recorded: dict[str, Any]
    output_dir: Path | None = None
    workers: int = 1
    overwrite: bool = False
    progress: bool = True
    shard: ShardSpec | None = None  # set: make only this shard's scenes, into its shard folder


def one_line(exc: BaseException) -> str:
    """A Hydra/OmegaConf error as one line naming the key when known."""
    cause = exc
    while cause.__cause__ is not None and isinstance(cause.__cause__, (HydraException, OmegaConfBaseException)):
        cause = cause.__cause__
    text = str(cause)
    key = re.search(r"full_key: (\S+)", text)
    first = text.strip().splitlines()[0] if text.strip() else type(cause).__name__
    missing = re.search(r"Could not find '([^']+)/([^']+)'", text)
    if missing and missing.group(1) == "hydra/launcher":
        return (f"Hydra launcher {missing.group(2)!r} is not installed: pip install 'rose-toolkit[joblib]' for "
                "hydra/launcher=joblib, [slurm] for rose_slurm (submitit), [ray] for rose_ray")
    if missing:
        group, option = missing.groups()
        known = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml")) if (CONF_DIR / group).is_dir() else []
        return f"unknown {group} {option!r}; known: {', '.join(known) or 'none'}"
    if "Could not override" in first or "not in struct" in text or "not in '" in text:
        name = key.group(1) if key else re.search(r"'([^']+)'", first).group(1) if "'" in first else "?"
        return f"unknown config key {name!r}; see `rose-gen --cfg` for the known keys"
    if "Could not append" in first:
        name = re.search(r"'([^']+)'", first)
        return f"config key {name.group(1) if name else '?'} already exists; drop the leading '+'"
    if key and key.group(1) not in first:
        first = f"{key.group(1)}: {first}"
    return first.rstrip(".")


def parse_overrides(overrides: list[str]) -> list[Any]:
    """Hydra's parsed overrides; a malformed one is a ConfigError naming it."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    parsed = []
    for text in overrides:
        try:
            parsed += parser.parse_overrides([text])
        except HydraException as exc:
            raise ConfigError(f"cannot parse override {text!r}: {one_line(exc)} (Hydra's override syntax: key=value, "
                              "+key=value, group=option)") from None
    return parsed


def compose_config(overrides: list[str]) -> DictConfig:
    """Compose ``conf/config.yaml`` with Hydra overrides (no output folders, no logging)."""
    parse_overrides(list(overrides))
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None, job_name="rose_gen"):
            cfg = compose(config_name="config", overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(one_line(exc)) from None
    return schema_config(cfg)


def schema_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` merged onto the schema: '+key=value' appends bypass it at composition, so every key is re-checked."""
    try:
        plain = OmegaConf.to_container(cfg, resolve=False)
        return OmegaConf.merge(OmegaConf.structured(GenConf), plain)
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc)) from None


# Export keys added after releases were made: at these defaults they are left out of the
# recorded config, so a release is recorded (and hashed) as before the key existed.
EXPORT_UNRECORDED_AT_DEFAULT: dict[str, Any] = {"controls": [],
                                                "parquet_max_bytes_per_group": DEFAULT_MAX_BYTES_PER_GROUP}


def recorded_config(cfg: DictConfig) -> dict[str, Any]:
    """The composed config as plain data, without run-only keys."""
    data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    assert isinstance(data, dict)
    for subset in (data.get("subset") or {}).values():
        for key in UNRECORDED_WHEN_NULL:
            if isinstance(subset, dict) and subset.get(key, 0) is None:
                del subset[key]
    out = {k: v for k, v in data.items() if k not in RUN_KEYS}
    export = out.get("export")
    if isinstance(export, dict):
        out["export"] = {k: v for k, v in export.items()
                         if k not in EXPORT_UNRECORDED_AT_DEFAULT or v != EXPORT_UNRECORDED_AT_DEFAULT[k]}
    return out


def config_from_recorded(recorded: dict[str, Any]) -> GenConfig:
    """Rebuild a :class:`GenConfig` from a release's recorded config (``rose-verify``).

    A config recorded before ``render.png_encoder`` existed was written with Pillow.
    """
    render = recorded.get("render")
    if isinstance(render, dict) and "png_encoder" not in render:
        recorded = {**recorded, "render": {**render, "png_encoder": LEGACY_PNG_ENCODER}}
    try:
        cfg = OmegaConf.merge(OmegaConf.structured(GenConf), OmegaConf.create(recorded))
    except OmegaConfBaseException as exc:
        raise ConfigError(f"recorded config: {one_line(exc)}") from None
    return build_config(cfg)


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def _select(cfg: DictConfig) -> list[str]:
    """Keys of the selected subsets, in v0.1 subset order."""
    keys = list(cfg.subset.keys())
    _require(bool(keys), f"profile {cfg.profile_name!r} defines no subset")
    by_name = {cfg.subset[k].name: k for k in keys}
    if cfg.subsets is None:
        chosen = keys
    else:
        chosen = []
        for want in cfg.subsets:
            key = want if want in cfg.subset else by_name.get(want)
            _require(key is not None, f"subsets: unknown subset {want!r}; known: {', '.join(keys)}")
            chosen.append(key)
        _require(bool(chosen), "subsets: the list is empty; name at least one subset or drop the key")
    order = {name: i for i, name in enumerate(vocab.SUBSET_ORDER)}
    return sorted(dict.fromkeys(chosen), key=lambda k: (order.get(cfg.subset[k].name, len(order)), k))


def _plan(key: str, sc: SubsetConf, cfg: DictConfig) -> SubsetPlan:
    where = f"subset.{key}"
    d = cfg.difficulty
    hard_from = d.hard_from.get(key, d.hard_from.get("default"))
    _require(hard_from is not None, f"difficulty.hard_from has no entry for subset {key!r} and no default "
                                    f"(difficulty {d.name!r} knows: {', '.join(d.hard_from) or 'none'})")
    cell = sc.layout.cell_size
    _require(cell is None or len(cell) == 2, f"{where}.layout.cell_size must be [min, max] or null")
    hard_share = d.hard_share.get(key, d.hard_share.get("default"))
    _require(hard_share is None or 0.0 <= hard_share <= 1.0,
             f"difficulty.hard_share.{key} must lie in [0, 1] (a share of the subset's tasks), got {hard_share!r}")
    rule = {k: v for k, v in OmegaConf.to_container(d, resolve=True).items()
            if k not in ("name", "hard_from", "hard_share", "preset")}
    try:
        preset = preset_from_conf(d.name, OmegaConf.to_container(d.preset, resolve=True))
    except PresetError as exc:
        raise ConfigError(str(exc)) from None
    cue_type = sc.cue_type if sc.cue_type is not None else cfg.render.cue_type
    _require(cue_type in CUE_OVERLAYS, f"{where}: cue_type {cue_type!r} must be one of "
                                       f"{', '.join(CUE_OVERLAYS.names())}")
    return SubsetPlan(
        subset=sc.name,
        source=sc.source,
        n_scenes=sc.scenes,
        n_dev=sc.dev_scenes,
        layout=LayoutParams(family=sc.layout.family, profile_weights=dict(sc.layout.profile_weights),
                            exception_weights=tuple(float(w) for w in sc.layout.exception_weights),
                            cell_size=(int(cell[0]), int(cell[1])) if cell is not None else None),
        region_type_weights=dict(sc.region_type_weights),
        case_weights=dict(sc.case_weights),
        region_sizes=RegionSizes(**OmegaConf.to_container(sc.region_sizes)),
        cue_type=cue_type,
        difficulty=DifficultyParams.from_json({**rule, "hard_from": int(hard_from), "hard_share": hard_share}),
        font_scale=sc.font_scale,
        source_options=OmegaConf.to_container(sc.source_options, resolve=True),
        dataset_version=cfg.dataset_version,
        preset=preset,
        balance=None if sc.balance is None else BalanceSpec(**OmegaConf.to_container(sc.balance)),
    )


def build_config(cfg: DictConfig) -> GenConfig:
    """Validate a composed config and map it onto plan, render and export settings."""
    _require(cfg.seed >= 0, f"seed must be a non-negative integer (got {cfg.seed})")
    _require(cfg.workers >= 1, f"workers must be at least 1 (got {cfg.workers})")
    r = cfg.render
    _require(0 <= r.png_compress_level <= 9, f"render.png_compress_level must be 0..9 (got {r.png_compress_level})")
    palette = _cue_palette(r.cue_palette)
    cue_color = _cue_color(r.cue_color, palette)
    _require(0 < r.cue.outline_fraction < 0.5,
             f"render.cue.outline_fraction must be in (0, 0.5) (got {r.cue.outline_fraction})")
    _require(1 <= r.cue.min_outline_px <= r.cue.max_outline_px,
             f"render.cue: need 1 <= min_outline_px <= max_outline_px (got {r.cue.min_outline_px}, "
             f"{r.cue.max_outline_px})")
    _require(0 < r.cue.mask_alpha <= 1, f"render.cue.mask_alpha must be in (0, 1] (got {r.cue.mask_alpha})")
    e = cfg.export
    _require(e.parquet_rows_per_group >= 1, "export.parquet_rows_per_group must be at least 1")
    _require(e.parquet_max_bytes_per_group >= 0,
             f"export.parquet_max_bytes_per_group must be 0 (no byte bound) or a number of bytes, e.g. "
             f"16777216 (got {e.parquet_max_bytes_per_group})")
    _require(e.parquet_rows_per_file >= 0, "export.parquet_rows_per_file must be 0 (one file per split) or more")
    _require(e.parquet_max_rows_per_file >= 0,
             "export.parquet_max_rows_per_file must be 0 (no cap) or more")
    _require(e.parquet_compression in ("none", "snappy", "gzip", "zstd", "brotli", "lz4"),
             f"export.parquet_compression {e.parquet_compression!r} must be one of none, snappy, gzip, zstd, "
             "brotli, lz4")
    try:
        controls = check_controls([str(name) for name in e.controls])
    except ValueError as exc:
        raise ConfigError(f"export.controls: {exc}") from None
    plans: list[SubsetPlan] = []
    names: dict[str, str] = {}
    for key in _select(cfg):
        sc = cfg.subset[key]
        _require(sc.name not in names, f"subset.{key}: subset {sc.name} is also defined by subset.{names.get(sc.name)}")
        names[sc.name] = key
        plan = _plan(key, sc, cfg)
        try:
            validate_plan(plan)
        except PlanError as exc:
            raise ConfigError(f"subset.{key}: {exc}") from None
        plans.append(plan)
    _require(str(r.png_encoder) in PNG_ENCODERS,
             f"render.png_encoder: unknown PNG encoder {r.png_encoder!r}; known: {', '.join(PNG_ENCODERS.names())}")
    render = RenderSettings(png_compress_level=int(r.png_compress_level), png_encoder=str(r.png_encoder),
                            cue=CueSettings(color=cue_color, palette=palette,
                                            outline_fraction=float(r.cue.outline_fraction),
                                            min_outline_px=int(r.cue.min_outline_px),
                                            max_outline_px=int(r.cue.max_outline_px),
                                            mask_alpha=float(r.cue.mask_alpha)))
    export = ExportSettings(parquet=bool(e.parquet), parquet_rows_per_group=int(e.parquet_rows_per_group),
                            parquet_max_bytes_per_group=int(e.parquet_max_bytes_per_group),
                            parquet_compression=str(e.parquet_compression), bridges=bool(e.bridges),
                            parquet_rows_per_file=int(e.parquet_rows_per_file),
                            parquet_max_rows_per_file=int(e.parquet_max_rows_per_file), controls=controls)
    output_dir = Path(cfg.output_dir) if cfg.output_dir else None
    return GenConfig(seed=int(cfg.seed), plans=tuple(plans), render=render, export=export,
                     plugins=tuple(cfg.plugins), recorded=recorded_config(cfg),
                     output_dir=output_dir, workers=int(cfg.workers),
                     overwrite=bool(cfg.overwrite), progress=bool(cfg.progress), shard=_shard(cfg, output_dir))


def _shard(cfg: DictConfig, output_dir: Path | None) -> ShardSpec | None:
    """``shard.*`` as a :class:`ShardSpec`, or None for an unsharded run."""
    sh = cfg.shard
    _require(sh.count >= 1, f"shard.count must be at least 1 (got {sh.count})")
    if sh.index is None:
        _require(sh.count == 1, f"shard.count={sh.count} needs shard.index=0..{sh.count - 1}, or run every shard: "
                                f"rose-gen -m hydra/launcher=joblib 'shard.index=range(0,{sh.count})' "
                                f"shard.count={sh.count} ...")
        return None
    _require(0 <= sh.index < sh.count, f"shard.index must be in 0..{sh.count - 1} for shard.count={sh.count} "
                                       f"(got {sh.index})")
    _require(output_dir is not None, "output_dir is required (the release the shards merge into), e.g. "
                                     "rose-gen profile=mini output_dir=out/mini shard.index=0 shard.count=2")
    root = Path(sh.dir) if sh.dir else Path(f"{output_dir}.shards")
    return ShardSpec(index=int(sh.index), count=int(sh.count), root=root, keep=bool(sh.keep))


def _is_rgb(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) == 3
            and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value))


def _cue_palette(conf: Any) -> tuple[tuple[str, tuple[int, int, int]], ...]:
    """``render.cue_palette`` (name -> [r, g, b], in tie-break order) as CueSettings.palette."""
    items = dict(OmegaConf.to_container(conf)) if isinstance(conf, DictConfig) else dict(conf)
    _require(bool(items), "render.cue_palette must name at least one colour")
    for name, rgb in items.items():
        _require(_is_rgb(rgb), f"render.cue_palette.{name} must be three integers 0..255 (got {rgb})")
    return tuple((str(name), (int(rgb[0]), int(rgb[1]), int(rgb[2]))) for name, rgb in items.items())


def _cue_color(value: Any, palette: tuple[tuple[str, tuple[int, int, int]], ...]) -> tuple[int, int, int] | None:
    """``render.cue_color``: None for auto, else the RGB of a palette name or of an [r, g, b] list."""
    if not isinstance(value, str):
        value = OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
        _require(_is_rgb(value), f"render.cue_color must be auto, a cue_palette name or three integers "
                                 f"0..255 (got {value})")
        return int(value[0]), int(value[1]), int(value[2])
    if value == "auto":
        return None
    names = dict(palette)
    _require(value in names, f"render.cue_color {value!r} must be auto, [r, g, b] or one of the cue_palette "
                             f"names {', '.join(names)}")
    return names[value]


def load_config(overrides: list[str]) -> GenConfig:
    """Compose and validate in one step."""
    return build_config(compose_config(overrides))


