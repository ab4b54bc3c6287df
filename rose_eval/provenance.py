"""Where an evaluation's numbers come from: the ``provenance.json`` sidecar rose-eval writes.

It sits beside the public evaluator's eight files (never inside them, so they stay
byte-identical) and records:

- ``metadata``: the files scored and their sha256, the digest of the rows scored
  (``rows_sha256``: the identity ``compare`` and the report check, equal for a JSONL and
  its Parquet export), the split and row count, and whether the rows are known public v0.1
  metadata (:data:`PUBLIC_METADATA_ROWS`: only then does the run name the public dataset);
- ``release``: the release's ``export_summary.json`` sha256 and generation seed, when the
  metadata sits in a rose-gen release folder;
- ``predictions``: the file's sha256 and the manifest rose-run or rose-export wrote beside
  it (what was sent: image format and size, detail, prompt order, controls, benchmark
  changes), read as found;
- ``run``: the one name of the run, its ``control`` (a ``--blank_image`` run, or i23's
  control rows with a ``control`` field) and its ``benchmark_changes``: a run with either
  is not a standard run, and compare and the report never rank it beside one unless asked;
- ``coverage``: :class:`rose_eval.coverage.Coverage`;
- ``toolkit``: package name, version and protocol version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rose_eval import __version__
from rose_eval.coverage import Coverage
from rose_eval.io import drop_nulls
from rose_eval.split_rows import SplitFiles, sha256_files
from rose_eval.vocab import PROTOCOL_VERSION

PROVENANCE_FILE = "provenance.json"
PROVENANCE_VERSION = 1
PUBLIC_REPO_ID = "sysuwyh357/ROSE-v0.1"
# rows_sha256 (see rows_digest) of public v0.1 metadata known to this toolkit -> what it is.
# Only rows whose digest is listed are called the public dataset: a generated release copies
# v0.1's ids, layout and field names, so those prove nothing. The digest is of the scored
# rows, so the JSONL and a Parquet export of the same rows are the same metadata.
PUBLIC_METADATA_ROWS: dict[str, str] = {
    "e086840fb02ea7cfa1e7555cfe55f9bb65d6b632dbb198b34506bcb15e5d74b4":
        "v0.1 analysis/data/matched_local_count/metadata_test.jsonl",
}
RELEASE_SUMMARY = "export_summary.json"
PAPER_PROMPT_ORDER = "global_image_local"
BLANK_IMAGE_CONTROL = "blank_image"


def sha256_file(path: Path) -> str:
    """Hex sha256 of one file's bytes."""
    return sha256_files((path,))


def manifest_path(predictions: Path) -> Path:
    """``preds.jsonl`` -> ``preds.manifest.json``, where rose-run and rose-export write it."""
    return predictions.with_name(predictions.stem + ".manifest.json")


def read_manifest(predictions: Path) -> dict[str, Any] | None:
    """The predictions file's manifest as written, None when there is none or it is unreadable."""
    path = manifest_path(predictions)
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _answered_by(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    config = manifest.get("config")
    found = config.get("answered_by") if isinstance(config, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def benchmark_changes(manifest: Mapping[str, Any] | None) -> list[str]:
    """What a run changed about the benchmark, from its manifest: rose-export's
    ``benchmark_changes`` as written, and the settings of a rose-run model run."""
    if not manifest:
        return []
    changes = [str(c) for c in manifest.get("benchmark_changes") or []]
    sent = _answered_by(manifest)
    image = sent.get("image") if isinstance(sent.get("image"), Mapping) else {}
    if image.get("format") == "jpeg":
        changes.append(f"images re-encoded as JPEG (quality {image.get('jpeg_quality')})")
    if image.get("max_long_side"):
        changes.append(f"images downscaled to a long side of at most {image['max_long_side']} px")
    if image.get("blank"):
        changes.append("images replaced by blank white images (text-only control)")
    order = sent.get("prompt_order")
    if order not in (None, PAPER_PROMPT_ORDER):
        changes.append(f"prompt order {order} instead of the paper's {PAPER_PROMPT_ORDER}")
    return list(dict.fromkeys(changes))


def control_of(manifest: Mapping[str, Any] | None,
               metadata_rows: Iterable[Mapping[str, Any]]) -> str | None:
    """The control a run is (a ``--blank_image`` run, or rows carrying a ``control``), else None."""
    controls = sorted({str(row["control"]) for row in metadata_rows if row.get("control")})
    image = _answered_by(manifest or {}).get("image")
    if isinstance(image, Mapping) and image.get("blank"):
        controls.append(BLANK_IMAGE_CONTROL)
    return "+".join(controls) or None


def release_root(files: SplitFiles) -> Path:
    """The release folder of a split's files (``data/`` parts sit one level down)."""
    folder = files.first.parent
    return folder.parent if folder.name == "data" else folder


def release_record(files: SplitFiles) -> dict[str, Any] | None:
    """The release's export_summary.json hash and seed, None when the metadata is not in one."""
    summary = release_root(files) / RELEASE_SUMMARY
    if not summary.is_file():
        return None
    try:
        data = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    config = data.get("config") if isinstance(data, dict) else None
    seed = data.get("seed") if isinstance(data, dict) else None
    if seed is None and isinstance(config, dict):
        seed = config.get("seed")
    return {"export_summary": str(summary), "export_summary_sha256": sha256_file(summary),
            "seed": seed}


def rows_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """Hex sha256 of the scored rows (the evaluator's fields, nulls dropped, in file order):
    the metadata's identity whatever file format holds it."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(drop_nulls(dict(row)), sort_keys=True, ensure_ascii=False,
                                 separators=(",", ":")).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def public_dataset(metadata_rows_sha256: str) -> str | None:
    """Which public v0.1 metadata the rows are, None when they are none of it."""
    return PUBLIC_METADATA_ROWS.get(metadata_rows_sha256)


def build_provenance(*, files: SplitFiles, rows_sha256: str, split: str, rows: int,
                     metadata_rows: Sequence[Mapping[str, Any]], predictions: Path,
                     model: str, dataset_repo_id: str | None, coverage: Coverage,
                     settings: Mapping[str, Any]) -> dict[str, Any]:
    """The sidecar's content (see the module docstring)."""
    manifest = read_manifest(predictions)
    public = public_dataset(rows_sha256)
    return {
        "provenance_version": PROVENANCE_VERSION,
        "toolkit": {"package": "rose-toolkit", "version": __version__,
                    "protocol_version": PROTOCOL_VERSION},
        "metadata": {"files": [str(p) for p in files.paths], "kind": files.kind,
                     "sha256": files.sha256(), "rows_sha256": rows_sha256, "split": split,
                     "rows": rows,
                     "public_v0_1": public, "dataset_repo_id": dataset_repo_id},
        "release": release_record(files),
        "predictions": {"file": str(predictions), "sha256": sha256_file(predictions),
                        "manifest_file": str(manifest_path(predictions)) if manifest else None,
                        "manifest": manifest},
        "run": {"model": model, "control": control_of(manifest, metadata_rows),
                "benchmark_changes": benchmark_changes(manifest), "settings": dict(settings)},
        "coverage": coverage.as_dict(),
    }


def provenance_bytes(record: Mapping[str, Any]) -> bytes:
    """``provenance.json``'s bytes: strict JSON (no NaN), sorted keys, UTF-8."""
    text = json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def read_provenance(eval_dir: Path) -> dict[str, Any] | None:
    """An evaluation folder's provenance.json, None when it has none (an older evaluation)."""
    try:
        found = json.loads((eval_dir / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None
