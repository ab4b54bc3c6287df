"""plan -> render -> rows -> export, with ``workers`` processes.

Planning is pure and cheap and runs in the main process (it needs every scene of a
subset to keep pairs unique). Rendering and row building run per scene in worker
processes (``spawn``, so nothing depends on the parent's state); results come back in
plan order, so the release is byte-identical for any worker count.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose_gen.core.schema import SceneRows, SceneSpec, base_image_record, cue_image_record
from rose_gen.render.compose import CueSettings, RenderSettings, render_scene, scene_cue_color
from rose_gen.render.degrade import needs_preset_render, render_preset_scene
from rose_gen.sources import SOURCES, load_sources
from rose_gen.tasks.templates import build_scene_rows

if TYPE_CHECKING:  # workers import this module: keep Hydra and pyarrow out of it
    from rose_gen.release.config import GenConfig
    from rose_gen.release.export import ReleaseInfo

# Python packages whose versions can change the bytes of a release.
RENDER_LIBRARIES: tuple[str, ...] = ("numpy", "pillow", "pyarrow", "fonttools", "cairosvg", "cairocffi",
                                     "scikit-image", "scipy", "emoji", "pyyaml")


@dataclass(frozen=True)
class SceneResult:
    """One scene's encoded images (by release path) and its task rows."""

    scene_id: str
    images: dict[str, bytes]
    rows: SceneRows


def scene_rows(scene: SceneSpec, cue: CueSettings | None = None) -> SceneRows:
    """The task rows of a scene (what :func:`process_scene` returns beside the images).

    The cue-image rows carry the cue colour; with an auto ``cue`` colour this renders the
    scene's two tiles (no images are composed or encoded).
    """
    cue = CueSettings() if cue is None else cue
    color = scene_cue_color(scene, SOURCES.get(scene.source), cue)
    return build_scene_rows(scene, base_image_record(scene), cue_image_record(scene, color))


def process_scene(scene: SceneSpec, settings: RenderSettings) -> SceneResult:
    """Render one scene and build its rows (runs in a worker)."""
    source = SOURCES.get(scene.source)
    if needs_preset_render(scene):  # difficulty presets: second identity, jitter, degradation
        rendered = render_preset_scene(scene, source, settings)
    else:
        rendered = render_scene(scene, source, settings)
    base, cue = base_image_record(scene), cue_image_record(scene, rendered.cue_color)
    return SceneResult(scene_id=scene.scene_id,
                       images={base.path: rendered.base_png, cue.path: rendered.cue_png},
                       rows=build_scene_rows(scene, base, cue))


class PluginError(ValueError):
    """A module named in ``plugins`` cannot be imported (one-line message)."""


def import_plugins(modules: Sequence[str]) -> None:
    """Import built-in sources and the extra modules that register sources."""
    load_sources()
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise PluginError(f"plugins: cannot import {name!r} ({exc}); check the module name and that its "
                              "package is installed") from None


_worker_settings: RenderSettings | None = None


