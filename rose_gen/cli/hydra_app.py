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
overrides fail as in a single run: one line, exit 2, nothing written; so does a launcher
whose plug-in or commands are missing (:mod:`rose_gen.cli.launchers`). Only
``shard.index`` may be swept; a release is one config. ``output_dir`` and ``shard.dir``
are made absolute first: a launcher may run a job in another folder (Ray runs tasks in
its worker's).

A shard that fails, is killed (out of memory, a signal) or never starts ends the run
with one line per unfinished shard naming the cause and, when known, the process and
its log; a killed shard's partial folder is removed and the next run makes it again.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.errors import CompactHydraException, HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rose_gen.cli.launchers import launcher_problem, register_resolvers
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
from rose_gen.release.shards import SHARD_SUMMARY, ShardSpec, remove_partial_folders, shard_name

SWEPT_KEY = "shard.index"
PATH_KEYS = ("output_dir", "shard.dir")  # made absolute before launching
FAILED_FILE = ".rose-gen-failed"  # a failed job's one-line error, in its shard folder
TRACEBACK_FILE = ".rose-gen-failed.log"  # and the traceback of an unexpected one
MESSAGES_SUFFIX = ".messages"  # a shard's stderr lines where the launcher keeps job output in files

register_resolvers()


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
    problem = launcher_problem(launcher_target(rest))
    if problem:
        raise ConfigError(problem)
    return config


def launcher_target(overrides: Sequence[str]) -> str:
    """The ``_target_`` of the launcher the overrides select (Hydra's basic one by default)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose("config", overrides=list(overrides), return_hydra_config=True)
    return str(cfg.hydra.launcher.get("_target_", ""))


def _quoted(value: str) -> str:
    if all(c.isalnum() or c in "_./-" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def absolute_paths(overrides: Sequence[str], config: GenConfig) -> list[str]:
    """``overrides`` with ``output_dir`` and ``shard.dir`` absolute (relative to this process's folder).

    A launcher may start a job in another folder (Ray tasks run in the Ray worker's), where a
    relative path would name another place than the one the merge reads.
    """
    out: list[str] = []
    given = set()
    for override in parse_overrides(list(overrides)):
        key = override.get_key_element()
        bare = key.lstrip("+~")
        value = override.value()
        if bare in PATH_KEYS and isinstance(value, str) and not override.is_sweep_override():
            given.add(bare)
            out.append(f"{key}={_quoted(str(Path(value).absolute()))}")
        else:
            out.append(override.input_line)
    if "output_dir" not in given and config.output_dir is not None and not config.output_dir.is_absolute():
        out.append(f"output_dir={_quoted(str(config.output_dir.absolute()))}")
    return out


def run_job(cfg: DictConfig) -> str | None:
    """Hydra's task function: make one shard (runs in the launcher's process, job or task).

    A failure is written to ``FAILED_FILE`` in the job's folder (its shard folder) and
    reported by :class:`MergeShards` in the launching process as one line, since a job's
    own output may be in a cluster log; the job itself returns normally.
    """
    from hydra.core.hydra_config import HydraConfig

    from rose_gen.cli.gen import bad_input_errors
    from rose_gen.release.pipeline import generate_release

    folder = Path(HydraConfig.get().runtime.output_dir)
    failed = folder / FAILED_FILE
    failed.unlink(missing_ok=True)
    (folder / TRACEBACK_FILE).unlink(missing_ok=True)
    running = running_marker(folder)
    log = _launcher_log()
    running.parent.mkdir(parents=True, exist_ok=True)
    running.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "log": log}) + "\n",
                       encoding="utf-8")
    messages: list[str] = []
    try:
        config = build_config(schema_config(cfg))
        result = generate_release(config)
    except (*bad_input_errors(), RuntimeError, OSError) as exc:  # RuntimeError: missing assets, rendering
        _fail(failed, f"shard {cfg.shard.index}: {exc}")
        return None
    except Exception as exc:  # noqa: BLE001 - a fault of ours: one line here, the traceback kept beside it
        (folder / TRACEBACK_FILE).write_text(traceback.format_exc(), encoding="utf-8")
        _fail(failed, f"shard {cfg.shard.index}: {type(exc).__name__}: {exc} (traceback in {folder / TRACEBACK_FILE})")
        return None
    finally:
        running.unlink(missing_ok=True)
    what = "wrote" if result.written else "kept the finished"
    messages.append(f"rose-gen: {what} {result.path} ({result.scenes} scenes)")
    messages.extend(f"rose-gen: preset: {note}" for note in result.notes)
    for line in messages:
        print(line, file=sys.stderr, flush=True)
    if log is not None:  # the launcher keeps this job's stderr in a file: the merge repeats the lines
        folder.with_name(folder.name + MESSAGES_SUFFIX).write_text("\n".join(messages) + "\n", encoding="utf-8")
    return str(result.path)


def _fail(failed: Path, message: str) -> None:
    failed.parent.mkdir(parents=True, exist_ok=True)
    failed.write_text(message + "\n", encoding="utf-8")


def running_marker(folder: Path) -> Path:
    """The file beside a shard's folder that says a job is making it (pid, host, log)."""
    return folder.with_name(f".{folder.name}.running")


def _launcher_log() -> str | None:
    """The file the launcher writes this job's stderr to (submitit), or None when it reaches a terminal."""
    if "SUBMITIT_FOLDER" not in os.environ:
        return None
    try:
        import submitit

        return str(submitit.JobEnvironment().paths.stderr)
    except Exception:  # noqa: BLE001 - only a hint for the failure line
        return None


def unfinished_shards(root: Path, count: int, cause: str) -> list[str]:
    """One line per shard of ``root`` without a finished folder: its own error, or how it ended.

    ``cause`` is the launcher's one-line account of the failure, for shards that left no word.
    """
    lines = []
    for index in range(count):
        folder = root / shard_name(index, count)
        if (folder / SHARD_SUMMARY).is_file():
            continue
        if (folder / FAILED_FILE).is_file():
            lines.append((folder / FAILED_FILE).read_text(encoding="utf-8").strip())
            continue
        marker = running_marker(folder)
        try:
            job = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            lines.append(f"shard {index}: did not finish ({cause})")
            continue
        log = f"; its log: {job['log']}" if job.get("log") else ""
        lines.append(f"shard {index}: stopped while running (pid {job.get('pid')} on {job.get('host')}; a killed "
                     f"process, e.g. out of memory, or stopped with the others; {cause}){log}")
    return lines


def tidy_after_failure(root: Path, count: int) -> None:
    """Remove what unfinished shards left that no rerun can use: partial folders and running markers."""
    remove_partial_folders(root, count)
    for index in range(count):
        running_marker(root / shard_name(index, count)).unlink(missing_ok=True)


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
        for folder in folders:  # lines of jobs whose stderr went to the launcher's files
            kept = folder.with_name(folder.name + MESSAGES_SUFFIX)
            if kept.is_file():
                sys.stderr.write(kept.read_text(encoding="utf-8"))
                kept.unlink()
        try:
            path, written, scenes = merge_shards(folders, gen.output_dir, overwrite=gen.overwrite,
                                                 workers=max(1, int(gen.workers)))
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
        folder = root / shard_name(i, count)
        shutil.rmtree(folder, ignore_errors=True)
        folder.with_name(folder.name + MESSAGES_SUFFIX).unlink(missing_ok=True)
    tidy_after_failure(root, count)
    (root / "multirun.yaml").unlink(missing_ok=True)
    shutil.rmtree(root / ".submitit", ignore_errors=True)
    if root.is_dir() and not any(root.iterdir()):
        root.rmdir()


def multirun(overrides: Sequence[str]) -> int:
    """``rose-gen -m ...``: check the sweep, then run it through ``hydra.main``; the exit status."""
    import hydra

    try:
        config = check_sweep(overrides)
        overrides = absolute_paths(overrides, config)
    except ConfigError as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 2
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"rose-gen: error: {one_line(exc)}", file=sys.stderr)
        return 2
    assert config.shard is not None
    root, count = config.shard.root.absolute(), config.shard.count
    tidy_after_failure(root, count)  # markers and partial folders of an earlier, killed run
    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base=None)(run_job)
    argv, debugging = sys.argv, os.environ.get("HYDRA_FULL_ERROR") == "1"
    sys.argv = ["rose-gen", "--multirun", *overrides]
    # Hydra re-raises instead of printing a stack trace, so a launcher's failure becomes our lines.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        app()
    except SystemExit as exc:  # a failed job or merge, already reported on stderr
        return int(exc.code) if isinstance(exc.code, int) else 1
    except ShardRunError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        tidy_after_failure(root, count)
        done = count - len(unfinished_shards(root, count, ""))
        print(f"rose-gen: interrupted: {done} of {count} shards finished and are kept in {root}; run the same "
              "command again to make the rest and merge", file=sys.stderr)
        return 130
    except Exception as exc:  # the launcher (a killed job, a cluster that cannot be reached, ...)
        if debugging:
            raise
        said = f"{type(exc).__name__}: {_first_line(exc)}"
        lines = unfinished_shards(root, count, f"the launcher said: {said}")
        if not lines:
            lines = [f"after every shard finished: {said}"]
        elif all(" did not finish (" in line for line in lines):  # nothing ran: the launcher itself failed
            lines = [f"the launcher failed before any shard ran: {said}"]
        for line in lines:
            print(f"rose-gen: error: {line}", file=sys.stderr)
        tidy_after_failure(root, count)
        left = len(unfinished_shards(root, count, ""))
        print(f"rose-gen: error: {left} of {count} shards did not finish; nothing merged. Fix the cause and "
              "run the same command again: finished shards are kept", file=sys.stderr)
        return 1
    finally:
        sys.argv = argv
        if not debugging:
            os.environ.pop("HYDRA_FULL_ERROR", None)
    return 0


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
