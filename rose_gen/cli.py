"""``rose-gen``: generate a ROSE release from Hydra-style overrides.

Composes ``conf/`` with Hydra's compose API (no output folders, no log files), validates,
then plans, renders and exports. Bad input gives one line on stderr and exit status 2;
a missing asset or a rendering failure gives one line and exit status 1.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence

from rose_gen.config import CONF_DIR, ConfigError, build_config, compose_config

USAGE = """\
usage: rose-gen profile=<mini|v0_1> output_dir=<dir> [seed=<int>] [workers=<n>]
                [subsets=[glyph,emoji_style,...]] [overwrite=true] [key=value ...]
       rose-gen --cfg [overrides ...]     print the composed config and exit
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-gen``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["preview"]:
        from rose_gen.preview.cli import main as preview_main

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

    from rose_eval.registry import RegistryError
    from rose_gen.export import ReleaseError
    from rose_gen.pipeline import PluginError
    from rose_gen.plan import PlanError

    try:
        composed = compose_config(args)
        config = build_config(composed)
        if show:
            print(OmegaConf.to_yaml(composed), end="")
            return 0
        if config.output_dir is None:
            raise ConfigError("output_dir is required, e.g. rose-gen profile=mini output_dir=out/mini")
        from rose_gen.pipeline import generate_release

        result = generate_release(config, progress=_progress(config.progress))
    except (ConfigError, PlanError, PluginError, RegistryError, ReleaseError) as exc:
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as exc:  # AssetError, ManifestError, RenderError, disk errors
        print(f"rose-gen: error: {exc}", file=sys.stderr)
        return 1
    what = "wrote" if result.written else "identical release already present at"
    print(f"rose-gen: {what} {result.path} ({result.scenes} scenes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