def _init_worker(plugins: tuple[str, ...], settings: RenderSettings, sys_path: list[str]) -> None:
    global _worker_settings
    for entry in reversed(sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    import_plugins(plugins)
    _worker_settings = settings


def _worker_job(scene: SceneSpec) -> SceneResult:
    assert _worker_settings is not None
    return process_scene(scene, _worker_settings)


SceneRunner = Callable[[Sequence[SceneSpec]], Iterator[SceneResult]]


@contextmanager
def scene_runner(settings: RenderSettings, *, workers: int, n_scenes: int,
                 plugins: Sequence[str] = ()) -> Iterator[SceneRunner]:
    """A function turning scenes into their results, in order, by ``workers`` processes (1: in-process).

    The worker processes start when the context opens, so they spawn and import while the
    caller is still planning; ``n_scenes`` (how many scenes will be submitted in all) caps
    their number. Batches submitted one after another come back in submission order.
    """
    if workers <= 1 or n_scenes <= 1:
        yield lambda scenes: (process_scene(scene, settings) for scene in scenes)
        return
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(min(workers, n_scenes), initializer=_init_worker,
                  initargs=(tuple(plugins), settings, list(sys.path))) as pool:
        yield lambda scenes: pool.imap(_worker_job, scenes, chunksize=1)


def library_versions() -> dict[str, str]:
    """Versions of the generator and of every library that can change output bytes."""
    from PIL import features

    versions = {"rose-toolkit": _version("rose-toolkit"), "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for name in RENDER_LIBRARIES:
        versions[name] = _version(name)
    versions["zlib (pillow)"] = str(features.version("zlib"))
    versions["freetype2 (pillow)"] = str(features.version("freetype2"))
    versions["cairo"] = cairo_version()
    return versions


def cairo_version() -> str:
    """Version of the system cairo library (what cairosvg renders with), without importing cairocffi."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("cairo")
    if name is None:
        return "not installed"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return "not installed"
    lib.cairo_version_string.restype = ctypes.c_char_p
    return lib.cairo_version_string().decode()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


SourceUse = tuple[str, Mapping[str, Any]]


def source_uses(plans: Iterable[Any], used: Iterable[str]) -> list[SourceUse]:
    """(source name, source_options) of every subset plan whose source a release used."""
    used = set(used)
    return [(p.source, p.source_options) for p in plans if p.source in used]


def _call_source_hook(name: str, hooks: tuple[str, ...], options: Mapping[str, Any]) -> Any:
    """Call the first hook the source has; a hook taking an argument gets the subset's source_options."""
    source = SOURCES.get(name)
    for attr in hooks:
        hook: Callable[..., Any] | None = getattr(source, attr, None)
        if hook is not None:
            return hook(dict(options)) if inspect.signature(hook).parameters else hook()
    return None


def source_assets(uses: Iterable[SourceUse]) -> dict[str, dict[str, str]]:
    """Per source, sha256 of every asset file it declares for the options used (``asset_versions()``)."""
    out: dict[str, dict[str, str]] = {}
    for name, options in uses:
        declared = _call_source_hook(name, ("asset_versions",), options) or {}
        out[name] = dict(sorted({**out.get(name, {}), **declared}.items()))
    return dict(sorted(out.items()))


def normalise_attribution(entry: Mapping[str, Any], source: str) -> dict[str, Any]:
    """One licence record in the release's shape: family, license, url, notes.

    Sources describe licences in their own words (``family`` or ``package``, ``license``
    or ``licence``, ``url`` or ``upstream``, ``notes``/``note``/``copyright``).
    """
    family = entry.get("family") or entry.get("package") or entry.get("id") or f"assets of source {source}"
    if entry.get("package_version") and not entry.get("family"):
        family = f"{family} {entry['package_version']}"
    notes = [str(entry[k]) for k in ("notes", "note", "copyright") if entry.get(k)]
    if entry.get("faces"):
        notes.append("faces: " + ", ".join(map(str, entry["faces"])))
    return {"family": str(family),
            "license": str(entry.get("license") or entry.get("licence") or "licence not declared by the source"),
            "url": str(entry.get("url") or entry.get("upstream") or ""),
            "notes": " ".join(notes)}


def source_attributions(uses: Iterable[SourceUse]) -> list[dict[str, Any]]:
    """Asset families with licences, merged over sources (``attribution()`` or ``licences()``)."""
    merged: dict[str, dict[str, Any]] = {}
    for name, options in uses:
        entries = _call_source_hook(name, ("attribution", "licences"), options)
        for entry in entries or [{"family": f"assets of source {name}"}]:
            record = normalise_attribution(entry, name)
            slot = merged.setdefault(record["family"], {**record, "sources": []})
            if name not in slot["sources"]:
                slot["sources"].append(name)
    return [merged[k] for k in sorted(merged)]


@dataclass(frozen=True)
class GenerationResult:
    """What a run produced."""

    path: Path
    written: bool
    scenes: int


def plan_subsets(config: GenConfig) -> Iterator[list[SceneSpec]]:
    """The scenes of each selected subset, one list per subset in config order (pure after plug-in import)."""
    from rose_gen.scene.plan import plan_subset

    import_plugins(config.plugins)
    for plan in config.plans:
        yield plan_subset(plan, config.seed, SOURCES.get(plan.source))


def plan_release(config: GenConfig) -> list[SceneSpec]:
    """Every scene of the selected subsets, in subset then scene order (pure after plug-in import)."""
    return [scene for scenes in plan_subsets(config) for scene in scenes]


Progress = Callable[[Iterator[Any], int], Iterator[Any]]  # wraps the result stream (a progress bar)
SceneSink = Callable[[int, SceneResult], None]


def render_release(config: GenConfig, sink: SceneSink, *, owns: Callable[[int], bool] | None = None,
                   n_scenes: int | None = None, progress: Progress | None = None) -> ReleaseInfo:
    """Plan every subset, render the scenes ``owns`` (release position -> bool; default all) and hand
    each result with its position to ``sink``, in position order; return the release's provenance.

    The workers start first and render each subset as soon as it is planned; provenance is
    gathered while they render. It covers every planned scene (not only the owned ones), so
    every shard of a release records the same provenance. ``n_scenes`` is how many scenes
    ``owns`` selects (it caps the worker count and sizes the progress bar).
    """
    from rose_gen.release.export import ReleaseInfo

    total = sum(plan.n_scenes for plan in config.plans)  # plan_subset makes exactly n_scenes per plan
    mine = total if n_scenes is None else n_scenes
    with scene_runner(config.render, workers=config.workers, n_scenes=mine, plugins=config.plugins) as run:
        batches: list[Iterator[tuple[int, SceneResult]]] = []
        used: set[str] = set()
        start = 0
        for scenes in plan_subsets(config):
            picked = [(start + k, scene) for k, scene in enumerate(scenes) if owns is None or owns(start + k)]
            start += len(scenes)
            batches.append(zip([p for p, _ in picked], run([scene for _, scene in picked]), strict=True))
            used.update(s.source for s in scenes)
        uses = source_uses(config.plans, used)
        info = ReleaseInfo(config=config.recorded, versions=library_versions(), assets=source_assets(uses),
                           attributions=source_attributions(uses))
        pairs: Iterator[tuple[int, SceneResult]] = itertools.chain.from_iterable(batches)
        if progress is not None:
            pairs = progress(pairs, mine)
        for position, result in pairs:
            sink(position, result)
    return info


def generate_release(config: GenConfig, *, progress: Progress | None = None) -> GenerationResult:
    """Plan, render and export the release described by ``config`` into its output_dir, atomically.

    With ``config.shard`` set, writes that shard's folder instead (:func:`generate_shard`).
    """
    from rose_gen.release.export import ReleaseWriter
    from rose_gen.release.folder import check_target

    if config.shard is not None:
        return generate_shard(config, progress=progress)
    if config.output_dir is None:
        raise ValueError("config.output_dir is not set")
    check_target(config.output_dir, overwrite=config.overwrite, config=config.recorded)
    with ReleaseWriter(config.output_dir, config.export, overwrite=config.overwrite) as writer:
        info = render_release(config, lambda _, r: writer.add_scene(r.rows, r.images), progress=progress)
        path, written = writer.commit(info)
    return GenerationResult(path=path, written=written, scenes=sum(p.n_scenes for p in config.plans))


def generate_shard(config: GenConfig, *, progress: Progress | None = None) -> GenerationResult:
    """Render the scenes of shard ``config.shard`` into its shard folder, atomically.

    A folder that already holds this shard of the same config is kept as it is (resume).
    """
    from rose_gen.release.shards import ShardWriter, check_shard_target, finished_shard

    spec = config.shard
    assert spec is not None
    total = sum(plan.n_scenes for plan in config.plans)
    if not config.overwrite and finished_shard(spec, config.recorded):
        return GenerationResult(path=spec.folder.absolute(), written=False, scenes=spec.size(total))
    check_shard_target(spec, overwrite=config.overwrite)
    with ShardWriter(spec, overwrite=config.overwrite) as writer:
        info = render_release(config, lambda pos, r: writer.add_scene(pos, r.rows, r.images), owns=spec.owns,
                              n_scenes=spec.size(total), progress=progress)
        path, written = writer.commit(info, total)
    return GenerationResult(path=path, written=written, scenes=spec.size(total))
