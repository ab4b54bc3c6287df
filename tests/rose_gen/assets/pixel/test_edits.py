"""PixelEdit edits: the sprite's own colours, small and local, visible, not popping out, balanced."""

from __future__ import annotations

from collections import Counter

import numpy as np

from rose_gen.assets.pixel import edit_kinds as ek
from rose_gen.assets.pixel import edits as pe
from rose_gen.assets.pixel import library as px
from rose_gen.assets.pixel import procedural as px_proc
from rose_gen.assets.pixel import sprite as px_sprite
from rose_gen.assets.pixel.metrics import block_delta_e
from rose_gen.assets.visibility import is_visible, tile_difference


def _colours(rgba: np.ndarray) -> set[tuple[int, int, int, int]]:
    """Opaque colours (RGB + alpha) of a sprite, plus 'transparent'."""
    return {tuple(int(v) for v in c) for c in rgba.reshape(-1, 4) if c[3]} | {(0, 0, 0, 0)}


def _assert_in_palette(before: np.ndarray, after: np.ndarray) -> None:
    changed = (before != after).any(axis=-1)
    new = {tuple(int(v) for v in c) if c[3] else (0, 0, 0, 0) for c in after[changed]}
    assert new <= _colours(before), f"edit paints colours the sprite does not have: {new - _colours(before)}"


SPRITES = [px_proc.procedural_family(3, f, 1)[0] for f in range(6)]


def _crawl_sprites(n: int = 12) -> list[np.ndarray]:
    library = px.default_library()
    ids = sorted(sid for sid, e in library.entries.items() if e["source"] == "crawl")
    return [library.pixels(sid) for sid in ids[:: len(ids) // n][:n]]


def test_planned_edits_are_seeded_visible_and_never_pop_out():
    kinds = set()
    for i, sprite in enumerate(SPRITES * 3):
        order = pe.kind_order(i, pe.edit_rng(0, f"o{i}"))
        planned = pe.plan_edit(sprite, pe.edit_rng(0, f"t{i}"), order)
        assert planned == pe.plan_edit(sprite, pe.edit_rng(0, f"t{i}"), order)
        assert planned is not None
        kinds.add(planned.edit.kind)
        edited = ek.apply_edit(sprite, planned.edit)
        a, b = px_sprite.render_sprite(sprite, px_sprite.MIN_CELL_SIZE), px_sprite.render_sprite(edited, px_sprite.MIN_CELL_SIZE)
        assert px_sprite.clears_visibility(tile_difference(a, b), px_sprite.EDIT_MARGIN)
        assert block_delta_e(np.asarray(a), np.asarray(b)) <= pe.POP_OUT_LIMIT
        assert planned.changed_pixels <= max(ek.MIN_PIXELS, np.ceil(ek.MAX_SHARE * px_sprite.solid_mask(sprite).sum()))
        assert all(pe.EDGE_MARGIN <= v < 32 - pe.EDGE_MARGIN for y, x, *_ in planned.edit.pixels for v in (y, x))
    assert len(kinds) >= 6


def test_an_edit_at_the_cell_border_is_refused():
    sprite = np.zeros((32, 32, 4), dtype=np.uint8)
    sprite[4:28, 0:30] = (90, 60, 30, 255)
    sprite[4:28, 0:30:3] = (200, 160, 90, 255)
    inner = ek.EditSpec("remove", (10, 10), tuple((y, x, 0, 0, 0, 0) for y in range(8, 14) for x in range(8, 11)))
    border = ek.EditSpec("remove", (10, 0), tuple((y, x, 0, 0, 0, 0) for y in range(8, 14) for x in range(0, 3)))
    assert pe.check_edit(sprite, inner) is not None
    assert pe.check_edit(sprite, border) is None


def test_the_planner_gives_up_rather_than_lowering_the_bar():
    sprite = SPRITES[1]
    faint = sprite.copy()
    ys, xs = np.nonzero(px_sprite.solid_mask(sprite))
    faint[ys[0], xs[0], :3] = np.clip(faint[ys[0], xs[0], :3].astype(int) + 3, 0, 255)
    assert not is_visible(px_sprite.edit_difference(sprite, faint))
    assert pe.plan_edit(sprite, pe.edit_rng(0, "x"), margin=150.0, attempts=3) is None
    assert pe.plan_edit(sprite, pe.edit_rng(0, "x"), pop_out=0.0, attempts=3) is None


def test_kind_order_puts_the_least_used_kinds_first():
    used = {k: 5 for k in ek.EDIT_KINDS} | {"trim": 1, "erase": 2}
    order = pe.kind_order(3, np.random.default_rng(0), used)
    assert order[:2] == ("trim", "erase") and sorted(order) == sorted(ek.EDIT_KINDS)
    assert pe.kind_order(12, np.random.default_rng(0))[0] == ek.EDIT_KINDS[12 % len(ek.EDIT_KINDS)]


def test_manifest_edits_are_in_palette_local_visible_and_balanced():
    library = px.default_library()
    bases = px.load_pixel_manifest("pixel_edit_bases")["bases"]
    for base in bases[:: max(1, len(bases) // 60)]:
        pixels = library.pixels(base["sprite"])
        edit = ek.EditSpec.from_json(base["edit"])
        edited = ek.apply_edit(pixels, edit)
        _assert_in_palette(pixels, edited)
        assert base["changed_pixels"] == edit.size == int((pixels != edited).any(-1).sum())
        assert all(pe.EDGE_MARGIN <= v < 32 - pe.EDGE_MARGIN for y, x, *_ in edit.pixels for v in (y, x))
        assert px_sprite.pixel_sha256(edited) == base["edited_sha256"]
        a, b = px_sprite.render_sprite(pixels, px_sprite.MIN_CELL_SIZE), px_sprite.render_sprite(edited, px_sprite.MIN_CELL_SIZE)
        assert is_visible(tile_difference(a, b))
        assert block_delta_e(np.asarray(a), np.asarray(b)) <= pe.POP_OUT_LIMIT
    kinds = Counter(b["edit"]["kind"] for b in bases if b["source"] == "crawl")
    assert set(kinds) == set(ek.EDIT_KINDS)
    crawl = sum(kinds.values())
    assert sum(kinds[k] for k in ek.SHAPE_KINDS) >= 0.5 * crawl
    assert max(kinds.values()) <= 0.25 * crawl


def test_edit_building_is_deterministic():
    lib = px.procedural_library(5, families=3, members=2)
    assert pe.edit_bases(lib, 5) == pe.edit_bases(lib, 5)
