"""Mine confusable character pairs and verify them in every face: assets_manifest/glyph_pairs.json.

    .venv/bin/python -m assets_manifest.build.mine_glyph_pairs

1. Characters: the Table of General Standard Chinese Characters (Unihan kTGH), levels 1-2.
2. In each mining face: render every character ink-centred, blur (sigma 2), downsample to
   32x32, subtract the mean, normalise; cosine similarity of all characters is one matrix
   product. Each character's nearest neighbours above ``CLOSE`` are candidates.
3. Keep pairs close in at least ``MIN_FACES`` mining faces; drop Unihan variant pairs; cap
   any one radical swap (e.g. 扌/木) at ``RADICAL_SWAP_CAP`` pairs; score = mean similarity
   over the mining faces; tier by score.
4. Verify every pair in every manifest face at the smallest cell size (42 px): both glyphs
   pass the glyph checks and the two tiles differ perceptually (rose_gen.assets.visibility).

Output is sorted and has no timestamps; the mining time is printed (see glyph.md).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict

import numpy as np
import PIL
from PIL import features
from scipy.ndimage import gaussian_filter

from assets_manifest import manifest_path
from assets_manifest.build.unihan import (
    TGH_LEVEL_ENDS,
    radicals,
    tgh_chars,
    tgh_level,
    unihan_version,
    variant_pairs,
)
from rose_gen.assets.fonts import (
    FontFace,
    centred_mask,
    check_glyph,
    glyph_ink,
    manifest_faces,
)
from rose_gen.sources.glyph import verify_pair

MAX_RANK = 6500  # kTGH levels 1 and 2
MINING_FACES = ("NotoSansCJKsc-Regular", "NotoSerifCJKsc-Regular", "WenQuanYiZenHei", "UKaiCN",
                "LXGWWenKai-Regular", "UMingCN")
RENDER_SIZE = 48  # font px for mining
CANVAS = 64  # mining canvas, downsampled 2x to 32x32
BLUR_SIGMA = 2.0
NEIGHBOURS = 8  # nearest neighbours kept per character and face
CLOSE = 0.88  # cosine similarity that counts as "close" in one face
MIN_FACES = 2
RADICAL_SWAP_CAP = 12
TIERS = (("high", 0.945), ("medium", 0.935), ("low", 0.0))  # first tier whose floor the score reaches
LEVEL1_BONUS = 0.02  # selection prefers pairs of two level-1 (common) characters by this much
MAX_PAIRS = 1000  # best pairs kept before verification
VERIFY_CELL = 42  # smallest cell size of any profile
MIN_VERIFIED_FACES = 2


def tier_of(score: float) -> str:
    """Tier name for a mining score."""
    return next(name for name, floor in TIERS if score >= floor)


def feature_matrix(face: FontFace, chars: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(unit feature rows, mask of characters that pass the glyph checks) for one face."""
    ok = np.array([check_glyph(face, c, VERIFY_CELL).ok for c in chars])
    stack = np.zeros((len(chars), CANVAS, CANVAS), dtype=np.float32)
    for i, c in enumerate(chars):
        if ok[i]:
            stack[i] = centred_mask(glyph_ink(face, c, RENDER_SIZE), CANVAS)
    stack = gaussian_filter(stack / 255.0, sigma=(0, BLUR_SIGMA, BLUR_SIGMA))
    small = stack.reshape(len(chars), CANVAS // 2, 2, CANVAS // 2, 2).mean(axis=(2, 4)).reshape(len(chars), -1)
    small -= small.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(small, axis=1, keepdims=True)
    return small / np.maximum(norms, 1e-9), ok


def close_pairs(features_: np.ndarray, ok: np.ndarray) -> dict[tuple[int, int], float]:
    """Index pairs (i < j) among each row's nearest neighbours with similarity >= CLOSE."""
    sim = features_ @ features_.T
    np.fill_diagonal(sim, -1.0)
    sim[~ok, :] = -1.0
    sim[:, ~ok] = -1.0
    top = np.argpartition(-sim, NEIGHBOURS, axis=1)[:, :NEIGHBOURS]
    out: dict[tuple[int, int], float] = {}
    rows, cols = np.nonzero(np.take_along_axis(sim, top, axis=1) >= CLOSE)
    for i, k in zip(rows.tolist(), cols.tolist(), strict=True):
        j = int(top[i, k])
        out[(min(i, j), max(i, j))] = float(sim[i, j])
    return out


def mine() -> tuple[dict, float]:
    """The glyph-pairs manifest and the mining time in seconds."""
    t0 = time.perf_counter()
    ranked = [(c, r) for c, r in tgh_chars() if r <= MAX_RANK]
    chars = [c for c, _ in ranked]
    rank = dict(ranked)
    faces = {f.name: f for f in manifest_faces()}
    per_face: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for name in MINING_FACES:
        feats, ok = feature_matrix(faces[name], chars)
        for key, s in close_pairs(feats, ok).items():
            per_face[key][name] = s
    variants = variant_pairs()
    radical = radicals()
    candidates = []
    for (i, j), sims in per_face.items():
        a, b = sorted((chars[i], chars[j]))
        if len(sims) < MIN_FACES or frozenset((a, b)) in variants:
            continue
        score = round(float(np.mean(list(sims.values()))), 4)
        common = max(rank[a], rank[b]) <= TGH_LEVEL_ENDS[0]
        candidates.append((score + (LEVEL1_BONUS if common else 0.0), score, a, b, sims))
    candidates.sort(key=lambda t: (-t[0], t[2], t[3]))
    swaps: dict[tuple[str, str], int] = defaultdict(int)
    kept = []
    for _, score, a, b, sims in candidates:
        ra, rb = radical.get(a, "?"), radical.get(b, "?")
        swap = tuple(sorted((ra, rb)))
        if ra != rb:
            if swaps[swap] >= RADICAL_SWAP_CAP:
                continue
            swaps[swap] += 1
        kept.append((score, a, b, sims, ra, rb))
        if len(kept) >= MAX_PAIRS:
            break
    mining_seconds = time.perf_counter() - t0
    pairs = []
    for score, a, b, sims, ra, rb in kept:
        checks = {name: verify_pair(face, a, b, VERIFY_CELL) for name, face in faces.items()}
        verified = {n: [c.changed_fraction, c.ssim] for n, c in checks.items() if c.ok}
        rejected = {n: c.reason for n, c in checks.items() if not c.ok}
        if len(verified) < MIN_VERIFIED_FACES:
            continue
        pairs.append({
            "pair_key": f"{a}__{b}", "chars": [a, b], "score": score, "tier": tier_of(score),
            "mining_similarity": {n: round(s, 4) for n, s in sorted(sims.items())},
            "radicals": [ra, rb], "tgh_rank": [rank[a], rank[b]], "tgh_level": max(tgh_level(rank[a]), tgh_level(rank[b])),
            "faces": verified, "rejected_faces": rejected,
        })
    manifest = {
        "schema": 1,
        "provenance": {
            "characters": f"Unihan kTGH ranks 1-{MAX_RANK} (Unicode {unihan_version()}, Debian unicode-data)",
            "variant_fields_dropped": "kZVariant kSemanticVariant kSpecializedSemanticVariant kSpoofingVariant "
                                      "kSimplifiedVariant kTraditionalVariant",
            "mining_faces": list(MINING_FACES), "render_size": RENDER_SIZE, "canvas": CANVAS,
            "blur_sigma": BLUR_SIGMA, "feature_size": CANVAS // 2, "neighbours": NEIGHBOURS, "close": CLOSE,
            "min_faces": MIN_FACES, "radical_swap_cap": RADICAL_SWAP_CAP, "max_pairs": MAX_PAIRS,
            "tiers": {name: floor for name, floor in TIERS}, "verify_cell": VERIFY_CELL,
            "min_verified_faces": MIN_VERIFIED_FACES, "level1_bonus": LEVEL1_BONUS,
            "visibility": "rose_gen.visibility.is_visible defaults; faces map to [changed_fraction, ssim]",
            "pillow": PIL.__version__, "freetype": features.version("freetype2"),
        },
        "pairs": pairs,
    }
    return manifest, mining_seconds


def dump_manifest(manifest: dict) -> str:
    """Stable JSON text: sorted keys, one pair per line (diff-friendly, no timestamps)."""
    head = {k: v for k, v in manifest.items() if k != "pairs"}
    lines = [json.dumps(p, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for p in manifest["pairs"]]
    text = json.dumps(head, ensure_ascii=False, indent=1, sort_keys=True)[:-2]
    return text + ',\n "pairs": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def main() -> None:
    t0 = time.perf_counter()
    manifest, mining_seconds = mine()
    out = manifest_path("glyph_pairs")
    out.write_text(dump_manifest(manifest), encoding="utf-8")
    tiers: dict[str, int] = defaultdict(int)
    for p in manifest["pairs"]:
        tiers[p["tier"]] += 1
    print(f"wrote {out}: {len(manifest['pairs'])} pairs {dict(sorted(tiers.items()))}; "
          f"mining {mining_seconds:.1f} s, total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
