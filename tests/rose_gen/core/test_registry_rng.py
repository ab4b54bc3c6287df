import numpy as np
import pytest

from rose_eval.registry import Registry, RegistryError
from rose_gen.core.rng import scene_rng, seed_sequence, subset_rng


def test_registry_refuses_collisions_and_names_known_items():
    reg: Registry[int] = Registry("widget")
    reg.add("a", 1)

    @reg.register("b")
    def _b():  # decorator returns the item unchanged
        return 2

    assert reg.names() == ["a", "b"]
    assert reg.get("a") == 1
    with pytest.raises(RegistryError, match="already registered"):
        reg.add("a", 3)
    with pytest.raises(RegistryError) as err:
        reg.get("zzz")
    assert str(err.value) == "unknown widget 'zzz'; known: a, b"


def test_scene_streams_are_stable_and_independent():
    a = scene_rng(7, "ROSE-ChineseGlyph", 3).integers(0, 2**31, size=8)
    b = scene_rng(7, "ROSE-ChineseGlyph", 3).integers(0, 2**31, size=8)
    assert np.array_equal(a, b)
    # Different scene, subset, purpose or seed -> different stream.
    for other in (
        scene_rng(7, "ROSE-ChineseGlyph", 4),
        scene_rng(7, "ROSE-EmojiStyle", 3),
        scene_rng(7, "ROSE-ChineseGlyph", 3, purpose="render"),
        scene_rng(8, "ROSE-ChineseGlyph", 3),
    ):
        assert not np.array_equal(a, other.integers(0, 2**31, size=8))
    assert not np.array_equal(
        subset_rng(7, "ROSE-ChineseGlyph", "split").integers(0, 2**31, size=8), a
    )


def test_seed_sequence_is_process_independent():
    # A fixed expectation: the derivation must not depend on Python's salted hash().
    state = seed_sequence(0, "ROSE-ChineseGlyph", "scene", 1).generate_state(2)
    import subprocess
    import sys

    code = (
        "from rose_gen.core.rng import seed_sequence;"
        "print([int(x) for x in seed_sequence(0,'ROSE-ChineseGlyph','scene',1).generate_state(2)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str([int(x) for x in state])


def test_negative_seed_is_rejected():
    with pytest.raises(ValueError):
        seed_sequence(-1, "s", "p")
