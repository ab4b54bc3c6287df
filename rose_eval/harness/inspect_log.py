"""An inspect_ai log of the ``rose`` task -> the predictions format rose-eval reads.

Each sample becomes ``{item_id, model, raw_text, error}``: the text the scorer saw, or
``raw_text: null`` with the error when the request failed for good (scored as a failure,
as rose-run writes it) or the sample errored in inspect. What inspect logged of the
response goes beside it in rose-run's row fields: the server's model name
(``response_model``), ``finish_reason`` (inspect's stop reason in OpenAI's words), token
``usage``, reasoning text and the sample's wall time (``latency_s``). The manifest beside the
predictions records what was sent, read back from the log itself: the content-part
order and detail level of the requests inspect logged, and the format, pixel size and
sha256 of every image the task handed over (inspect sends those bytes unchanged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from rose_eval.harness.common import Prediction
from rose_eval.harness.inspect_task import TASK_NAME
from rose_eval.io import InputError
from rose_eval.runners.predictions import Usage

SCORER = "rose_scorer"
FIX_LOG = "pass the .eval or .json log that 'inspect eval ...inspect_task.py@rose' wrote"


def read_log(path: Path) -> EvalLog:
    """The whole log (samples included), or an InputError naming the file."""
    if not path.is_file():
        raise InputError("inspect log not found", path, FIX_LOG)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - inspect raises many types for a bad file
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"unreadable inspect log: {first}", path, FIX_LOG) from None
    if log.eval.task.rsplit("/", 1)[-1].rsplit("@", 1)[-1] != TASK_NAME:
        raise InputError(f"log of task {log.eval.task!r}, not ROSE's {TASK_NAME!r}", path, FIX_LOG)
    if not log.samples:
        raise InputError("the log holds no samples", path,
                         "re-run the eval (it may have been cancelled before any sample)")
    return log


# inspect's StopReason -> OpenAI's finish_reason (what rose-run rows hold)
FINISH_REASONS = {"stop": "stop", "max_tokens": "length", "model_length": "length",
                  "content_filter": "content_filter", "tool_calls": "tool_calls"}


def _response(sample: EvalSample) -> dict[str, Any]:
    """The logged response's fields, in rose-run's row names (absent when not logged)."""
    output = sample.output
    found: dict[str, Any] = {"latency_s": None if sample.total_time is None else round(sample.total_time, 3)}
    if output is None or not output.choices or output.error:
        return found  # no response arrived: inspect's placeholder output names its own model id
    found["response_model"] = output.model or None
    choice = output.choices[0]
    found["finish_reason"] = FINISH_REASONS.get(choice.stop_reason, choice.stop_reason)
    content = choice.message.content
    thoughts = [c.reasoning for c in content if getattr(c, "type", None) == "reasoning"] \
        if isinstance(content, list) else []
    found["reasoning"] = "\n".join(thoughts) or None
    if output.usage is not None:
        u = output.usage
        found["usage"] = Usage(prompt_tokens=u.input_tokens, completion_tokens=u.output_tokens,
                               total_tokens=u.total_tokens, reasoning_tokens=u.reasoning_tokens)
    return found


def _prediction(sample: EvalSample, model: str, epoch: int | None = None) -> Prediction:
    score = (sample.scores or {}).get(SCORER)
    if sample.error is not None:
        message = " ".join(str(sample.error.message).split())[:300]
        return Prediction(str(sample.id), model, None, f"inspect sample error: {message}", epoch)
    response = _response(sample)
    if score is not None and score.metadata and score.metadata.get("error"):
        response = {"latency_s": response["latency_s"]}
    if score is not None and score.metadata:
        return Prediction(str(sample.id), model, score.metadata.get("raw_text"),
                          score.metadata.get("error"), epoch, **response)
    return Prediction(str(sample.id), model, sample.output.completion, None, epoch, **response)


def _request_shapes(samples: Iterable[EvalSample]) -> tuple[Counter[str], Counter[str]]:
    """How the logged requests laid out their content parts, and the image details sent."""
    orders: Counter[str] = Counter()
    details: Counter[str] = Counter()
    for sample in samples:
        for event in sample.events:
            call = getattr(event, "call", None)
            if event.event != "model" or call is None or not isinstance(call.request, dict):
                continue
            for message in call.request.get("messages") or []:
                content = message.get("content") if isinstance(message, dict) else None
                if not isinstance(content, list):
                    continue
                orders[" + ".join(str(part.get("type")) for part in content)] += 1
                for part in content:
                    image_url = part.get("image_url")
                    if isinstance(image_url, dict):
                        details[str(image_url.get("detail"))] += 1
    return orders, details


def _images_sent(samples: list[EvalSample], changed: bool) -> dict[str, Any]:
    facts = [(s.metadata or {}).get("image_sent") or {} for s in samples]
    sizes = Counter(f"{f.get('width')}x{f.get('height')}" for f in facts)
    source = ("re-encoded by the task as the settings asked" if changed else
              "the released PNG files, sent byte for byte")
    return {"formats": dict(Counter(str(f.get("format")) for f in facts)),
            "distinct_images": len({f.get("sha256") for f in facts}),
            "pixel_sizes": dict(sorted(sizes.items())),
            "source": f"{source} (format, size and sha256 per sample in the log)"}


def _reencoded(settings: dict[str, Any] | None) -> bool:
    settings = settings or {}
    return (settings.get("image_format", "png") != "png" or bool(settings.get("max_long_side"))
            or bool(settings.get("blank")))


ALL_EPOCHS = "all"


def convert(path: Path, *, model: str = "", epoch: int | str = 1) -> tuple[list[Prediction], dict[str, Any]]:
    """Predictions and the manifest for one inspect log of the rose task: one epoch's samples
    (rows without an epoch field), or with ``epoch="all"`` every epoch's, each row carrying
    its ``epoch`` (what rose-eval scores as a repeated run)."""
    log = read_log(path)
    epochs = sorted({s.epoch for s in log.samples or []})
    if epoch != ALL_EPOCHS and epoch not in epochs:
        raise InputError(f"the log has no epoch {epoch} (epochs: {epochs})", path,
                         f"pass --epoch {epochs[0]} or --epoch all")
    every = epoch == ALL_EPOCHS
    samples = [s for s in log.samples or [] if every or s.epoch == epoch]
    samples.sort(key=lambda s: s.epoch)  # stable: one epoch after another, each in log order
    label = model.strip() or log.eval.model
    predictions = [_prediction(s, label, s.epoch if every else None) for s in samples]
    kept = sum(1 for s, p in zip(samples, predictions, strict=True)
               if p.error is None and p.raw_text != s.output.completion)
    orders, details = _request_shapes(samples)
    rose_meta = (log.eval.metadata or {}).get("rose", {})
    changes = list(rose_meta.get("benchmark_changes") or [])
    changes += [f"detail={d} sent" for d in details if d in ("low", "auto")]
    manifest = {
        "harness": {"name": "inspect_ai", "version": log.eval.packages.get("inspect_ai"),
                    "log": str(path.resolve()), "status": log.status, "epoch": epoch,
                    "epochs": epochs, "task_args": log.eval.task_args},
        "answered_by": {"model": log.eval.model, "label": label,
                        "base_url": log.eval.model_base_url,
                        "generate_config": log.plan.config.model_dump(exclude_none=True)},
        "dataset": rose_meta.get("dataset"),
        "selection": rose_meta.get("selection"),
        "sent": {"settings": rose_meta.get("image_settings"),
                 "content_parts_in_logged_requests": dict(orders),
                 "image_detail_in_logged_requests": dict(details),
                 "images": _images_sent(samples, _reencoded(rose_meta.get("image_settings")))},
        "benchmark_changes": changes,
        "notes": [f"{kept} answer(s) scored with the inline <think> block inspect had moved "
                  "out of the content (rose-run keeps it; the grammar then rejects the answer)"],
    }
    return predictions, manifest
