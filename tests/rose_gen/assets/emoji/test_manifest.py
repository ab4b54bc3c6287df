"""The emoji manifests: records agree with installed files, stable JSON, recorded geometry."""

from __future__ import annotations

import json

import pytest

from rose_gen.assets.emoji.catalogue import EmojiAssetError
from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.emoji.vendors import (
    EMOJI_VENDORS,
    STYLE_VENDORS,
)
from tests.rose_gen.assets.emoji.conftest import KNOWN


def test_manifest_records_are_consistent_with_installed_files():
    from assets_manifest import load_manifest, sha256_file

    vendors = {v["name"]: v for v in load_manifest("emoji_vendors")["vendors"]}
    assert set(vendors) == set(EMOJI_VENDORS.names())
    for name in vendors:
        assert vendors[name]["version"] == EMOJI_VENDORS.get(name).version()
    rec = identity_records()[KNOWN]
    for vendor in STYLE_VENDORS:
        f = rec["files"][vendor]
        path = EMOJI_VENDORS.get(vendor).root() / f["path"].split("#", 1)[0]
        assert sha256_file(path) == f["sha256"]


def test_manifest_writer_is_stable_json():
    from assets_manifest.build.build_emoji import dumps_one_record_per_line

    doc = {"a": 1, "rows": [{"k": "1f600", "x": [1, 2]}, {"k": "1f601", "x": []}], "z": {"b": None}}
    text = dumps_one_record_per_line(doc)
    assert json.loads(text) == doc
    assert text == dumps_one_record_per_line(doc)


def test_manifest_verified_with_other_geometry_is_refused():
    from rose_gen.assets.emoji.artwork import ART_MARGIN
    from rose_gen.assets.emoji.manifest import check_verification

    check_verification({"verification": {"art_margin": ART_MARGIN, "cell_size": 42}}, "x", 42)
    with pytest.raises(EmojiAssetError, match="rebuild"):
        check_verification({"verification": {"art_margin": ART_MARGIN + 0.1, "cell_size": 42}}, "x")
    with pytest.raises(EmojiAssetError, match="rebuild"):
        check_verification({"verification": {"art_margin": ART_MARGIN, "cell_size": 64}}, "x", 42)


def test_identity_index_is_built_once_per_parsed_manifest_and_read_only(monkeypatch):
    from rose_gen.assets.emoji import manifest

    first = identity_records()
    assert identity_records() is first
    doc = manifest.emoji_manifest("emoji_style_identities")
    assert dict(first) == {r["key"]: r for r in doc["identities"]}
    with pytest.raises(TypeError):
        first["x"] = {}  # type: ignore[index]
    changed = {**doc, "identities": doc["identities"][:3]}  # the file changed: a new parsed document
    monkeypatch.setattr(manifest, "emoji_manifest", lambda name: changed)
    assert list(identity_records()) == [r["key"] for r in doc["identities"][:3]]
