"""Emoji keys: case, FE0F and zero padding ignored."""

from __future__ import annotations

from rose_gen.assets.emoji.catalogue import emoji_key, key_from_filename
from tests.rose_gen.assets.emoji.conftest import KNOWN


def test_keys_ignore_case_fe0f_and_zero_padding():
    assert key_from_filename("0023-FE0F-20E3") == "23-20e3"
    assert key_from_filename("1f3f3-fe0f-200d-1f308") == "1f3f3-200d-1f308"
    assert emoji_key("#\ufe0f\u20e3") == "23-20e3"
    assert emoji_key("\U0001f9eb") == KNOWN
