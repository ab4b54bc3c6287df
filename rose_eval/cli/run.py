"""``rose-run``: answer a ROSE release split with a model endpoint or a built-in solver.

    rose-run --dataset_root REL --split test --solver cv --output preds.jsonl
    rose-run --dataset_root REL --split test --model NAME --base_url http://host/v1 \\
             --output preds.jsonl [--concurrency 8] [--max_retries 5] ...

Re-running the same command resumes: finished items are skipped, failed or interrupted
ones are asked again. ``--epochs k`` (temperature > 0) asks every item k times: one row per
(item, epoch) with an ``epoch`` field, item ids unchanged; epoch e sends the sampling
seed ``--seed + e - 1``, so the epochs' requests differ. A run manifest (``preds.manifest.json``) records everything needed
to report the run, never the API key.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Collection, Container, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rose_eval import __version__
from rose_eval.cli.args import EXIT_USAGE, OneLineParser, finite_float, http_url, int_in
from rose_eval.jsonl import intact_objects
from rose_eval.runners.accounting import (
    LOW_DETAIL_IMAGE_TOKENS,
    Prices,
    RunEstimate,
    identity_warning,
    manifest_notes,
)
from rose_eval.runners.baselines import SOLVERS, Solver, SolverContext, SolverError
from rose_eval.runners.dataset import DatasetError, DatasetItem, LoadedSplit, Selection, load_split
from rose_eval.runners.generation import DEFAULTS as GENERATION
from rose_eval.runners.http_client import PooledClient
from rose_eval.runners.openai_compat import (
    IMAGE_FORMATS,
    PROMPT_ORDERS,
    EndpointConfig,
    ImageOptions,
    build_messages,
    complete,
    describe,
    image_data_url,
    open_client,
    redact,
)
from rose_eval.runners.predictions import (
    PredictionRow,
    PredictionsError,
    PredictionsFile,
    RowKey,
    check_resumable,
    manifest_path_for,
    write_manifest,
)
from rose_eval.runners.rate_limit import Limits, RateLimiter, estimate_tokens
from rose_eval.runners.request_cache import (
    CacheError,
    RequestCache,
    default_cache_dir,
    describe_cache,
)
from rose_eval.vocab import PROTOCOL_VERSION, SPLITS

EXIT_OK, EXIT_FAILURES, EXIT_INTERRUPTED = 0, 1, 130
# What a solver reads, as the manifest records it (solvers not listed read the metadata row).
SOLVER_READS = {
    "cv": "image file and prompt text only",
    "prior": "prompt text, subset and the dev split's answers only",
}

# Solvers whose answers change with the seed: the only ones --epochs > 1 may repeat.
REPEATABLE_SOLVERS = frozenset({"random"})


@dataclass(frozen=True)
class Task:
    """One answer to produce: an item, in one epoch (None: a single-epoch run)."""

    item: DatasetItem
    epoch: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.item.item_id, self.epoch or 1)


# An answerer turns one task into a finished row; it never raises for item trouble.
Answerer = Callable[[Task, threading.Event, Callable[[str], None]], PredictionRow]


def epoch_seed(seed: int, epoch: int | None) -> int | None:
    """The sampling seed epoch ``epoch`` sends (None for a single-epoch run: no seed sent)."""
    return None if epoch is None else seed + epoch - 1


class UsageError(ValueError):
    """Bad command-line input; the message is one line."""


def build_parser() -> OneLineParser:
    """The flags of rose-run."""
    p = OneLineParser(prog="rose-run", description=__doc__.split("\n\n")[0],
                      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    data = p.add_argument_group("dataset")
    data.add_argument("--dataset_root", type=Path, required=True, help="release folder (metadata_<split>.jsonl, images/)")
    data.add_argument("--split", choices=SPLITS, default="test")
    data.add_argument("--subsets", nargs="*", default=[], help="subsets: full (ROSE-PixelEdit), short (PixelEdit), id prefix (PEDIT) or 'all'; comma lists work too")
    data.add_argument("--templates", nargs="*", default=[], help="templates: T1..T5 or full names")
    data.add_argument("--samples_per_subset", type=int, default=0, help="keep N rows per subset (0 = all)")
    data.add_argument("--shuffle", action="store_true", help="shuffle before taking N per subset")
    data.add_argument("--seed", type=int, default=42, help="seed of --shuffle and of the random solver; "
                      "with --epochs > 1 epoch e uses seed + e - 1 (sent to the endpoint as 'seed')")
    data.add_argument("--epochs", type=int_in(1), default=1,
                      help="answer every item this many times (> 1 needs --temperature > 0 or the random solver)")
    data.add_argument("--controls", nargs="*", default=[],
                      help="also run the interface-control rows (analysis/controls/) of the selected items: "
                           "coords_given, exceptions_given, text_only or 'all'; text_only is sent without an image")

    who = p.add_argument_group("who answers (one of --solver or --model)")
    who.add_argument("--solver", choices=SOLVERS.names(), help="built-in baseline")
    who.add_argument("--model", help="model name sent to the endpoint (with --solver: the label in the rows)")
    who.add_argument("--base_url", type=http_url, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    who.add_argument("--api_key_env", default="OPENAI_API_KEY", help="environment variable holding the bearer key")

    req = p.add_argument_group("request")
    req.add_argument("--temperature", type=finite_float, default=GENERATION.temperature)
    req.add_argument("--max_tokens", type=int_in(0), default=GENERATION.max_tokens,
                     help="0 = do not send max_tokens (>= 0)")
    req.add_argument("--concurrency", type=int, default=4, help="requests (or solver items) in flight")
    req.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the answer (read) and to send the body (write)")
    req.add_argument("--connect_timeout", type=float, default=10.0, help="seconds to open a connection")
    req.add_argument("--max_retries", type=int, default=5, help="retries after the first attempt (429, 5xx, timeouts, connection errors)")
    req.add_argument("--retry_base_delay", type=float, default=1.0, help="first backoff wait in seconds (doubles, full jitter)")
    req.add_argument("--extra_body", default="{}", help="JSON object merged into the request body")
    req.add_argument("--rpm", type=finite_float, default=0.0,
                     help="requests per minute for the whole run, retries included (0 = no limit)")
    req.add_argument("--tpm", type=finite_float, default=0.0,
                     help="tokens per minute for the whole run: each request is charged an estimate "
                          "(prompt, image tiles, max_tokens) before it is sent, corrected by its usage (0 = no limit)")

    img = p.add_argument_group("image and prompt")
    img.add_argument("--prompt_order", choices=PROMPT_ORDERS, default="global_image_local",
                     help="global_image_local = the paper's order; image_first; joined = one text part then the image")
    img.add_argument("--blank_image", action="store_true", help="text-only control: send a white image of the same size")
    img.add_argument("--max_long_side", type=int, default=0, help="downscale so the long side is at most N px (0 = never)")
    img.add_argument("--image_format", choices=IMAGE_FORMATS, default="png")
    img.add_argument("--jpeg_quality", type=int, default=90)

    out = p.add_argument_group("output")
    out.add_argument("--output", type=Path, required=True, help="predictions JSONL (the manifest goes beside it)")
    out.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    out.add_argument("--dry_run", action="store_true", help="check the selection and images, send nothing")
    out.add_argument("--cache_dir", type=Path, default=default_cache_dir(os.environ),
                     help="request cache folder: an answer to the exact same request (endpoint, model, messages "
                          "with image bytes, sampling, seed) is reused, not sent again; errors are not cached; "
                          "$ROSE_CACHE_DIR, else $XDG_CACHE_HOME/rose-toolkit, else ~/.cache/rose-toolkit")
    out.add_argument("--no_cache", action="store_true", help="neither read nor write the request cache")
    out.add_argument("--no_progress", action="store_true", help="no progress bar")

    cost = p.add_argument_group("accounting")
    cost.add_argument("--price_in", type=non_negative_price, default=None,
                      help="USD per million prompt tokens (with --price_out: the manifest's cost_usd)")
    cost.add_argument("--price_out", type=non_negative_price, default=None,
                      help="USD per million completion tokens (reasoning tokens included)")
    return p


def non_negative_price(text: str) -> float:
    """A price flag's value: a finite number >= 0."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 USD per million tokens, got {text!r}")
    return value


