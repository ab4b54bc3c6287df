"""The release's two prose files: the dataset card (README.md) and LICENSES.md.

Both are pure functions of the release's recorded information, its columns and counts,
so a merged sharded release writes the same bytes as a single run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from rose_eval.vocab import SPLITS
from rose_gen.release.features import IMAGE, yaml_feature

if TYPE_CHECKING:
    from rose_gen.release.export import ExportSettings, ReleaseInfo


def dataset_card(info: ReleaseInfo, columns: list, counts: Mapping[str, Any], settings: ExportSettings,
                 parquet_files: Mapping[str, Sequence[str]] | None = None) -> str:
    """The dataset card: YAML front matter (configs, explicit features, splits) and a short body.

    The ``default`` config reads the JSONL rows (``image`` is the image path). When a split's
    Parquet is written as Hugging Face-style files (``parquet_files``: split -> release paths,
    ``test-00000-of-00004.parquet``), it reads those instead, each split as one, with
    ``image`` as an Image feature: large releases load without a file per image.
    """
    sharded = bool(parquet_files) and settings.parquet and settings.parquet_rows_per_file > 0
    if sharded:
        files = [{"split": split, "path": f"data/{split}-*.parquet"} for split in SPLITS]
        columns = [(name, IMAGE if name == "image" else t) for name, t in columns]
    else:
        files = [{"split": split, "path": f"metadata_{split}.jsonl"} for split in SPLITS]
    front = {"configs": [{"config_name": "default", "data_files": files}],
             "dataset_info": {"features": [yaml_feature(name, t) for name, t in columns]}}
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
    if settings.parquet and sharded:
        assert parquet_files is not None
        per = ", ".join(f"{len(parquet_files.get(split, ()))} {split}" for split in SPLITS)
        lines.append(f"- `data/<split>-<k>-of-<n>.parquet` ({per} files of at most {settings.parquet_rows_per_file} "
                     "rows): the task rows with the image embedded (`image` is a Hugging Face Image: struct of "
                     "bytes and path); the `default` config reads each split's files as one split.")
    elif settings.parquet:
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
