"""Cleaning the Crawl sprite pool: every sprite must be one whole object.

Crawl's packer trims each tile to its bounding box and stacks the boxes with no gap, so
slicing the atlas by connected components also yields composites (several objects that
touch in the atlas: a row of rings, a shield beside gems), pieces cut from a neighbour
when an over-size component is split, and fragments of layered drawings (the player
sheet's wings, heads, tails, tentacle segments and paper-doll equipment). The screen
here rejects, never repairs, and says why:

- ``seam``: a straight horizontal or vertical line crosses at most :data:`MAX_SEAM_CONTACTS`
  ink contacts while leaving at least :data:`SEAM_MIN_SHARE` of the ink on each side:
  two objects that merely touch (a single object is joined by more than a few pixels
  wherever it is cut into two sizeable halves);
- ``parts``: the opaque ink falls in two or more separated parts of at least
  :data:`PART_MIN_SHARE` of the ink each;
- ``translucent``: at least :data:`TRANSLUCENT_SHARE` of the ink is see-through (a
  liquid, smoke or shadow decal; see-through objects such as glass jars go too, which
  the pool can spare);
- ``texture``: ink runs along at least :data:`TEXTURE_EDGE` of every edge of the canvas
  (a floor, wall or table-top texture, not an object on the cell);
- ``region``: the sprite lies in a run of the atlas that holds parts of bigger drawings
  or non-objects (:data:`EXCLUDED_RANGES`, sheet order, each with its reason);
- ``listed``: a sprite a person rejected on the contact sheet (:data:`REJECTED`, with
  its reason).

Sprite ids are ``crawl-<sheet>-<index>`` in sheet order (boxes sorted by top, then
left), which the slicing fixes for the atlas sha256 recorded in the manifest; the
builder refuses a listed id that does not exist, so a changed atlas cannot silently
shift the lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

MAX_SEAM_CONTACTS = 5
SEAM_MIN_SHARE = 0.2
PART_MIN_SHARE = 0.1
PART_MIN_PIXELS = 12
TRANSLUCENT_SHARE = 0.5
TEXTURE_EDGE = 0.9
_EIGHT = np.ones((3, 3), dtype=bool)


@dataclass(frozen=True)
class ExcludedRange:
    """Sprites ``first``..``last`` (inclusive, sheet order) of one atlas, and why they go."""

    sheet: str
    first: int
    last: int
    reason: str

    def holds(self, sheet: str, index: int) -> bool:
        return sheet == self.sheet and self.first <= index <= self.last


EXCLUDED_RANGES: tuple[ExcludedRange, ...] = (
    ExcludedRange("feat", 82, 126, "blood splatters and creeping vines: floor decals, not objects"),
    ExcludedRange("main", 456, 508, "bones and meat with overlaid icons, skeleton fragments, rings packed touching"),
    ExcludedRange("main", 509, 542, "small status and overlay icons"),
    ExcludedRange("main", 577, 580, "overlay icons drawn over each other"),
    ExcludedRange("main", 591, 621, "tags with overlaid symbols (icons, not items)"),
    ExcludedRange("main", 713, 732, "dark silhouettes of unseen items, not drawings"),
    ExcludedRange("main", 745, 925, "corpses lying in blood: object and floor decal in one"),
    ExcludedRange("main", 926, 9999, "spell clouds and effects, not objects"),
    ExcludedRange("player", 0, 790, "draconian and demonspawn bodies, heads, tails and wings: layers of player figures"),
    ExcludedRange("player", 792, 798, "wing, claw and shard fragments"),
    ExcludedRange("player", 923, 1141, "tentacle and vine segments: pieces of multi-tile monsters"),
    ExcludedRange("player", 1679, 9999, "paper-doll equipment (cloaks, armour, hands, hair): layers of the player figure"),
)

# Looked at on the contact sheet of the screened pool and rejected by hand.
REJECTED: Mapping[str, str] = {
    "crawl-feat-0023": "a fragment (a wing of a statue)",
    "crawl-feat-0043": "a shadow, not a drawing",
    "crawl-feat-0061": "a lever strip cut from a bigger feature",
    "crawl-feat-0062": "a lever strip cut from a bigger feature",
    "crawl-main-0000": "a fragment",
    "crawl-main-0048": "three loose dots",
    "crawl-main-0227": "two objects drawn over each other",
    "crawl-main-0228": "two objects drawn over each other",
    "crawl-main-0229": "two objects drawn over each other",
    "crawl-main-0232": "a fragment of a rod",
    "crawl-main-0234": "an icon, not an item",
    "crawl-main-0235": "an icon, not an item",
    "crawl-main-0251": "several icons",
    "crawl-main-0252": "an icon, not an item",
    "crawl-main-0253": "several icons",
    "crawl-main-0254": "an icon fragment",
    "crawl-main-0255": "several icons",
    "crawl-main-0256": "several icons",
    "crawl-main-0267": "an icon fragment",
    "crawl-main-0268": "an icon fragment",
    "crawl-main-0270": "an icon fragment",
    "crawl-main-0271": "an icon fragment",
    "crawl-main-0409": "several icons",
    "crawl-main-0410": "an icon over an item",
    "crawl-main-0411": "several icons",
    "crawl-main-0412": "an icon",
    "crawl-main-0413": "several icons",
    "crawl-main-0414": "an icon over an item",
    "crawl-main-0416": "several icons",
    "crawl-main-0418": "an icon over an item",
    "crawl-main-0431": "an icon over an item",
    "crawl-main-0432": "several icons",
    "crawl-main-0434": "an icon",
    "crawl-main-0534": "an icon fragment",
    "crawl-main-0535": "several icons",
    "crawl-main-0536": "several icons",
    "crawl-main-0537": "an icon",
    "crawl-main-0538": "several icons",
    "crawl-main-0539": "several icons",
    "crawl-main-0541": "an icon",
    "crawl-main-0542": "several icons",
    "crawl-player-0802": "a segment of a multi-tile snake",
    "crawl-player-0803": "a segment of a multi-tile snake",
    "crawl-player-0809": "a segment of a multi-tile snake",
    "crawl-player-0810": "a segment of a multi-tile snake",
    "crawl-player-0811": "a segment of a multi-tile snake",
    "crawl-player-0812": "a segment of a multi-tile snake",
    "crawl-player-0826": "a fragment of a multi-tile monster",
    "crawl-player-0847": "a fragment",
    "crawl-player-0848": "a fragment",
    "crawl-player-0869": "a fragment",
    "crawl-player-1377": "a fragment",
    "crawl-player-1389": "a fragment",
    "crawl-player-1395": "a fragment",
    "crawl-player-1404": "a fragment",
    "crawl-player-1405": "a fragment",
    "crawl-player-1443": "a fragment",
    "crawl-player-1523": "a fragment",
    "crawl-player-1535": "a fragment",
    "crawl-player-1602": "two figures side by side",
    "crawl-player-1615": "two figures side by side",
    "crawl-player-0801": "one head of a multi-headed monster",
    "crawl-player-0804": "one head of a multi-headed monster",
    "crawl-player-0813": "a fragment",
    "crawl-player-0817": "a square patch of fire, not a figure",
    "crawl-player-0818": "a strip cut from a bigger drawing",
    "crawl-player-0819": "a strip cut from a bigger drawing",
    "crawl-player-0820": "a strip cut from a bigger drawing",
    "crawl-player-1396": "a claw fragment",
    "crawl-player-1402": "a fragment",
    "crawl-player-1596": "an icon over a fragment",
    "crawl-player-1597": "a fragment",
    "crawl-player-1599": "two blobs drawn over each other",
    "crawl-player-1608": "a fragment",
}


def seam_contacts(ink: np.ndarray, min_share: float = SEAM_MIN_SHARE) -> int | None:
    """The fewest ink contacts any straight cut crosses while leaving ``min_share`` of the ink
    on each side (side-by-side and diagonal neighbours); None when no cut leaves that much."""
    total = int(ink.sum())
    best: int | None = None
    for m in (ink, ink.T):
        side = (m[:, :-1] & m[:, 1:]).sum(axis=0)
        diag = (m[:-1, :-1] & m[1:, 1:]).sum(axis=0) + (m[1:, :-1] & m[:-1, 1:]).sum(axis=0)
        cost = side + diag
        before = np.cumsum(m.sum(axis=0))[:-1]
        ok = (before >= min_share * total) & (total - before >= min_share * total)
        if ok.any():
            c = int(cost[ok].min())
            best = c if best is None else min(best, c)
    return best


def sizeable_parts(solid: np.ndarray) -> int:
    """Separated (8-connected) parts of the opaque ink holding at least PART_MIN_SHARE of it."""
    lab, k = ndimage.label(solid, structure=_EIGHT)
    if k == 0:
        return 0
    sizes = ndimage.sum(solid, lab, range(1, k + 1))
    return int((sizes >= max(PART_MIN_PIXELS, PART_MIN_SHARE * solid.sum())).sum())


def shape_rejection(rgba: np.ndarray, solid_alpha: int = 128) -> str | None:
    """Why a sprite is not one whole object by its shape alone (None: it passes)."""
    seam = seam_contacts(rgba[..., 3] > 0)
    if seam is not None and seam <= MAX_SEAM_CONTACTS:
        return f"seam: a straight cut crosses only {seam} ink contacts between two sizeable parts"
    solid = rgba[..., 3] >= solid_alpha
    parts = sizeable_parts(solid)
    if parts >= 2:
        return f"parts: the ink falls in {parts} separated parts"
    see_through = float((rgba[..., 3][solid] < 255).mean()) if solid.any() else 0.0
    if see_through >= TRANSLUCENT_SHARE:
        return f"translucent: {see_through:.0%} of the ink is see-through"
    edges = min(float(solid[0].mean()), float(solid[-1].mean()), float(solid[:, 0].mean()), float(solid[:, -1].mean()))
    if edges >= TEXTURE_EDGE:
        return "texture: the ink runs along every edge of the canvas"
    return None


def sprite_index(sprite_id: str) -> tuple[str, int]:
    """(sheet, index) of a ``crawl-<sheet>-<index>`` id."""
    _, sheet, index = sprite_id.rsplit("-", 2)
    return sheet, int(index)


def listed_rejection(sprite_id: str) -> str | None:
    """Why a crawl sprite is excluded by the range table or the hand list (None: it is not)."""
    if sprite_id in REJECTED:
        return f"listed: {REJECTED[sprite_id]}"
    sheet, index = sprite_index(sprite_id)
    for rng in EXCLUDED_RANGES:
        if rng.holds(sheet, index):
            return f"region: {rng.reason}"
    return None


def screen(sprite_id: str, rgba: np.ndarray) -> str | None:
    """Why a crawl sprite leaves the pool (None: it stays); the table and list come first."""
    return listed_rejection(sprite_id) or shape_rejection(rgba)


def check_listed_ids(known: Iterable[str]) -> None:
    """Refuse a hand-listed id the slicing did not produce (the atlas or slicing changed)."""
    missing = sorted(set(REJECTED) - set(known))
    if missing:
        raise ValueError(f"rose_gen/assets/pixel/pool.py lists sprites the slicing no longer makes: {', '.join(missing[:5])}; "
                         "look at the new contact sheet and update REJECTED")
