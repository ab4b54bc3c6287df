"""draw -> render -> rank -> rows -> export, with ``workers`` processes.

A scene is drawn (planned, and checked visible as rendered: :mod:`rose_gen.scene.redraw`)
and rendered in the same worker process, so its tiles are drawn once: the visibility check
hands them to the renderer. A worker keeps what a subset's scenes share (its pool, splits
and similarity cut, :class:`rose_gen.scene.plan.SubsetDraws`), built once per subset.

Results come back in release order, so the release is byte-identical for any worker count.
Images go to the writer at once; a subset's difficulty labels are ranked over all its
scenes (``difficulty.hard_share``), so its rows are built in the main process when its
last scene is back (at once per scene when labels need no ranking). The main process holds
at most one subset's drawn scene specs (~5 KB each) and a bounded window of scenes in the
workers' hands (:func:`windowed`), so memory does not grow with the release, and it draws
no pixels itself.
"""

from __future__ import annotations

import importlib
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rose_gen.core.schema import SceneRows, SceneSpec, base_image_record, cue_image_record
from rose_gen.release.processes import spawn_pool
from rose_gen.release.provenance import release_info
from rose_gen.release.ranked_rows import RankedRows, hard_shares, rows_of
from rose_gen.render.compose import RGB, CueSettings, RenderSettings, render_scene, scene_cue_color
from rose_gen.render.degrade import needs_preset_render, render_preset_scene
from rose_gen.scene.presets import PresetTally
from rose_gen.scene.redraw import DrawnCheck
from rose_gen.sources import SOURCES, load_sources

if TYPE_CHECKING:  # workers import this module: keep Hydra and pyarrow out of it
    from rose_gen.release.config import GenConfig
    from rose_gen.release.export import ReleaseInfo
    from rose_gen.scene.plan import SubsetDraws, SubsetPlan


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
    return rows_of(scene, scene_cue_color(scene, SOURCES.get(scene.source), cue))


def render_images(scene: SceneSpec, settings: RenderSettings,
                  check: DrawnCheck | None = None) -> tuple[dict[str, bytes], RGB | None]:
    """The scene's two encoded images by release path, and the colour its cue was drawn in.

    ``check``: the scene's visibility check, whose tiles (and preset base image) are reused.
    """
    source = SOURCES.get(scene.source)
    tiles = None if check is None else check.tiles
    if needs_preset_render(scene):  # difficulty presets: second identity, jitter, degradation
        rendered = render_preset_scene(scene, source, settings, tiles=tiles,
                                       base=None if check is None else check.base)
    else:
        rendered = render_scene(scene, source, settings, tiles=tiles)
    base, cue = base_image_record(scene), cue_image_record(scene, rendered.cue_color)
    return {base.path: rendered.base_png, cue.path: rendered.cue_png}, rendered.cue_color


def process_scene(scene: SceneSpec, settings: RenderSettings) -> SceneResult:
    """Render one planned scene alone and build its rows (``rose-verify``; tests)."""
    images, color = render_images(scene, settings)
    return SceneResult(scene_id=scene.scene_id, images=images, rows=rows_of(scene, color))


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


def check_source_options(config: GenConfig) -> None:
    """Refuse ``source_options`` keys a subset's source does not read, before anything is drawn
    (a misspelt key would otherwise fail in a worker after the progress bar, or be ignored).
    Sources without ``option_keys`` (plug-ins may omit it) are not checked."""
    from rose_gen.scene.plan import PlanError

    import_plugins(config.plugins)
    keys = {str(v.get("name")): k for k, v in (config.recorded.get("subset") or {}).items()
            if isinstance(v, dict)}
    for plan in config.plans:
        known = getattr(SOURCES.get(plan.source), "option_keys", None)
        unknown = sorted(set(plan.source_options) - set(known)) if known is not None else []
        if unknown:
            key = keys.get(plan.subset, plan.subset)
            raise PlanError(f"subset.{key}.source_options: unknown key(s) {', '.join(unknown)} for source "
                              f"{plan.source!r}; known: {', '.join(sorted(known))}")


@dataclass(frozen=True)
class SceneJob:
    """Scene ``k`` of ``config.plans[subset]``, to draw and render."""

    subset: int
    k: int


@dataclass(frozen=True)
class DrawnResult:
    """What a worker returns for a :class:`SceneJob`: the scene as drawn (difficulty not yet
    ranked), its images by release path and the colour its cue was drawn in."""

    scene: SceneSpec
    images: dict[str, bytes]
    cue_color: RGB | None = None


