"""``rose-gen -m``: every shard of a release on one of Hydra's launchers, then the merge.

``rose-gen -m hydra/launcher=joblib 'shard.index=range(0,4)' shard.count=4 profile=v0_1
output_dir=out/v0_1`` runs Hydra's real application entry (``hydra.main``) in multirun
mode: the basic sweeper expands ``shard.index``, the chosen launcher runs one job per
shard (local processes with joblib, SLURM jobs with ``hydra/launcher=rose_slurm``, Ray
tasks with ``hydra/launcher=rose_ray``) and each job writes its shard folder, which is
also its Hydra job folder (``conf/config.yaml``: ``hydra.sweep``). When the sweep ends,
the :class:`MergeShards` callback merges the shards into ``output_dir`` and removes
them (``shard.keep=true`` keeps them).

Before anything is launched the sweep is checked with Hydra's compose API, so bad
overrides fail as in a single run: one line, exit 2, nothing written. Only
``shard.index`` may be swept; a release is one config.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.errors import CompactHydraException, HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rose_gen.release.config import (
    CONF_DIR,
    ConfigError,
    GenConfig,
    build_config,
    compose_config,
    one_line,
    parse_overrides,
    schema_config,
)
from rose_gen.release.shards import SHARD_SUMMARY, ShardSpec, shard_name

SWEPT_KEY = "shard.index"
FAILED_FILE = ".rose-gen-failed"  # a failed job's one-line error, in its shard folder


class ShardRunError(CompactHydraException):
    """The merge after the sweep failed (one line)."""


def sweep_jobs(overrides: Sequence[str]) -> tuple[list[int], list[str]]:
    """(shard indices of the sweep, the other overrides); ConfigError when the sweep is not a shard sweep."""
    parsed = parse_overrides(list(overrides))
    indices: list[int] | None = None
    rest: list[str] = []
    for override in parsed:
        key = override.get_key_element().lstrip("+~")
        if key == SWEPT_KEY:
            values = list(override.sweep_string_iterator()) if override.is_sweep_override() \
                else [str(override.value())]
            try:
                indices = [int(v) for v in values]
            except ValueError:
                raise ConfigError(f"{SWEPT_KEY} must be integers, e.g. 'shard.index=range(0,4)' "
                                  f"(got {override.input_line})") from None
        elif override.is_sweep_override():
            raise ConfigError(f"rose-gen -m sweeps {SWEPT_KEY} only (got {override.input_line!r}); a release is one "
                              "config: run one sweep per seed or preset, each with its own output_dir")
        else:
            rest.append(override.input_line)
    if not indices:
        raise ConfigError("rose-gen -m runs the shards of a release: add 'shard.index=range(0,N)' shard.count=N")
    if len(set(indices)) != len(indices):
        raise ConfigError(f"{SWEPT_KEY} names a shard twice ({', '.join(map(str, indices))}); give each index once")
    return indices, rest


def check_sweep(overrides: Sequence[str]) -> GenConfig:
    """Compose and validate every job of the sweep without launching it; the config of its first job."""
    indices, rest = sweep_jobs(overrides)
    config = build_config(compose_config([*rest, f"{SWEPT_KEY}={indices[0]}"]))
    assert config.shard is not None
    bad = [i for i in indices if not 0 <= i < config.shard.count]
    if bad:
        raise ConfigError(f"{SWEPT_KEY} {bad[0]} is outside 0..{config.shard.count - 1} for "
                          f"shard.count={config.shard.count}")
    return config


def run_job(cfg: DictConfig) -> str | None:
    """Hydra's task function: make one shard (runs in the launcher's process, job or task).

    A failure is written to ``FAILED_FILE`` in the job's folder (its shard folder) and
    reported by :class:`MergeShards` in the launching process as one line, since a job's
    own output may be in a cluster log; the job itself returns normally.
    """
    from hydra.core.hydra_config import HydraConfig

    from rose_gen.cli.gen import bad_input_errors
    from rose_gen.release.pipeline import generate_release

    failed = Path(HydraConfig.get().runtime.output_dir) / FAILED_FILE
    failed.unlink(missing_ok=True)
    try:
        config = build_config(schema_config(cfg))
        result = generate_release(config)
    except (*bad_input_errors(), RuntimeError, OSError) as exc:  # RuntimeError: missing assets, rendering
        message = f"shard {cfg.shard.index}: {exc}"
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text(message + "\n", encoding="utf-8")
        return None
    what = "wrote" if result.written else "kept the finished"
    print(f"rose-gen: {what} {result.path} ({result.scenes} scenes)", file=sys.stderr, flush=True)
    for note in result.notes:
        print(f"rose-gen: preset: {note}", file=sys.stderr, flush=True)
    return str(result.path)


def _spec(cfg: DictConfig) -> tuple[GenConfig, ShardSpec]:
    task = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    plain = OmegaConf.to_container(task, resolve=False)
    assert isinstance(plain, dict)
    plain.setdefault("shard", {})["index"] = 0
    config = build_config(schema_config(OmegaConf.create(plain)))
    assert config.shard is not None
    return config, config.shard


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover - hydra-core < 1.3
    Callback = object  # type: ignore[misc,assignment]


class MergeShards(Callback):
    """Hydra callback: when the sweep ends, merge the shards into ``output_dir`` if all are there."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from rose_gen.release.folder import ReleaseError
        from rose_gen.release.merge import merge_shards

        try:
            gen, spec = _spec(config)
        except ConfigError as exc:
            raise ShardRunError(f"rose-gen: error: {exc}") from None
        folders = [spec.root / shard_name(i, spec.count) for i in range(spec.count)]
        failures = [(f / FAILED_FILE).read_text(encoding="utf-8").strip() for f in folders if (f / FAILED_FILE).is_file()]
        if failures:
            for message in failures:
                print(f"rose-gen: error: {message}", file=sys.stderr)
            print(f"rose-gen: error: {len(failures)} of {spec.count} shards failed; nothing merged. Fix the cause and "
                  "run the same command again: finished shards are kept", file=sys.stderr)
            sys.exit(1)  # SystemExit passes Hydra's error report (which would add a stack-trace hint)
        missing = [i for i, f in enumerate(folders) if not (f / SHARD_SUMMARY).is_file()]
        if missing:
            print(f"rose-gen: {spec.count - len(missing)} of {spec.count} shards are in {spec.root}; make shards "
                  f"{', '.join(map(str, missing[:8]))}{', ...' if len(missing) > 8 else ''}, then run "
                  f"rose-gen merge {spec.root} {gen.output_dir}", file=sys.stderr)
            return
        assert gen.output_dir is not None
        try:
            path, written, scenes = merge_shards(folders, gen.output_dir, overwrite=gen.overwrite)
        except ReleaseError as exc:
            raise ShardRunError(f"rose-gen: error: {exc}") from None
        if not spec.keep:
            remove_shards(spec.root, spec.count)
        what = "wrote" if written else "identical release already present at"
        print(f"rose-gen: {what} {path} ({scenes} scenes from {spec.count} shards)", file=sys.stderr)


def remove_shards(root: Path, count: int) -> None:
    """Remove the shard folders of a merged sweep, Hydra's and submitit's files beside them, and the
    folder itself when nothing else is left in it."""
    for i in range(count):
        shutil.rmtree(root / shard_name(i, count), ignore_errors=True)
    (root / "multirun.yaml").unlink(missing_ok=True)
    shutil.rmtree(root / ".submitit", ignore_errors=True)
    if root.is_dir() and not any(root.iterdir()):
        root.rmdir()


def multirun(overrides: Sequence[str]) -> int:
    """``rose-gen -m ...``: check the sweep, then run it through ``hydra.main``; the exit status."""
    import hydra

    try:
        check_sweep(overrides)
    except ConfigError as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 2
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"rose-gen: error: {one_line(exc)}", file=sys.stderr)
        return 2
    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base=None)(run_job)
    argv = sys.argv
    sys.argv = ["rose-gen", "--multirun", *overrides]
    try:
        app()
    except SystemExit as exc:  # Hydra reports a failed job or merge on stderr and exits 1
        return int(exc.code) if isinstance(exc.code, int) else 1
    finally:
        sys.argv = argv
    return 0
