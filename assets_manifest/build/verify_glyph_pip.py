"""Verify the mined glyph pairs in the pip font pool: assets_manifest/glyph_pairs_pip.json.

    .venv/bin/python -m assets_manifest.build.verify_glyph_pip

The pairs are those of ``glyph_pairs.json`` (mined with the Debian faces, see
``mine_glyph_pairs.py``); each is verified in every face of the ``pip`` pool of
``fonts.json`` with the same check as the Debian pool (:func:`rose_gen.sources.glyph.verify_pair`
at 42 px: glyph checks, then perceptual visibility). Pairs verified in no pip face are left
out. The output records the sha256 of ``glyph_pairs.json`` it was made from; the glyph
source re-verifies by itself when that, or the FreeType version, no longer matches.
Output is sorted, one pair per line, without timestamps.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from importlib import metadata

import PIL
from PIL import features

from assets_manifest import load_manifest, manifest_path, sha256_file
from rose_gen.assets.fonts import manifest_faces, resolve_face
from rose_gen.core.errors import AssetError
from rose_gen.sources.glyph import PIP_VERIFICATION, VISIBILITY_CELL, verify_pair


def verify() -> dict:
    """The pip-pool verification manifest as a dict."""
    faces = manifest_faces(pool="pip")
    try:
        for face in faces:
            resolve_face(face)
    except AssetError as exc:
        sys.exit(str(exc))
    pairs = {}
    for rec in load_manifest("glyph_pairs")["pairs"]:
        a, b = rec["chars"]
        checks = {f.name: verify_pair(f, a, b, VISIBILITY_CELL) for f in faces}
        verified = {n: [c.changed_fraction, c.ssim] for n, c in checks.items() if c.ok}
        if verified:
            rejected = {n: c.reason for n, c in checks.items() if not c.ok}
            pairs[rec["pair_key"]] = {"faces": verified, "rejected_faces": rejected}
    packages = sorted({f.package for f in faces})
    return {
        "schema": 1,
        "provenance": {
            "pairs_from": "assets_manifest/glyph_pairs.json",
            "glyph_pairs_sha256": sha256_file(manifest_path("glyph_pairs")),
            "faces": [f.name for f in faces],
            "packages": {p: metadata.version(p) for p in packages},
            "verify_cell": VISIBILITY_CELL,
            "visibility": "rose_gen.visibility.is_visible defaults; faces map to [changed_fraction, ssim]",
            "pillow": PIL.__version__, "freetype": features.version("freetype2"),
        },
        "pairs": pairs,
    }


def dump(manifest: dict) -> str:
    """Stable JSON text: sorted keys, one pair per line."""
    head = {k: v for k, v in manifest.items() if k != "pairs"}
    lines = [f' {json.dumps(k, ensure_ascii=False)}: '
             f'{json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))}'
             for k, v in sorted(manifest["pairs"].items())]
    text = json.dumps(head, ensure_ascii=False, indent=1, sort_keys=True)[:-2]
    return text + ',\n "pairs": {\n' + ",\n".join(lines) + "\n }\n}\n"


def main() -> None:
    t0 = time.perf_counter()
    manifest = verify()
    out = manifest_path(PIP_VERIFICATION)
    out.write_text(dump(manifest), encoding="utf-8")
    per_face = Counter(n for rec in manifest["pairs"].values() for n in rec["faces"])
    print(f"wrote {out}: {len(manifest['pairs'])} pairs verified in >= 1 pip face; "
          f"per face {dict(sorted(per_face.items()))}; {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