class SceneDrawer:
    """Draws and renders the scenes of a config's subsets; one per process.

    It keeps the shared draws of the last two subsets it saw (the window of scenes in
    flight can straddle a subset boundary), so each subset's pool is built once per process.
    """

    KEEP = 2

    def __init__(self, plans: Sequence[SubsetPlan], seed: int, settings: RenderSettings) -> None:
        self.plans, self.seed, self.settings = tuple(plans), seed, settings
        self.draws: dict[int, SubsetDraws] = {}

    def subset_draws(self, index: int) -> SubsetDraws:
        """The shared draws of ``plans[index]`` (built on first use)."""
        from rose_gen.scene.plan import SubsetDraws

        if index not in self.draws:
            plan = self.plans[index]
            self.draws[index] = SubsetDraws.build(plan, self.seed, SOURCES.get(plan.source))
            while len(self.draws) > self.KEEP:
                del self.draws[next(iter(self.draws))]
        return self.draws[index]

    def __call__(self, job: SceneJob) -> DrawnResult:
        drawn = self.subset_draws(job.subset).draw(job.k)
        images, color = render_images(drawn.scene, self.settings, drawn.check)
        return DrawnResult(drawn.scene, images, color)


_worker_drawer: SceneDrawer | None = None


def _init_worker(plugins: tuple[str, ...], plans: tuple[SubsetPlan, ...], seed: int, settings: RenderSettings,
                 sys_path: list[str]) -> None:
    global _worker_drawer
    for entry in reversed(sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    import_plugins(plugins)
    _worker_drawer = SceneDrawer(plans, seed, settings)


def _worker_job(job: SceneJob) -> DrawnResult:
    assert _worker_drawer is not None
    return _worker_drawer(job)


T = TypeVar("T")
R = TypeVar("R")
SceneRunner = Callable[[Iterable[SceneJob]], Iterator[DrawnResult]]

WINDOW_PER_WORKER = 4  # scenes submitted and not yet read, per worker: enough to keep each one busy


def windowed(submit: Callable[[T], Callable[[], R]], items: Iterable[T], window: int) -> Iterator[R]:
    """The results of ``items`` in order, with at most ``window`` submitted and not yet read.

    ``submit`` starts one item and returns how to wait for its result. ``items`` is read
    lazily, only as results are taken, so a long stream is never held whole.
    """
    pending: deque[Callable[[], R]] = deque()
    for item in items:
        pending.append(submit(item))
        if len(pending) >= window:
            yield pending.popleft()()
    while pending:
        yield pending.popleft()()


@contextmanager
def scene_runner(config: GenConfig, *, n_jobs: int) -> Iterator[SceneRunner]:
    """A function turning a stream of :class:`SceneJob` into their results, in order, by
    ``config.workers`` processes (1: in this process).

    The worker processes start when the context opens; ``n_jobs`` (how many jobs will be
    submitted in all) caps their number. At most :data:`WINDOW_PER_WORKER` jobs per worker
    are in flight and unread (:func:`windowed`), so a slow reader holds back the workers
    instead of buffering their images.
    """
    plans, workers = tuple(config.plans), config.workers
    if workers <= 1 or n_jobs <= 1:
        import_plugins(config.plugins)
        drawer = SceneDrawer(plans, config.seed, config.render)
        yield lambda jobs: (drawer(job) for job in jobs)
        return
    n = min(workers, n_jobs)
    initargs = (tuple(config.plugins), plans, config.seed, config.render, list(sys.path))
    with spawn_pool(n, initializer=_init_worker, initargs=initargs) as pool:
        yield lambda jobs: windowed(lambda job: pool.apply_async(_worker_job, (job,)).get, jobs,
                                    WINDOW_PER_WORKER * n)


@dataclass(frozen=True)
class GenerationResult:
    """What a run produced."""

    path: Path
    written: bool
    scenes: int
    notes: tuple[str, ...] = ()  # knobs a difficulty preset did not apply as stated (one line each)


def plan_subsets(config: GenConfig) -> Iterator[list[SceneSpec]]:
    """The scenes of each selected subset, one list per subset in config order (pure after plug-in import;
    one process: ``rose-verify`` and tests; a release draws its scenes in the workers)."""
    from rose_gen.scene.plan import plan_subset

    import_plugins(config.plugins)
    for plan in config.plans:
        yield plan_subset(plan, config.seed, SOURCES.get(plan.source))


def plan_release(config: GenConfig) -> list[SceneSpec]:
    """Every scene of the selected subsets, in subset then scene order (pure after plug-in import)."""
    return [scene for scenes in plan_subsets(config) for scene in scenes]


Progress = Callable[[Iterator[Any], int], Iterator[Any]]  # wraps the result stream (a progress bar)


# Where a run's scenes go, by release position, in position order: each one's images and its
# spec as drawn (difficulty not yet ranked: rose_gen.release.ranked_rows.RankedRows).
SceneSink = Callable[[int, DrawnResult], None]


def release_jobs(plans: Sequence[SubsetPlan], owns: Callable[[int], bool] | None = None) -> Iterator[tuple[int, SceneJob]]:
    """(release position, job) for every scene ``owns`` selects (default: all), in release order."""
    start = 0
    for index, plan in enumerate(plans):
        for k in range(1, plan.n_scenes + 1):
            if owns is None or owns(start + k - 1):
                yield start + k - 1, SceneJob(index, k)
        start += plan.n_scenes


def render_release(config: GenConfig, sink: SceneSink, *, owns: Callable[[int], bool] | None = None,
                   progress: Progress | None = None) -> ReleaseInfo:
    """Draw and render the scenes ``owns`` selects (release position -> bool; default all), hand each
    one's images and drawn spec to ``sink`` in position order, and return the release's provenance.

    The provenance is gathered in a thread while the workers draw and render.
    """
    import_plugins(config.plugins)  # the provenance names every subset's source
    plans = tuple(config.plans)
    n_jobs = sum(1 for _ in release_jobs(plans, owns))
    positions: deque[int] = deque()

    def queued() -> Iterator[SceneJob]:
        for position, job in release_jobs(plans, owns):
            positions.append(position)
            yield job

    with ThreadPoolExecutor(1, thread_name_prefix="rose-provenance") as background:
        info = background.submit(release_info, config)
        with scene_runner(config, n_jobs=n_jobs) as run:
            results: Iterator[DrawnResult] = run(queued())
            if progress is not None:
                results = progress(results, n_jobs)
            for result in results:
                sink(positions.popleft(), result)
        return info.result()


def generate_release(config: GenConfig, *, progress: Progress | None = None) -> GenerationResult:
    """Plan, render and export the release described by ``config`` into its output_dir, atomically.

    With ``config.shard`` set, writes that shard's folder instead (:func:`generate_shard`).
    """
    from rose_gen.release.export import ReleaseWriter
    from rose_gen.release.folder import check_target

    check_source_options(config)
    if config.shard is not None:
        return generate_shard(config, progress=progress)
    if config.output_dir is None:
        raise ValueError("config.output_dir is not set")
    check_target(config.output_dir, overwrite=config.overwrite, config=config.recorded)
    with ReleaseWriter(config.output_dir, config.export, overwrite=config.overwrite) as writer:
        ranked = RankedRows(hard_shares(config.plans), lambda _, rows: writer.add_rows(rows))
        tally = PresetTally()

        def store(position: int, result: DrawnResult) -> None:
            writer.add_images(result.images)
            ranked.add(position, result.scene, result.cue_color)
            tally.add(result.scene)

        info = render_release(config, store, progress=progress)
        ranked.close()
        path, written = writer.commit(info)
    return GenerationResult(path=path, written=written, scenes=sum(p.n_scenes for p in config.plans),
                            notes=tuple(tally.notes()))


def generate_shard(config: GenConfig, *, progress: Progress | None = None) -> GenerationResult:
    """Render the scenes of shard ``config.shard`` into its shard folder, atomically.

    A folder that already holds this shard of the same config is kept as it is (resume).
    """
    from rose_gen.release.shards import (
        ShardWriter,
        check_shard_target,
        finished_shard,
        remove_partial_folders,
    )

    spec = config.shard
    assert spec is not None
    total = sum(plan.n_scenes for plan in config.plans)
    remove_partial_folders(spec.root, spec.count, spec.index)  # left by a killed run of this shard
    if not config.overwrite and finished_shard(spec, config.recorded):
        return GenerationResult(path=spec.folder.absolute(), written=False, scenes=spec.size(total))
    check_shard_target(spec, overwrite=config.overwrite)
    with ShardWriter(spec, overwrite=config.overwrite) as writer:
        info = render_release(config, lambda position, r: writer.add_scene(position, r.images, r.scene, r.cue_color),
                              owns=spec.owns, progress=progress)
        path, written = writer.commit(info, total)
    return GenerationResult(path=path, written=written, scenes=spec.size(total))
