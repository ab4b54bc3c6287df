"""``rose-replay``: rebuild a released v0.1 folder from its metadata, or audit its images.

Usage::

    rose-replay <v0.1 folder | metadata.jsonl> <output dir> [--pixel_assets DIR] [--overwrite]
    rose-replay <v0.1 folder | metadata.jsonl> --report_only FILE [--pixel_assets DIR]
    rose-replay <v0.1 folder | metadata.jsonl> --compare_images <images dir> [--audit_out FILE]

The first form writes a release in our layout (``rose_gen.release.export``) plus
``replay_report.json`` (substitutions, scene counts by asset kind, inconsistencies and
defects of the released rows, carried fields, difficulty agreement, scenes not rendered).
The second re-derives the rows and resolves the assets without drawing and writes only that
report. The third checks, per scene, that the original base image's odd cells are where the
metadata says. Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from assets_manifest import ManifestError, manifest_path, sha256_file
from rose_eval.atomic import write_atomic
from rose_eval.cli.args import OneLineParser
from rose_gen.check.replay import (
    MANIFEST,
    ReplayError,
    ReplayOptions,
    SceneOutcome,
    audit_images,
    input_files,
    read_rows,
    replay_rows,
    summarize,
)
from rose_gen.core.errors import AssetError
from rose_gen.core.schema import SceneRows
from rose_gen.release.export import ExportSettings, ReleaseInfo, ReleaseWriter
from rose_gen.release.folder import ReleaseError, check_target
from rose_gen.tasks.templates import BRIDGE_TEMPLATES, MAIN_TEMPLATES

REPORT_FILE = "replay_report.json"


def build_parser() -> OneLineParser:
    """rose-replay's arguments."""
    ap = OneLineParser(prog="rose-replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="a v0.1-format folder (metadata_*.jsonl, analysis/data/*/metadata_*.jsonl) "
                                  "or one metadata .jsonl file")
    ap.add_argument("output_dir", nargs="?", help="where to write the replayed release")
    ap.add_argument("--pixel_assets", help="folder holding v0.1's original pixel-art files (by pair_key name)")
    ap.add_argument("--compare_images", metavar="DIR", help="audit mode: folder of the original images")
    ap.add_argument("--audit_out", help="audit mode: write the per-scene audit as JSON here")
    ap.add_argument("--report_only", metavar="FILE", help="rows only: re-derive and compare the rows, resolve the "
                                                          "assets, draw nothing; write the report to FILE")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing output_dir")
    return ap


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed arguments; one line and exit 2 when no output is named."""
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.compare_images is None and args.output_dir is None and args.report_only is None:
        ap.error("give an output_dir, --report_only FILE, or --compare_images DIR for the audit mode")
    return args


def _release_info(root: Path, files: Sequence[Path], options: ReplayOptions) -> ReleaseInfo:
    inputs = [{"file": f.relative_to(root).as_posix() if f.is_relative_to(root) else f.name,
               "sha256": sha256_file(f)} for f in files]
    config = {"replay": {"inputs": inputs, "pixel_assets": bool(options.pixel_assets),
                         "manifest": f"assets_manifest/{MANIFEST}.json",
                         "manifest_sha256": sha256_file(manifest_path(MANIFEST)),
                         "png_compress_level": options.png_compress_level,
                         "png_encoder": options.png_encoder}}
    from rose_gen.release.provenance import library_versions

    return ReleaseInfo(config=config, versions=library_versions(), dataset_name="ROSE v0.1 (replayed)")


def write_release(outcomes: Sequence[SceneOutcome], output_dir: Path, info: ReleaseInfo, *,
                  overwrite: bool) -> tuple[Path, dict]:
    """Write the replayed scenes with the atomic release writer; return (path, report)."""
    report = summarize(outcomes)
    withheld = []
    has_main = any(r["task_template"] in MAIN_TEMPLATES for o in outcomes for r in o.rows)
    check_target(output_dir, overwrite=overwrite, config=info.config)
    with ReleaseWriter(output_dir, ExportSettings(parquet=has_main), overwrite=overwrite) as writer:
        for o in outcomes:
            main = [r for r in o.rows if r["task_template"] in MAIN_TEMPLATES]
            if main and not o.images:
                withheld.extend(r["item_id"] for r in main)  # a release row must have its image
                main = []
            bridges = {t: [r for r in o.rows if r["task_template"] == t] for t in BRIDGE_TEMPLATES}
            writer.add_scene(SceneRows(main=main, bridges=bridges), o.images)
        report["withheld_main_rows"] = withheld
        writer.add_file(REPORT_FILE, _report_text(report).encode("utf-8"))
        path, _ = writer.commit(info)
    return path, report


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        src = Path(args.input)
        files = input_files(src)
        root = src if src.is_dir() else src.parent
        items = read_rows(files, root)
        if args.compare_images is not None:
            audit = audit_images(items, Path(args.compare_images))
            if args.audit_out:
                write_atomic(Path(args.audit_out), json.dumps(audit, ensure_ascii=False, indent=1) + "\n")
            counts: dict[str, int] = {}
            for rec in audit:
                counts[rec["status"]] = counts.get(rec["status"], 0) + 1
            print(f"rose-replay audit: {len(audit)} scenes; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            for rec in audit:
                if rec["status"] == "mismatch":
                    print(f"  {rec['scene_id']}: missing {rec['missing']} extra {rec['extra']}")
            return 0
        if args.report_only is not None:
            report_path = Path(args.report_only)
            report = summarize(replay_rows(items, ReplayOptions(pixel_assets=args.pixel_assets, render=False)))
            write_atomic(report_path, _report_text(report))
            path = report_path
        else:
            options = ReplayOptions(pixel_assets=args.pixel_assets)
            outcomes = replay_rows(items, options)
            path, report = write_release(outcomes, Path(args.output_dir), _release_info(root, files, options),
                                         overwrite=args.overwrite)
    except (ReplayError, ReleaseError, AssetError, ManifestError, OSError) as exc:
        print(f"rose-replay: error: {exc}", file=sys.stderr)
        return 2
    _print_summary(report, path)
    return 0


def _report_text(report: dict) -> str:
    return json.dumps(report, ensure_ascii=False, indent=1) + "\n"


def _print_summary(report: dict, path: Path) -> None:
    kinds = report["scene_kinds"]["total"]
    agreement = report["difficulty_agreement"]
    print(f"rose-replay: {report['scenes']} scenes, {report['rows']} rows -> {path}")
    print(f"  scenes rendered: {report['scenes_rendered']}; not rendered (no installed asset): "
          f"{len(report['not_rendered'])}")
    print(f"  scenes by asset kind: exact {kinds['exact']}, same_design {kinds['same_design']}, "
          f"stand_in {kinds['stand_in']}")
    print(f"  inconsistencies in the released rows: {len(report['inconsistencies'])} "
          f"({', '.join(f'{k} {v}' for k, v in report['inconsistencies_by_field'].items()) or 'none'})")
    print(f"  difficulty agreement with our rule: {agreement['agree']}/{agreement['rows']}"
          + (f" ({agreement['rate']:.1%})" if agreement["rate"] is not None else ""))
    for rec in report["inconsistencies"][:20]:
        print(f"  {rec['where']} {rec['item_id']} {rec['field']} ({rec['kind']}): released {rec['released']!r}, "
              f"derived {rec['derived']!r}" + (f"; {rec['why']}" if rec["why"] else ""))
    for rec in report["not_rendered"][:20]:
        print(f"  {rec['scene_id']}: {rec['status']}")


if __name__ == "__main__":
    raise SystemExit(main())
