"""plan -> render -> rows -> export, with ``workers`` processes.

Planning is pure and cheap and runs in the main process, one subset at a time (a subset's
difficulty labels are ranked over all its scenes). Rendering and row building run per
scene in worker processes (``spawn``, so nothing depends on the parent's state); results
come back in plan order, so the release is byte-identical for any worker count.

Memory stays flat however large the release: a planner thread keeps one subset planned
ahead of the one being dispatched, and at most a small window of scenes is in the workers'
hands and not yet written (:func:`scene_runner`), so neither scene plans nor rendered
images pile up in the main process.
"""

from __future__ import annotations

import importlib
import multiprocessing
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose_gen.core.schema import SceneRows, SceneSpec, base_image_record, cue_image_record
from rose_gen.release.provenance import release_info
from rose_gen.render.compose import CueSettings, RenderSettings, render_scene, scene_cue_color
from rose_gen.render.degrade import needs_preset_render, render_preset_scene
from rose_gen.sources import SOURCES, load_sources
from rose_gen.tasks.templates import build_scene_rows

if TYPE_CHECKING:  # workers import this module: keep Hydra and pyarrow out of it
    from rose_gen.release.config import GenConfig
    from rose_gen.release.export import ReleaseInfo

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


SceneRunner = Callable[[Iterable[SceneSpec]], Iterator[SceneResult]]

WINDOW_PER_WORKER = 4  # scenes submitted and not yet read, per worker: enough to keep each one busy


def windowed(submit: Callable[[SceneSpec], Callable[[], SceneResult]], scenes: Iterable[SceneSpec],
             window: int) -> Iterator[SceneResult]:
    """The results of ``scenes`` in order, with at most ``window`` submitted and not yet read.

    ``submit`` starts one scene and returns how to wait for its result. ``scenes`` is read
    lazily, only as results are taken, so a long stream is never held whole.
    """
    pending: deque[Callable[[], SceneResult]] = deque()
    for scene in scenes:
        pending.append(submit(scene))
        if len(pending) >= window:
            yield pending.popleft()()
    while pending:
        yield pending.popleft()()


@contextmanager
def scene_runner(settings: RenderSettings, *, workers: int, n_scenes: int,
                 plugins: Sequence[str] = ()) -> Iterator[SceneRunner]:
    """A function turning a stream of scenes into their results, in order, by ``workers`` processes (1: in-process).

    The worker processes start when the context opens, so they spawn and import while the
    caller is still planning; ``n_scenes`` (how many scenes will be submitted in all) caps
    their number. At most :data:`WINDOW_PER_WORKER` scenes per worker are in flight and
    unread (:func:`windowed`), so a slow reader holds back the workers instead of
    buffering their images.
    """
    if workers <= 1 or n_scenes <= 1:
        yield lambda scenes: (process_scene(scene, settings) for scene in scenes)
        return
    ctx = multiprocessing.get_context("spawn")
    n = min(workers, n_scenes)
    with ctx.Pool(n, initializer=_init_worker, initargs=(tuple(plugins), settings, list(sys.path))) as pool:
        yield lambda scenes: windowed(lambda scene: pool.apply_async(_worker_job, (scene,)).get, scenes,
                                      WINDOW_PER_WORKER * n)


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


class _Planner:
    """Plans the subsets in a thread, one subset ahead of the reader, then gathers provenance.

    ``subsets()`` yields each subset's scenes as a deque the reader empties as it dispatches
    them, so a dispatched plan is freed at once. The thread plans the next subset while
    the reader dispatches the current one, and plans another only once that one is taken:
    at most two subsets' plans are alive. An error in the thread is raised in the reader.
    """

    _DONE = object()

    def __init__(self, config: GenConfig) -> None:
        self.config = config
        self.queue: queue.Queue[Any] = queue.Queue()
        self.taken = threading.Semaphore(1)  # released when the reader takes a subset
        self.stop = threading.Event()
        self.info: ReleaseInfo | None = None
        self.thread = threading.Thread(target=self._run, name="rose-planner", daemon=True)

    def _wait_for_reader(self) -> bool:
        while not self.stop.is_set():
            if self.taken.acquire(timeout=0.1):
                return True
        return False

    def _run(self) -> None:
        try:
            subsets = plan_subsets(self.config)
            while self._wait_for_reader():
                scenes = next(subsets, None)
                if scenes is None:
                    self.info = release_info(self.config)
                    self.queue.put(self._DONE)
                    return
                self.queue.put(deque(scenes))
                del scenes
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, who raises it
            self.queue.put(exc)

    def subsets(self) -> Iterator[deque[SceneSpec]]:
        """Each subset's scenes, in config order, the next planned while the current one is dispatched."""
        self.thread.start()
        try:
            while True:
                item = self.queue.get()
                if item is self._DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                self.taken.release()
                yield item
        finally:
            self.close()

    def close(self) -> None:
        """Stop the thread (after the subset it is planning) and wait for it."""
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()


def render_release(config: GenConfig, sink: SceneSink, *, owns: Callable[[int], bool] | None = None,
                   n_scenes: int | None = None, progress: Progress | None = None) -> ReleaseInfo:
    """Plan every subset, render the scenes ``owns`` (release position -> bool; default all) and hand
    each result with its position to ``sink``, in position order; return the release's provenance.

    The workers start first; subsets are planned one ahead of rendering in a thread (which
    then gathers the provenance), and scenes are dispatched and written through a bounded
    window, so memory does not grow with the release. ``n_scenes`` is how many scenes
    ``owns`` selects (it caps the worker count and sizes the progress bar).
    """
    total = sum(plan.n_scenes for plan in config.plans)  # plan_subset makes exactly n_scenes per plan
    mine = total if n_scenes is None else n_scenes
    planner = _Planner(config)
    positions: deque[int] = deque()

    def owned() -> Iterator[SceneSpec]:
        start = 0
        for scenes in planner.subsets():
            n = len(scenes)
            for k in range(start, start + n):
                scene = scenes.popleft()
                if owns is None or owns(k):
                    positions.append(k)
                    yield scene
            start += n

    try:
        with scene_runner(config.render, workers=config.workers, n_scenes=mine, plugins=config.plugins) as run:
            results: Iterator[SceneResult] = run(owned())
            if progress is not None:
                results = progress(results, mine)
            for result in results:
                sink(positions.popleft(), result)
    finally:
        planner.close()
    assert planner.info is not None, "the planner thread ended without provenance"
    return planner.info


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
