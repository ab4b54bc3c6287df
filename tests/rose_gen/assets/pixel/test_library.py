"""The sprite library: checksums against the manifests, committed manifests consistent."""

from __future__ import annotations

import copy

import pytest

from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import sprite as px_sprite


def test_sprite_checksum_mismatch_is_refused():
    manifest = copy.deepcopy(px.default_library().manifest)
    entry = next(e for e in manifest["sprites"] if e["source"] == "crawl")
    entry["sha256"] = "0" * 64
    with pytest.raises(px_sprite.PixelAssetError, match="checksum mismatch"):
        px.SpriteLibrary(manifest).pixels(entry["id"])


def test_sheet_checksum_mismatch_is_refused():
    manifest = copy.deepcopy(px.default_library().manifest)
    for sheet in manifest["sheets"]:
        sheet["sha256"] = "f" * 64
    entry = next(e for e in manifest["sprites"] if e["source"] == "crawl")
    with pytest.raises(px_sprite.PixelAssetError, match="checksum mismatch"):
        px.SpriteLibrary(manifest).pixels(entry["id"])


def test_committed_manifests_are_sorted_and_consistent():
    sprites = px.default_library().manifest["sprites"]
    ids = [e["id"] for e in sprites]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len({e["sha256"] for e in sprites}) == len(sprites)  # deduplicated
    pairs = px.load_pixel_manifest("pixel_content_pairs")["pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == sorted((p["a"], p["b"]) for p in pairs)
    bases = px.load_pixel_manifest("pixel_edit_bases")["bases"]
    assert [b["sprite"] for b in bases] == sorted(b["sprite"] for b in bases)
    assert sum(b["source"] == "crawl" for b in bases) >= 300
    assert sum(p["source"] == "crawl" for p in pairs) >= 200


def test_a_sprite_named_by_another_manifest_must_be_in_the_library():
    library = px.default_library()
    known = next(iter(library.entries))
    assert library.entry_named_by("pixel_edit_bases", known) is library.entries[known]
    with pytest.raises(px_sprite.PixelAssetError, match=r"pixel_edit_bases\.json names sprite nope missing from "
                                                  r"pixel_sprites\.json; regenerate with assets_manifest/build"):
        library.entry_named_by("pixel_edit_bases", "nope")
