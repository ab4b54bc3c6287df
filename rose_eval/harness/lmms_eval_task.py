"""ROSE as an lmms-eval task: the functions its YAML names, and the task-folder writer.

The task folder (``rose_eval/harness/lmms_eval_tasks/rose/``, package data) holds YAML
per split (``rose_test``, ``rose_dev``), a group ``rose`` and a ``utils.py`` that imports
the functions below. ``rose-export lmms-eval RELEASE DIR`` writes it with the release's
Parquet files filled in (``dataset_path: parquet`` + ``data_files``); lmms-eval loads it
with ``--include_path DIR``. lmms-eval itself is never imported here.

- ``doc_to_messages``: one user turn in the paper's order (text ``prompt_global``, the
  image as the released PIL image at full size, text ``prompt_local``), built by
  rose-run's message builder; chat models (e.g. ``openai_compatible_chat``, ``vllm``)
  use it.
- ``doc_to_visual`` / ``doc_to_text``: for lmms-eval's simple models, the image and the
  dataset's joined prompt (``prompt_global`` + newline + ``prompt_local``); where the image
  goes is then the model wrapper's choice, so use a chat model for the paper's order.
- ``process_results``: rose-eval's strict scorer (lmms-eval's failure text after its
  retries scores as an endpoint error); the same per-item record under every metric name; the aggregations are rose-eval's Table 1 (Avg. PASS, PASS per subset,
  VALID, Avg. SOFT).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from PIL import Image

from rose_eval.atomic import write_atomic
from rose_eval.harness.common import PAPER_ORDER, subset_key, table1, verdict
from rose_eval.harness.failures import harness_error
from rose_eval.io import InputError, drop_nulls
from rose_eval.runners.openai_compat import build_messages, prompt_parts
from rose_eval.split_rows import SplitFiles, find_parquet
from rose_eval.vocab import SPLITS, SUBSET_ORDER

TASK_FOLDER = "lmms_eval_tasks/rose"
DATA_PLACEHOLDER = "__ROSE_DATA_DIR__"
IMAGE_SLOT = "rose-image"  # stands for the image while rose-run's builder orders the parts
PASS_METRICS = {f"pass_{subset_key(s)}": s for s in SUBSET_ORDER}
METRICS: tuple[str, ...] = ("pass", *PASS_METRICS, "valid", "soft")


def score_row(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata row of a Parquet doc: the image column dropped, struct nulls removed."""
    return drop_nulls({k: v for k, v in doc.items() if k != "image"})


def _image(value: Any) -> Image.Image:
    if isinstance(value, Image.Image):
        return value
    if isinstance(value, Mapping) and value.get("bytes"):  # an undecoded HF Image cell
        return Image.open(io.BytesIO(value["bytes"]))
    raise ValueError(f"doc has no decodable image (got {type(value).__name__})")


def doc_to_visual(doc: Mapping[str, Any]) -> list[Image.Image]:
    """The released image, as decoded from the Parquet (full size, not re-encoded)."""
    return [_image(doc["image"])]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """The joined prompt for simple models: prompt_global, a newline, prompt_local."""
    return "\n".join(part for part in prompt_parts(doc) if part)


def doc_to_messages(doc: Mapping[str, Any],
                    lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One user turn, parts in the paper's order (no option: another order changes ROSE)."""
    image = doc_to_visual(doc)[0]
    parts = build_messages(doc, IMAGE_SLOT, PAPER_ORDER)[0]["content"]
    content = [{"type": "text", "text": p["text"]} if p["type"] == "text"
               else {"type": "image", "url": image} for p in parts]
    return [{"role": "user", "content": content}]


def _answer_text(results: Sequence[Any]) -> str | None:
    if not results:
        return None
    first = results[0]
    while isinstance(first, (list, tuple)) and first:  # some filters keep a list per request
        first = first[0]
    return None if first is None else str(first)


def process_results(doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """rose-eval's verdict for one doc, the same record under every metric name.

    lmms-eval's failure text (``[LMMS_EVAL_REQUEST_FAILED ...]``, the request failed after
    its retries) is scored as the endpoint error it is, not as the model's answer.
    """
    answer = _answer_text(results)
    error = harness_error("lmms-eval", answer)
    raw_text = None if error else answer
    record = {**verdict(score_row(doc), raw_text, error).as_eval_row(), "raw_text": raw_text,
              "error": error}
    return dict.fromkeys(METRICS, record)


def aggregate_pass(records: Sequence[Mapping[str, Any]]) -> float:
    """Table 1 Avg. PASS: the macro average of PASS over subsets."""
    return table1(records)["Avg. PASS"]


def aggregate_valid(records: Sequence[Mapping[str, Any]]) -> float:
    """Table 1 VALID: the macro average over subsets of the grammar-valid share."""
    return table1(records)["VALID"]


def aggregate_soft(records: Sequence[Mapping[str, Any]]) -> float:
    """Table 1 Avg. SOFT: the macro average over subsets of the unified soft score."""
    return table1(records)["Avg. SOFT"]


def _subset_pass(subset: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    def aggregate(records: Sequence[Mapping[str, Any]]) -> float | None:
        return table1(records)["by_subset"][subset]["PASS"]

    aggregate.__name__ = f"aggregate_pass_{subset_key(subset)}"
    aggregate.__doc__ = f"Table 1 PASS of {subset}."
    return aggregate


aggregate_pass_ChineseGlyph = _subset_pass("ROSE-ChineseGlyph")
aggregate_pass_EmojiStyle = _subset_pass("ROSE-EmojiStyle")
aggregate_pass_EmojiContent = _subset_pass("ROSE-EmojiContent")
aggregate_pass_PixelEdit = _subset_pass("ROSE-PixelEdit")
aggregate_pass_PixelContent = _subset_pass("ROSE-PixelContent")


# ---------------------------------------------------------------------------- task folder


def task_folder_files() -> dict[str, str]:
    """The packaged task folder: file name -> text (placeholders unfilled)."""
    folder = resources.files("rose_eval.harness").joinpath(TASK_FOLDER)
    return {entry.name: entry.read_text(encoding="utf-8") for entry in folder.iterdir()
            if entry.is_file() and not entry.name.startswith(".")}


def write_task_folder(release: Path, out_dir: Path) -> dict[str, Path]:
    """Write the task folder for ``release`` into ``out_dir`` (its Parquet paths filled in)."""
    root = release.expanduser().resolve()
    data = root / "data"
    found = {split: find_parquet(root, split) for split in SPLITS}
    missing = [f"data/{split}.parquet" for split, files in found.items() if files is None]
    if missing:
        raise InputError(f"the release has no {', '.join(missing)}", root,
                         "point at a release folder exported with Parquet "
                         "(rose-gen ... export.parquet=true, the default)")
    present = {split: files for split, files in found.items() if files is not None}
    out = out_dir.expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise InputError("output is a file, not a folder", out, "choose a folder for the task files")
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, text in sorted(task_folder_files().items()):
        for split, files in present.items():
            text = text.replace(f"{DATA_PLACEHOLDER}/{split}.parquet", _data_files(files))
        target = out / name
        write_atomic(target, text.replace(DATA_PLACEHOLDER, data.as_posix()))
        written[name] = target
    return written


def _data_files(files: SplitFiles) -> str:
    """The YAML value of a split's ``data_files``: its one path, or a flow list of its parts."""
    paths = [path.as_posix() for path in files.paths]
    return paths[0] if len(paths) == 1 else json.dumps(paths)  # JSON is YAML
