"""The atomic release writer.

A release is written into a temporary sibling directory and renamed into place at the
end, so a failed or interrupted run leaves nothing half-written. An existing directory is
only replaced when ``overwrite`` is set, or when the new release is byte-identical to it
(then it is left untouched).

Layout (all paths relative to the release root, forward slashes)::

    images/<subset>/<image_id>.png                     base (2k-1) and cue (2k) images
    metadata_dev.jsonl, metadata_test.jsonl            the main task rows, five per scene
    analysis/global_click/metadata_{dev,test}.jsonl    T1B_CLICK_GLOBAL bridge rows
    analysis/matched_local_count/metadata_{dev,test}.jsonl   T2B_COUNT_LOCAL_MATCHED rows
    data/dev.parquet, data/test.parquet                main rows + an ``image`` column (HF Image)
    README.md                                          dataset card (configs + explicit features)
    LICENSES.md                                        asset families and their licences
    export_summary.json                                counts, config, versions, sha256 of every file

Nothing written depends on the time, the host, the output path or the worker count.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from rose_eval.vocab import SPLITS, TEMPLATE_ORDER, ordered_subsets
from rose_gen.release_features import IMAGE, arrow_schema, describe, row_columns, yaml_feature
from rose_gen.schema import SceneRows

SUMMARY_FILE = "export_summary.json"
CARD_FILE = "README.md"
LICENSES_FILE = "LICENSES.md"

# Where each bridge template's rows go (v0.1's analysis folders).
BRIDGE_DIRS: dict[str, str] = {
    "T1B_CLICK_GLOBAL": "analysis/global_click",
    "T2B_COUNT_LOCAL_MATCHED": "analysis/matched_local_count",
}


class ReleaseError(RuntimeError):
    """The release cannot be written (one-line message saying what to do)."""


@dataclass(frozen=True)
class ExportSettings:
    """Export knobs (see ``conf/export/default.yaml``)."""

    parquet: bool = True
    parquet_rows_per_group: int = 64
    parquet_compression: str = "zstd"
    bridges: bool = True


@dataclass(frozen=True)
class ReleaseInfo:
    """Everything the summary records besides rows and files.

    ``config`` is the composed generation config without run-only keys; ``versions`` the
    package, renderer and library versions; ``assets`` per source the sha256 of every
    asset file it read; ``attributions`` the asset families with their licences.
    """

    config: Mapping[str, Any]
    versions: Mapping[str, Any]
    assets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    attributions: Sequence[Mapping[str, Any]] = ()
    dataset_name: str = "ROSE"


def json_line(row: Mapping[str, Any]) -> str:
    """The release's JSONL encoding of one row (compact, UTF-8 kept, key order kept)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def sha256_path(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_files(root: Path) -> list[str]:
    """Every file under ``root`` as sorted release-relative paths (the summary excluded)."""
    files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(f for f in files if f != SUMMARY_FILE)


def read_summary(root: Path) -> dict[str, Any] | None:
    """The release summary at ``root``, or None when ``root`` holds no release."""
    path = root / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path} is not valid JSON ({exc}); remove the directory or pass overwrite=true") from None


def check_target(output_dir: Path, *, overwrite: bool, config: Mapping[str, Any]) -> None:
    """Refuse early when ``output_dir`` holds something a new release must not replace."""
    if overwrite or not output_dir.exists():
        return
    if not output_dir.is_dir():
        raise ReleaseError(f"output_dir {output_dir} exists and is not a directory")
    if not any(output_dir.iterdir()):
        return
    summary = read_summary(output_dir)
    if summary is None:
        raise ReleaseError(f"output_dir {output_dir} is not empty and holds no ROSE release; "
                           "choose another directory or pass overwrite=true")
    if summary.get("config") != json.loads(json.dumps(config)):
        raise ReleaseError(f"output_dir {output_dir} holds a release made with a different config; "
                           "choose another directory or pass overwrite=true")