@dataclass(frozen=True)
class RunConfig:
    """Everything a run is, resolved from the command line (the key stays out)."""

    selection: Selection
    model_label: str
    solver: str | None
    endpoint: EndpointConfig | None
    concurrency: int
    output: Path
    epochs: int = 1
    limits: Limits | None = None  # endpoint runs only


def _split_list(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def resolve_config(args: argparse.Namespace, environ: dict[str, str]) -> RunConfig:
    """Check the flags together and build the run configuration."""
    if bool(args.solver) == bool(args.base_url):
        raise UsageError("give either --solver NAME or --model NAME --base_url URL")
    if args.base_url and not args.model:
        raise UsageError("--base_url needs --model NAME")
    if (args.concurrency < 1 or args.max_retries < 0 or args.timeout <= 0 or args.connect_timeout <= 0
            or args.samples_per_subset < 0):
        raise UsageError("--concurrency >= 1, --max_retries >= 0, --timeout > 0, --connect_timeout > 0, "
                         "--samples_per_subset >= 0")
    if (args.price_in is None) != (args.price_out is None):
        raise UsageError("--price_in and --price_out go together (USD per million prompt / completion tokens); "
                         "give both or neither")
    if args.rpm < 0 or args.tpm < 0:
        raise UsageError(f"--rpm and --tpm must be >= 0 (0 = no limit), got --rpm {args.rpm:g} "
                         f"--tpm {args.tpm:g}")
    if not 1 <= args.jpeg_quality <= 100 or args.max_long_side < 0:
        raise UsageError("--jpeg_quality must be 1-100 and --max_long_side >= 0")
    try:
        extra = json.loads(args.extra_body)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--extra_body is not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(extra, dict):
        raise UsageError("--extra_body must be a JSON object, e.g. '{\"top_p\": 1}'")
    try:
        json.dumps(extra, allow_nan=False)
    except ValueError:
        raise UsageError("--extra_body holds NaN or Infinity, which JSON cannot carry; give "
                         "finite numbers") from None
    check_epochs(args, extra)
    selection = Selection(subsets=_split_list(args.subsets), templates=_split_list(args.templates),
                          samples_per_subset=args.samples_per_subset, shuffle=args.shuffle, seed=args.seed,
                          controls=_split_list(args.controls))
    endpoint = None
    if args.base_url:
        endpoint = EndpointConfig(
            model=args.model, base_url=args.base_url, api_key=environ.get(args.api_key_env, "").strip(),
            temperature=args.temperature, max_tokens=args.max_tokens, timeout_s=args.timeout,
            connect_timeout_s=args.connect_timeout,
            max_retries=args.max_retries, retry_base_s=args.retry_base_delay, extra_body=extra,
            prompt_order=args.prompt_order,
            image=ImageOptions(image_format=args.image_format, jpeg_quality=args.jpeg_quality,
                               max_long_side=args.max_long_side, blank=args.blank_image))
    label = args.model or f"{args.solver}-baseline"
    limits = None if endpoint is None else Limits(rpm=args.rpm, tpm=args.tpm, max_concurrency=args.concurrency)
    return RunConfig(selection=selection, model_label=label, solver=args.solver, endpoint=endpoint,
                     concurrency=args.concurrency, output=args.output.expanduser().resolve(),
                     epochs=args.epochs, limits=limits)


def check_epochs(args: argparse.Namespace, extra: dict[str, Any]) -> None:
    """Refuse repeats that would repeat the same answer (or be cached as one)."""
    if args.epochs == 1:
        return
    if args.solver and args.solver not in REPEATABLE_SOLVERS:
        raise UsageError(f"--epochs {args.epochs}: the {args.solver} solver has no randomness, every epoch "
                         f"would give the same answers; use --epochs 1 (or --solver "
                         f"{' / '.join(sorted(REPEATABLE_SOLVERS))})")
    if args.base_url and args.temperature <= 0:
        raise UsageError(f"--epochs {args.epochs} needs --temperature > 0: at temperature "
                         f"{args.temperature:g} every epoch asks for the same answer")
    if "seed" in extra:
        raise UsageError("--epochs > 1 sends a seed per epoch (--seed + epoch - 1); remove 'seed' from "
                         "--extra_body")


def estimate_run(items: Sequence[DatasetItem], endpoint: EndpointConfig, epochs: int) -> RunEstimate:
    """What a model run would send (every item's real request, built and measured, not sent);
    epochs repeat the same request size."""
    image_bytes = high = low = 0
    for item in items:
        url = None if item.image_path is None else image_data_url(item.image_path, endpoint.image)
        messages = build_messages(item.row, url, endpoint.prompt_order)
        with_images = estimate_tokens(messages, 0)
        text_only = estimate_tokens(build_messages(item.row, None, endpoint.prompt_order), 0)
        image_bytes += len(url or "")
        high += with_images
        low += text_only + (0 if url is None else LOW_DETAIL_IMAGE_TOKENS)
    n = len(items) * epochs
    return RunEstimate(requests=n, image_bytes=image_bytes * epochs, prompt_tokens_high=high * epochs,
                       prompt_tokens_low=low * epochs, max_completion_tokens=n * max(0, endpoint.max_tokens))


class TaskPlan:
    """The (item, epoch) tasks of a run not yet ``done``, epoch by epoch (a single-epoch run's
    tasks carry no epoch), made one at a time as the workers take them: a run holds its items,
    never a list of items x epochs tasks, so its memory does not grow with ``--epochs``."""

    def __init__(self, items: Sequence[DatasetItem], epochs: int, done: Container[RowKey] = ()) -> None:
        self.items, self.epochs, self.done = items, epochs, done
        self.total = len(items) * epochs  # every task, done or not
        self._todo = sum(1 for _ in self)

    def __iter__(self) -> Iterator[Task]:
        for epoch in [None] if self.epochs == 1 else range(1, self.epochs + 1):
            for item in self.items:
                task = Task(item, epoch)
                if task.key not in self.done:
                    yield task

    def __len__(self) -> int:
        """The tasks still to run."""
        return self._todo


# ---------------------------------------------------------------------------- answerers


def model_answerer(endpoint: EndpointConfig, label: str, client: PooledClient, seed: int = 0,
                   limiter: RateLimiter | None = None, cache: RequestCache | None = None) -> Answerer:
    """Ask the endpoint through the run's pooled ``client`` (an epoch's requests carry its
    seed, :func:`epoch_seed`), every attempt cleared by the run's one ``limiter``, answers
    reused from and stored in ``cache``; image or request trouble becomes a failed row."""

    def answer(task: Task, stop: threading.Event, on_retry: Callable[[str], None]) -> PredictionRow:
        item = task.item
        try:
            url = None if item.image_path is None else image_data_url(item.image_path, endpoint.image)
        except (OSError, ValueError) as exc:
            return PredictionRow(item.item_id, label, None, f"cannot encode image {item.image_path.name}: {exc}",
                                 attempts=0, epoch=task.epoch)
        result = complete(client, endpoint, build_messages(item.row, url, endpoint.prompt_order), stop=stop,
                          on_retry=on_retry, seed=epoch_seed(seed, task.epoch), limiter=limiter, cache=cache)
        return PredictionRow(item_id=item.item_id, model=label, raw_text=result.raw_text, error=result.error,
                             latency_s=result.latency_s, attempts=result.attempts,
                             finish_reason=result.finish_reason, usage=result.usage, epoch=task.epoch,
                             cached=result.cached, response_model=result.response_model,
                             system_fingerprint=result.system_fingerprint, reasoning=result.reasoning,
                             refusal=result.refusal)

    return answer


def solver_answerer(solver_for: Callable[[int | None], Solver], label: str) -> Answerer:
    """Run a built-in solver (``solver_for(epoch)``: the one of that epoch); an exception
    becomes a failed row, never a made-up answer."""

    def answer(task: Task, stop: threading.Event, on_retry: Callable[[str], None]) -> PredictionRow:
        item, started = task.item, time.monotonic()
        try:
            text = solver_for(task.epoch)(item)
        except Exception as exc:  # noqa: BLE001 - any solver failure is recorded on the item
            return PredictionRow(item.item_id, label, None, f"{type(exc).__name__}: {exc}",
                                 latency_s=round(time.monotonic() - started, 3), epoch=task.epoch)
        return PredictionRow(item.item_id, label, text, None, latency_s=round(time.monotonic() - started, 3),
                             finish_reason="stop", epoch=task.epoch)

    return answer


# ---------------------------------------------------------------------------- loop


@dataclass(frozen=True)
class RunStats:
    done: int
    failed: int
    retries: int
    interrupted: bool


def run_items(items: Collection[Task] | TaskPlan, answer: Answerer, out: PredictionsFile, *, concurrency: int,
              progress: bool, label: str) -> RunStats:
    """Answer the tasks ``items`` with ``concurrency`` worker threads, each taking the next task
    when it is free; the main thread writes rows."""
    total = len(items)
    pending = iter(items)
    take = threading.Lock()  # one worker at a time advances ``pending`` (a generator for a TaskPlan)
    results: queue.Queue[PredictionRow] = queue.Queue()
    stop = threading.Event()
    retry_lock = threading.Lock()
    retries = [0]

    def on_retry(_message: str) -> None:
        with retry_lock:
            retries[0] += 1

    def worker() -> None:
        while not stop.is_set():
            with take:
                item = next(pending, None)
            if item is None:
                return
            try:
                row = answer(item, stop, on_retry)
            except Exception as exc:  # noqa: BLE001 - a bug in an answerer must not hang the run
                row = PredictionRow(item.item.item_id, label, None, f"{type(exc).__name__}: {exc}",
                                    epoch=item.epoch)
            results.put(row)

    threads = [threading.Thread(target=worker, daemon=True, name=f"rose-run-{i}")
               for i in range(min(concurrency, max(1, total)))]
    for thread in threads:
        thread.start()
    done = failed = 0
    bar = tqdm(total=total, desc=f"rose-run {label}", unit="item", file=sys.stderr, disable=not progress,
               dynamic_ncols=True)
    try:
        while done + failed < total:
            try:
                row = results.get(timeout=0.2)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and results.empty():
                    break
                continue
            out.append(row)
            failed += row.failed
            done += not row.failed
            bar.update(1)
            bar.set_postfix(errors=failed, retries=retries[0], refresh=False)
    except KeyboardInterrupt:
        stop.set()
        bar.close()
        return RunStats(done, failed, retries[0], interrupted=True)
    bar.close()
    return RunStats(done, failed, retries[0], interrupted=False)


# ---------------------------------------------------------------------------- manifest


def manifest(config: RunConfig, split: LoadedSplit, args: argparse.Namespace) -> dict[str, Any]:
    """The run manifest's resumable part (``config``) and the selection (never the key)."""
    answered_by: dict[str, Any]
    request: dict[str, Any] = {"concurrency": config.concurrency}
    if config.endpoint is not None:
        answered_by = {"kind": "model", **describe(config.endpoint), "api_key_env": args.api_key_env}
        request = answered_by.pop("request")  # retry/timeout settings do not change answers
        if config.limits is not None:
            request["limits"] = config.limits.describe()
    else:
        answered_by = {"kind": "solver", "solver": config.solver, "model": config.model_label,
                       "seed": config.selection.seed if config.solver == "random" else None,
                       "reads": SOLVER_READS.get(str(config.solver), "metadata row")}
    repeats = ({} if config.epochs == 1 else
               {"repeats": {"epochs": config.epochs, "seed_of_epoch": "seed + epoch - 1",
                            "seed": config.selection.seed}})
    return {
        "config": {
            "answered_by": answered_by,
            "dataset": {"split": split.split, "metadata_file": split.metadata_path.name,
                        "metadata_sha256": split.fingerprint},
            **repeats,
        },
        "request": {**request, "concurrency": config.concurrency},
        "selection": {"dataset_root": str(split.root), "subsets": list(config.selection.subsets),
                      "templates": list(config.selection.templates),
                      "samples_per_subset": config.selection.samples_per_subset,
                      "shuffle": config.selection.shuffle, "seed": config.selection.seed,
                      "num_rows_in_split": split.num_rows_in_split, "num_selected": len(split.items),
                      **({"controls": list(config.selection.controls)} if config.selection.controls else {})},
        "tool": {"name": "rose-run", "package": "rose-toolkit", "version": __version__,
                 "protocol_version": PROTOCOL_VERSION},
    }


# ---------------------------------------------------------------------------- main


def _fail(message: str, secret: str = "") -> int:
    print(f"rose-run: error: {redact(message, secret)}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rose-run``; returns the process exit code."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("rose-run: interrupted; re-run the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_or_status(argv)
    if isinstance(args, int):
        return args
    secret = ""
    try:
        config = resolve_config(args, dict(os.environ))
        secret = config.endpoint.api_key if config.endpoint else ""
        split = load_split(args.dataset_root, args.split, config.selection)
        man = manifest(config, split, args)
        man_path = manifest_path_for(config.output)
        if not args.overwrite and not args.dry_run and config.output.exists():
            check_resumable(man_path, man["config"])
        solvers = {} if config.solver is None else {
            epoch: SOLVERS.get(config.solver)(SolverContext(seed=args.seed + (epoch or 1) - 1,
                                                            dataset_root=split.root, split=split.split))
            for epoch in ([None] if config.epochs == 1 else range(1, config.epochs + 1))}
    except (UsageError, DatasetError, PredictionsError, SolverError) as exc:
        return _fail(str(exc), secret)

    repeats = "" if config.epochs == 1 else f" x {config.epochs} epochs"
    if args.dry_run:
        print(f"rose-run: dry run: {len(split.items)} items{repeats} of {split.metadata_path} selected, "
              f"all images present; nothing sent", file=sys.stderr)
        if config.endpoint is not None:
            try:
                estimate = estimate_run(split.items, config.endpoint, config.epochs)
            except (OSError, ValueError) as exc:
                return _fail(f"dry run: cannot encode an image: {exc}", secret)
            print(estimate.summary(Prices(args.price_in, args.price_out)))
        return EXIT_OK
    cache = None
    if config.endpoint is not None and not args.no_cache:
        try:
            cache = RequestCache(args.cache_dir.expanduser())
        except CacheError as exc:
            return _fail(str(exc), secret)
    if config.endpoint is not None and not secret:
        print(f"rose-run: note: ${args.api_key_env} is empty; sending no Authorization header", file=sys.stderr)

    predictions = PredictionsFile(config.output, overwrite=args.overwrite)
    todo = TaskPlan(split.items, config.epochs, predictions.done_keys)
    skipped = todo.total - len(todo)
    write_manifest(man_path, {**man, "status": "running"})
    print(f"rose-run: {len(split.items)} selected{repeats}, {skipped} already done, {len(todo)} to run -> "
          f"{config.output}", file=sys.stderr)
    limiter = None if config.limits is None else RateLimiter(config.limits)
    started = time.monotonic()
    with contextlib.ExitStack() as resources:
        if cache is not None:
            resources.enter_context(cache)
        if not solvers:
            client = resources.enter_context(open_client(config.endpoint, config.concurrency))
            answer = model_answerer(config.endpoint, config.model_label, client, seed=args.seed, limiter=limiter,
                                    cache=cache)
        else:
            answer = solver_answerer(solvers.__getitem__, config.model_label)
        resources.enter_context(predictions)
        stats = run_items(todo, answer, predictions, concurrency=config.concurrency,
                          progress=not args.no_progress, label=config.model_label)
    status = "interrupted" if stats.interrupted else ("incomplete" if stats.failed else "complete")
    # one streaming pass over the file (kept rows of a resumed run included): memory stays flat
    notes = manifest_notes((row for _line, row in intact_objects(config.output)),
                           Prices(args.price_in, args.price_out), time.monotonic() - started)
    identity = notes["server"]
    write_manifest(man_path, {**man, "status": status, **notes,
                              "counts": {"selected": len(split.items),
                                         **({} if config.epochs == 1 else {"epochs": config.epochs,
                                                                           "answers": todo.total}),
                                         "succeeded": skipped + stats.done,
                                         "failed": stats.failed,
                                         "not_run": len(todo) - stats.done - stats.failed},
                              **({} if limiter is None else {"rate_limit": asdict(limiter.stats())}),
                              **({} if config.endpoint is None else {"cache": describe_cache(cache)})})
    summary = (f"rose-run: {status}: {skipped + stats.done}/{todo.total} answered, {stats.failed} failed, "
               f"{stats.retries} retries")
    if cache is not None and cache.hits:
        summary += f"; {cache.hits} answered from the cache ({cache.path})"
    if limiter is not None and (throttle := limiter.stats()).throttled:
        summary += (f"; {throttle.throttled} throttled answer(s) paused the run {throttle.paused_s:g} s, "
                    f"concurrency fell to {throttle.min_concurrency}")
    if (warning := identity_warning(identity)) is not None:
        print(warning, file=sys.stderr)
    if stats.interrupted:
        print(f"{summary}; interrupted: re-run the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if stats.failed:
        print(f"{summary}; re-run the same command to retry the failed items", file=sys.stderr)
        return EXIT_FAILURES
    print(summary, file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
