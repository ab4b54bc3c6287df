"""PixelContent pair choice: palette swaps last and flagged, similar palettes with different shapes first."""

from __future__ import annotations

import numpy as np

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import pairs as pixel_pairs


def _lib(pixels: list[np.ndarray], family: str = "f") -> list[px.LibrarySprite]:
    return [px.LibrarySprite({"id": f"s{i}", "family": family, "source": "procedural"}, p) for i, p in enumerate(pixels)]


def _base() -> np.ndarray:
    out = np.zeros((32, 32, 4), dtype=np.uint8)
    out[6:26, 8:24] = (40, 90, 160, 255)
    out[6:26, 8] = out[6:26, 23] = out[6, 8:24] = out[25, 8:24] = (10, 20, 40, 255)
    out[10:14, 12:20] = (200, 210, 230, 255)
    return out


def _recoloured(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out[(a[..., :3] == (40, 90, 160)).all(-1)] = (230, 160, 90, 255)
    return out


def _reshaped(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out[6:16, 8:14] = 0  # a corner cut away: same colours, different silhouette
    out[16:22, 24:28] = (40, 90, 160, 255)
    return out


def test_a_recoloured_twin_is_flagged_and_a_reshaped_sibling_is_not():
    a = _base()
    swap = pixel_pairs.measure_pair(a, _recoloured(a))
    assert swap.colour_only and swap.silhouette_iou == 1.0
    shape = pixel_pairs.measure_pair(a, _reshaped(a))
    assert not shape.colour_only and shape.silhouette_iou < 0.9 and shape.palette_overlap > swap.palette_overlap


def test_pairs_prefer_shape_differences_and_use_a_sprite_at_most_twice():
    a = _base()
    lib = _lib([a, _recoloured(a), _reshaped(a), _reshaped(_recoloured(a)), _recoloured(_reshaped(a))])
    cands = [(2, 4, 0.8), (0, 1, 0.8), (0, 2, 0.8), (1, 3, 0.8), (0, 3, 0.8), (2, 3, 0.8)]
    pairs = pixel_pairs.content_pairs(lib, cands, band=(0.0, 1.0))
    assert (pairs[0]["a"], pairs[0]["b"]) == ("s0", "s2")  # same palette, different shape first
    flags = [p["colour_only"] for p in pairs]
    assert any(flags) and flags == sorted(flags)  # palette swaps come last, flagged
    uses = {}
    for p in pairs:
        for s in (p["a"], p["b"]):
            uses[s] = uses.get(s, 0) + 1
    assert max(uses.values()) <= pixel_pairs.MAX_PAIRS_PER_SPRITE
    assert pixel_pairs.content_pairs(lib, cands, band=(0.0, 1.0)) == pairs
    assert pixel_pairs.content_pairs(lib, cands, band=(0.9, 1.0)) == []


def test_committed_pairs_record_the_measures_and_put_no_swap_in_the_standard_crawl_pool():
    pairs = px.load_pixel_manifest("pixel_content_pairs")["pairs"]
    crawl = [p for p in pairs if p["source"] == "crawl"]
    standard = [p for p in crawl if not p["colour_only"]]
    assert len(standard) >= 200
    assert all({"silhouette_iou", "palette_overlap", "block_delta_e"} <= set(p) for p in pairs)
    library = px.default_library()
    for p in crawl[:: max(1, len(crawl) // 20)]:
        m = pixel_pairs.measure_pair(library.pixels(p["a"]), library.pixels(p["b"]))
        assert (m.colour_only, m.silhouette_iou, m.block_delta_e) == (p["colour_only"], p["silhouette_iou"],
                                                                      p["block_delta_e"])
