"""``rose-gen``: generate a ROSE release (or one shard of it) from Hydra-style overrides.

A single run composes ``conf/`` with Hydra's compose API (no output folders, no log
files), validates, then plans, renders and exports. ``rose-gen -m ...`` runs every shard
on a Hydra launcher and merges them (:mod:`rose_gen.cli.hydra_app`); ``rose-gen merge``
assembles shard folders into the release (:mod:`rose_gen.release.merge`). Bad input gives one
line on stderr and exit status 2; a missing asset or a rendering failure gives one line
and exit status 1.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from rose_gen.release.config import CONF_DIR, ConfigError, build_config, compose_config

USAGE = """\
usage: rose-gen profile=<mini|v0_1> output_dir=<dir> [seed=<int>] [workers=<n>]
                [subsets=[glyph,emoji_style,...]] [overwrite=true] [key=value ...]
       rose-gen --cfg [overrides ...]     print the composed config and exit
       rose-gen ... shard.index=<i> shard.count=<n>          make one shard (into <output_dir>.shards/)
       rose-gen -m hydra/launcher=joblib 'shard.index=range(0,<n>)' shard.count=<n> ...
                                          make every shard on a Hydra launcher, then merge
                                          (launchers: joblib, rose_slurm, rose_ray, submitit_local)
       rose-gen merge <shard folder | folder of shards>... <release dir> [--overwrite] [--workers N]
       rose-gen preview <release> [--out DIR] [--per_subset N]   contact sheets + HTML index

Config groups (conf/): profile={profiles}, difficulty={difficulty}, render={render}, export={export}.
Any key of the composed config can be overridden, e.g. subset.glyph.scenes=20,
render.cue_type=MASK, export.parquet=false. See `rose-gen --cfg` for every key.
"""


def _options(group: str) -> str:
    return "|".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml")))


def _progress(enabled: bool):
    def wrap(results: Iterator, total: int) -> Iterator:
        from tqdm import tqdm

        yield from tqdm(results, total=total, unit="scene", desc="rose-gen", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)

    return wrap


def bad_input_errors() -> tuple[type[Exception], ...]:
    """The errors that mean bad input (one line, exit 2); imported on first use."""
    from rose_eval.registry import RegistryError
    from rose_gen.release.folder import ReleaseError
    from rose_gen.release.pipeline import PluginError
    from rose_gen.scene.plan import PlanError

    return ConfigError, PlanError, PluginError, RegistryError, ReleaseError


def merge_main(args: list[str]) -> int:
    """``rose-gen merge <shards>... <release> [--overwrite] [--workers N]``."""
    from rose_gen.release.folder import ReleaseError
    from rose_gen.release.merge import merge_shards

    usage = "usage: rose-gen merge <shard folder | folder of shards>... <release dir> [--overwrite] [--workers N]"
    overwrite = "--overwrite" in args
    rest = [a for a in args if a != "--overwrite"]
    workers, paths, bad = 1, [], None
    while rest:
        arg = rest.pop(0)
        if arg == "--workers" or arg.startswith("--workers="):
            value = arg.split("=", 1)[1] if "=" in arg else (rest.pop(0) if rest else "")
            if not value.isdigit() or int(value) < 1:
                bad = f"--workers needs a whole number of at least 1, got {value!r}"
            else:
                workers = int(value)
        elif arg.startswith("-"):
            bad = bad or f"unknown option {arg}"
        else:
            paths.append(arg)
    if bad or len(paths) < 2:
        print(f"rose-gen: error: merge: {bad or 'need shard folders and a release folder'}; {usage}", file=sys.stderr)
        return 2
    try:
        path, written, scenes = merge_shards([Path(p) for p in paths[:-1]], Path(paths[-1]), overwrite=overwrite,
                                             workers=workers)
    except (ReleaseError, ConfigError) as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 1
    what = "wrote" if written else "identical release already present at"
    print(f"rose-gen: {what} {path} ({scenes} scenes)", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-gen``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["merge"]:
        return merge_main(args[1:])
    if args[:1] in (["-m"], ["--multirun"]) and not any(a in ("-h", "--help", "--cfg") for a in args):
        from rose_gen.cli.hydra_app import multirun

        return multirun(args[1:])
    if args[:1] == ["preview"]:
        from rose_gen.cli.preview import main as preview_main

        return preview_main(args[1:])
    if any(a in ("-h", "--help") for a in args):
        print(USAGE.format(profiles=_options("profile"), difficulty=_options("difficulty"),
                           render=_options("render"), export=_options("export")), end="")
        return 0
    show = "--cfg" in args
    args = [a for a in args if a != "--cfg"]
    flags = [a for a in args if a.startswith("-")]
    if flags:
        print(f"rose-gen: error: unknown option {flags[0]}; arguments are key=value overrides "
              "(see rose-gen --help)", file=sys.stderr)
        return 2

    from omegaconf import OmegaConf

    try:
        composed = compose_config(args)
        config = build_config(composed)
        if show:
            print(OmegaConf.to_yaml(composed), end="")
            return 0
        if config.output_dir is None:
            raise ConfigError("output_dir is required, e.g. rose-gen profile=mini output_dir=out/mini")
        from rose_gen.release.pipeline import generate_release

        result = generate_release(config, progress=_progress(config.progress))
    except bad_input_errors() as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as exc:  # AssetError, ManifestError, RenderError, disk errors
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 1
    what = "wrote" if result.written else "identical release already present at"
    if config.shard is not None:
        what = "wrote shard" if result.written else "finished shard already present at"
    print(f"rose-gen: {what} {result.path} ({result.scenes} scenes)", file=sys.stderr)
    for note in result.notes:
        print(f"rose-gen: preset: {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
