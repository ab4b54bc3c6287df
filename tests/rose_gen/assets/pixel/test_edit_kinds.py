"""PixelEdit edit kinds: each draws a small change in the sprite's own colours; edits round-trip."""

from __future__ import annotations

import numpy as np
import pytest

from rose_gen.assets.pixel import edit_kinds as ek
from rose_gen.assets.pixel import edits as pe
from tests.rose_gen.assets.pixel.test_edits import SPRITES, _assert_in_palette, _crawl_sprites


@pytest.mark.parametrize("kind", ek.EDIT_KINDS)
def test_every_kind_uses_only_the_sprites_own_colours_and_stays_small(kind):
    made = 0
    for i, sprite in enumerate(SPRITES + _crawl_sprites()):
        rng = pe.edit_rng(1, f"{kind}-{i}")
        for _ in range(6):
            edit = ek.KIND_PLANNERS[kind](sprite, rng)
            if edit is None:
                continue
            made += 1
            assert edit.kind == kind
            edited = ek.apply_edit(sprite, edit)
            _assert_in_palette(sprite, edited)
            assert int((sprite != edited).any(axis=-1).sum()) == edit.size
    assert made >= 3, f"{kind} could not be drawn on these sprites"


def test_edit_json_round_trip_and_bad_edits_are_refused():
    planned = pe.plan_edit(SPRITES[0], pe.edit_rng(0, "j"))
    assert planned is not None
    again = ek.EditSpec.from_json(planned.edit.to_json())
    assert again == planned.edit
    assert np.array_equal(ek.apply_edit(SPRITES[0], again), ek.apply_edit(SPRITES[0], planned.edit))
    with pytest.raises(ValueError, match="unknown edit kind"):
        ek.apply_edit(SPRITES[0], ek.EditSpec("recolour", (0, 0), ((0, 0, 1, 2, 3, 255),)))
    with pytest.raises(ValueError, match="outside"):
        ek.apply_edit(SPRITES[0], ek.EditSpec("add", (0, 0), ((40, 0, 1, 2, 3, 255),)))
