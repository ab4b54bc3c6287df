"""The whole-object screen of the Crawl pool: composites, fragments, rejections listed with reasons."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import pool as pixel_pool


def _ring(size: int = 12) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    r = np.hypot(yy - (size - 1) / 2, xx - (size - 1) / 2)
    return (r <= size / 2) & (r >= size / 2 - 3)


def _canvas(mask: np.ndarray) -> np.ndarray:
    out = np.zeros((32, 32, 4), dtype=np.uint8)
    out[mask] = (120, 120, 140, 255)
    return out


def test_two_touching_objects_are_a_seam_and_one_object_is_not():
    pair = np.zeros((32, 32), dtype=bool)
    pair[6:18, 3:15] = _ring()
    pair[9:21, 15:27] = _ring()  # the packer's way: boxes side by side, no gap, rims touching
    assert 0 < pixel_pool.seam_contacts(pair) <= pixel_pool.MAX_SEAM_CONTACTS
    assert pixel_pool.shape_rejection(_canvas(pair)).startswith("seam")
    solid = np.zeros((32, 32), dtype=bool)
    solid[6:26, 6:26] = True
    assert pixel_pool.seam_contacts(solid) > pixel_pool.MAX_SEAM_CONTACTS
    assert pixel_pool.shape_rejection(_canvas(solid)) is None


def test_separated_sizeable_parts_are_rejected_but_a_small_sparkle_is_not():
    two = np.zeros((32, 32), dtype=bool)
    two[4:14, 4:28] = True
    two[20:30, 4:28] = True
    assert pixel_pool.sizeable_parts(two) == 2
    out = _canvas(two)
    out[14:20, 4:28, 3] = 60  # a faint shadow joins them: alpha > 0, not ink
    assert pixel_pool.shape_rejection(out).startswith("parts")
    one = np.zeros((32, 32), dtype=bool)
    one[4:28, 4:28] = True
    one[1, 30] = True
    assert pixel_pool.sizeable_parts(one) == 1


def test_listed_and_region_rejections_say_why():
    assert pixel_pool.listed_rejection("crawl-player-1602").startswith("listed: two figures")
    assert pixel_pool.listed_rejection("crawl-player-0500").startswith("region: draconian")
    assert pixel_pool.listed_rejection("crawl-main-0001") is None
    with pytest.raises(ValueError, match="REJECTED"):
        pixel_pool.check_listed_ids(["crawl-main-0001"])


def test_the_issue_examples_are_rejected_and_no_library_sprite_fails_the_shape_test():
    rejected = {r["id"]: r["reason"] for r in px.load_pixel_manifest("pixel_rejected")["rejected"]}
    library = px.default_library()
    for sprite in ("crawl-player-1848", "crawl-main-0495", "crawl-player-1709", "crawl-player-1874"):
        assert sprite in rejected and rejected[sprite]
        assert sprite not in library.entries
    assert {r.split(":")[0] for r in rejected.values()} <= {"seam", "parts", "translucent", "texture", "region", "listed"}
    crawl = [sid for sid, e in library.entries.items() if e["source"] == "crawl"]
    assert len(crawl) >= 1000
    for sid in crawl:
        assert pixel_pool.screen(sid, library.pixels(sid)) is None, sid


def test_see_through_decals_and_edge_to_edge_textures_are_rejected():
    blob = np.zeros((32, 32), dtype=bool)
    blob[10:22, 4:28] = True
    puddle = _canvas(blob)
    puddle[blob, 3] = 180  # every ink pixel see-through: a liquid, not an object
    assert pixel_pool.shape_rejection(puddle).startswith("translucent")
    table = np.ones((32, 32), dtype=bool)
    table[8:24, 8:24] = False
    assert pixel_pool.shape_rejection(_canvas(table)).startswith("texture")
    big = np.zeros((32, 32), dtype=bool)
    big[0:32, 3:29] = True  # a big monster may touch two edges; that is not a texture
    assert pixel_pool.shape_rejection(_canvas(big)) is None
