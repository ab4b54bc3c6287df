"""The toolkit's seeding scheme: fixed draws (published intervals depend on them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rose_eval.seeding import seed_sequence, stream


def test_draws_are_pinned():
    # Recorded values: a change here moves every published bootstrap interval.
    assert stream(0, "ROSE-ChineseGlyph", "bootstrap").integers(0, 1000, size=6).tolist() == [
        22, 345, 392, 942, 128, 449]
    assert stream(12345, "ROSE-PixelContent", "rank-subsample").random(2).tolist() == [
        0.6460117506744512, 0.44116976660406115]
    assert [int(x) for x in seed_sequence(3, "ROSE-EmojiStyle", "bootstrap").generate_state(2)] == [
        1820286068, 866813715]


def test_streams_do_not_depend_on_the_process():
    code = ("from rose_eval.seeding import stream;"
            "print(stream(5, 'ROSE-EmojiStyle', 'bootstrap', 2).integers(0, 10**9, size=3).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(stream(5, "ROSE-EmojiStyle", "bootstrap", 2)
                                     .integers(0, 10**9, size=3).tolist())


def test_streams_are_independent_of_each_other():
    a = stream(1, "ROSE-ChineseGlyph", "bootstrap").random(4).tolist()
    for other in (stream(2, "ROSE-ChineseGlyph", "bootstrap"), stream(1, "ROSE-EmojiStyle", "bootstrap"),
                  stream(1, "ROSE-ChineseGlyph", "rank-subsample"),
                  stream(1, "ROSE-ChineseGlyph", "bootstrap", 1)):
        assert other.random(4).tolist() != a


@pytest.mark.parametrize(("seed", "index"), [(-1, 0), (0, -3)])
def test_negative_numbers_are_refused(seed, index):
    with pytest.raises(ValueError, match="non-negative"):
        seed_sequence(seed, "s", "p", index)