class ReleaseWriter:
    """Collects scenes into a temporary sibling directory, then renames it into place."""

    def __init__(self, output_dir: Path, settings: ExportSettings, *, overwrite: bool = False) -> None:
        self.output_dir = Path(output_dir).absolute()
        self.settings = settings
        self.overwrite = overwrite
        self.tmp: Path | None = None
        self.main_rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
        self.bridge_rows: dict[str, dict[str, list[dict[str, Any]]]] = {
            t: {s: [] for s in SPLITS} for t in BRIDGE_DIRS}
        self.scene_counts: Counter[tuple[str, str]] = Counter()
        self.image_paths: set[str] = set()

    def __enter__(self) -> ReleaseWriter:
        self.output_dir.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.output_dir.name}.partial-", dir=self.output_dir.parent))
        umask = os.umask(0)
        os.umask(umask)
        self.tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; a release is an ordinary folder
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.tmp is not None and self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp = None

    def add_file(self, rel_path: str, data: bytes) -> None:
        """Store one extra file at ``rel_path`` (release-relative, forward slashes) in the release.

        It is listed with its sha256 in the summary like every other file. A path that is
        absolute or leaves the release is refused.
        """
        assert self.tmp is not None, "use ReleaseWriter as a context manager"
        parts = PurePosixPath(rel_path).parts
        if not parts or rel_path.startswith("/") or "\\" in rel_path or ".." in parts:
            raise ReleaseError(f"release file path {rel_path!r} must be relative, with forward slashes, "
                               "and stay inside the release")
        path = self.tmp.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def add_scene(self, rows: SceneRows, images: Mapping[str, bytes]) -> None:
        """Store one scene: its images by release path and its main and bridge rows."""
        assert self.tmp is not None, "use ReleaseWriter as a context manager"
        for rel, data in images.items():
            self.add_file(rel, data)
            self.image_paths.add(rel)
        for row in rows.main:
            if row["image"] not in self.image_paths:
                raise ReleaseError(f"row {row['item_id']} names image {row['image']} that the scene did not render")
            self.main_rows[_split_of(row)].append(row)
        if rows.main:
            self.scene_counts[(rows.main[0]["rose_subset"], _split_of(rows.main[0]))] += 1
        for template, bridge in rows.bridges.items():
            if template not in BRIDGE_DIRS:
                raise ReleaseError(f"bridge template {template} has no analysis folder; known: {sorted(BRIDGE_DIRS)}")
            for row in bridge:
                self.bridge_rows[template][_split_of(row)].append(row)

    def commit(self, info: ReleaseInfo) -> tuple[Path, bool]:
        """Write metadata, Parquet, card, licences and summary; move into place.

        Returns (release path, True) when written, (path, False) when an identical
        release was already there and left untouched.
        """
        assert self.tmp is not None, "use ReleaseWriter as a context manager"
        tmp = self.tmp
        all_main = self.main_rows["dev"] + self.main_rows["test"]
        columns = row_columns(all_main)
        for split in SPLITS:
            _write_jsonl(tmp / f"metadata_{split}.jsonl", self.main_rows[split])
            if self.settings.bridges:
                for template, folder in BRIDGE_DIRS.items():
                    _write_jsonl(tmp / folder / f"metadata_{split}.jsonl", self.bridge_rows[template][split])
        if self.settings.parquet:  # one thread per split: pyarrow compresses and writes without the GIL
            with ThreadPoolExecutor(len(SPLITS)) as pool:
                written = [pool.submit(self._write_parquet, tmp / "data" / f"{split}.parquet", self.main_rows[split],
                                       columns) for split in SPLITS]
                for future in written:
                    future.result()
        counts = self._counts()
        (tmp / CARD_FILE).write_text(dataset_card(info, columns, counts, self.settings), encoding="utf-8")
        (tmp / LICENSES_FILE).write_text(licenses_text(info), encoding="utf-8")
        files = {rel: sha256_path(tmp / rel) for rel in release_files(tmp)}
        summary = {
            "dataset": info.dataset_name,
            "counts": counts,
            "columns": {name: describe(t) for name, t in columns},
            "config": info.config,
            "versions": info.versions,
            "assets": info.assets,
            "files": files,
        }
        (tmp / SUMMARY_FILE).write_text(json.dumps(summary, ensure_ascii=False, indent=2, sort_keys=False) + "\n",
                                        encoding="utf-8")
        return self._move_into_place(files)

    def _write_parquet(self, path: Path, rows: list[dict[str, Any]], columns: list) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        schema = arrow_schema([(name, IMAGE if name == "image" else t) for name, t in columns])
        at = schema.get_field_index("image")
        plain = pa.schema([f for f in schema if f.name != "image"])
        step = max(1, int(self.settings.parquet_rows_per_group))
        with pq.ParquetWriter(path, schema, compression=self.settings.parquet_compression) as writer:
            for start in range(0, len(rows), step):
                chunk = rows[start:start + step]
                # Rows without the image convert fast; the image column is built from arrays.
                table = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "image"} for r in chunk],
                                             schema=plain)
                paths = [r["image"] for r in chunk]
                images = pa.StructArray.from_arrays(
                    [pa.array([(self.tmp / p).read_bytes() for p in paths], pa.binary()), pa.array(paths, pa.string())],
                    fields=list(schema.field("image").type))
                writer.write_table(table.add_column(at, schema.field("image"), images).replace_schema_metadata(
                    schema.metadata))
            if not rows:
                writer.write_table(schema.empty_table())

    def _counts(self) -> dict[str, Any]:
        subsets = ordered_subsets(s for s, _ in self.scene_counts)
        tasks: dict[str, dict[str, dict[str, int]]] = {}
        for subset in subsets:
            tasks[subset] = {}
            for split in SPLITS:
                per = Counter(r["task_template"] for r in self.main_rows[split] if r["rose_subset"] == subset)
                tasks[subset][split] = {t: per[t] for t in TEMPLATE_ORDER if per[t]}
        return {
            "scenes": {s: {sp: self.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "images": {s: {sp: 2 * self.scene_counts[(s, sp)] for sp in SPLITS} for s in subsets},
            "tasks": tasks,
            "rows": {sp: len(self.main_rows[sp]) for sp in SPLITS},
            "bridge_rows": {t: {sp: len(self.bridge_rows[t][sp]) for sp in SPLITS}
                            for t in BRIDGE_DIRS} if self.settings.bridges else {},
        }

    def _move_into_place(self, files: Mapping[str, str]) -> tuple[Path, bool]:
        out, tmp = self.output_dir, self.tmp
        assert tmp is not None
        if out.exists() and any(out.iterdir()):
            old = read_summary(out)
            if old is not None and old.get("files") == dict(files) and _same_summary(out, tmp):
                return out, False
            if not self.overwrite:
                raise ReleaseError(f"output_dir {out} holds a different release; choose another directory "
                                   "or pass overwrite=true")
            trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, trash / out.name)
            os.replace(tmp, out)
            shutil.rmtree(trash)
        else:
            if out.exists():
                out.rmdir()
            os.replace(tmp, out)
        self.tmp = None
        return out, True


def _same_summary(a: Path, b: Path) -> bool:
    return (a / SUMMARY_FILE).read_bytes() == (b / SUMMARY_FILE).read_bytes()


def _split_of(row: Mapping[str, Any]) -> str:
    split = row.get("split")
    if split not in SPLITS:
        raise ReleaseError(f"row {row.get('item_id')} has split {split!r}; expected one of {', '.join(SPLITS)}")
    return split


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json_line(row) + "\n")


def dataset_card(info: ReleaseInfo, columns: list, counts: Mapping[str, Any], settings: ExportSettings) -> str:
    """The dataset card: YAML front matter (configs, explicit features, splits) and a short body."""
    front = {
        "configs": [{
            "config_name": "default",
            "data_files": [{"split": split, "path": f"metadata_{split}.jsonl"} for split in SPLITS],
        }],
        "dataset_info": {"features": [yaml_feature(name, t) for name, t in columns]},
    }
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    lines = [
        "---", header.rstrip("\n"), "---", "",
        f"# {info.dataset_name} release", "",
        "Grid scenes of near-identical cells with a few exceptions; five coupled tasks per scene "
        "(global count, local count, local click, click in a highlighted region, click with an "
        "exclusion and submit), answered in a strict protocol.", "",
        "## Files", "",
        "- `metadata_dev.jsonl`, `metadata_test.jsonl`: task rows (the `image` field is the image path).",
        "- `images/<subset>/<image_id>.png`: scene images; scene k's base image is 2k-1, its cue image 2k.",
    ]
    if settings.bridges:
        lines.append("- `analysis/global_click/`, `analysis/matched_local_count/`: bridge rows "
                     "(T1B_CLICK_GLOBAL, T2B_COUNT_LOCAL_MATCHED) per split.")
    if settings.parquet:
        lines.append("- `data/dev.parquet`, `data/test.parquet`: the task rows with the image embedded "
                     "(`image` is a Hugging Face Image: struct of bytes and path).")
    lines += [
        "- `export_summary.json`: counts, the generation config, versions and sha256 of every file.",
        "- `LICENSES.md`: asset families and their licences.", "",
        "## Column types", "",
        "`region_params` and `image_region_params` share one struct type with nullable members "
        "`r1, r2, c1, c2` (int64), `exclude_type` (string) and `exclude_params` (struct of r1, r2, c1, c2). "
        "A shape uses only some members (ROW_RANGE: r1, r2; COL_RANGE: c1, c2; RECTANGLE and "
        "VISUAL_REGION: all four; EXCLUSION: exclude_type and exclude_params; GLOBAL: none); readers "
        "of Parquet or `datasets` see nulls for the rest, which should be dropped.", "",
        "## Counts", "",
        "| subset | dev scenes | test scenes |", "|---|---:|---:|",
    ]
    for subset, per in counts["scenes"].items():
        lines.append(f"| {subset} | {per['dev']} | {per['test']} |")
    lines += ["", f"Task rows: {counts['rows']['dev']} dev, {counts['rows']['test']} test.", "",
              "## Regenerate", "", "The generation config is recorded in `export_summary.json` (`config`); "
              "`rose-verify <release>` re-derives every row from it and checks every file's sha256.", ""]
    return "\n".join(lines)


def licenses_text(info: ReleaseInfo) -> str:
    """LICENSES.md: one section per asset family used by the release."""
    lines = ["# Licences and attribution", "",
             "The generator code is Apache-2.0. The images embed assets from these families:", ""]
    if not info.attributions:
        lines.append("- (no asset family declared by the sources used)")
    for entry in info.attributions:
        family = entry.get("family", "unnamed asset family")
        line = f"- **{family}**: {entry.get('license', 'licence not declared by its source')}"
        if entry.get("url"):
            line += f" ({entry['url']})"
        if entry.get("sources"):
            line += f"; used by: {', '.join(entry['sources'])}"
        lines.append(line)
        if entry.get("notes"):
            lines.append(f"  {entry['notes']}")
    return "\n".join(lines) + "\n"
