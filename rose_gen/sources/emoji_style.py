"""ROSE-EmojiStyle: one emoji identity; the majority drawn by vendor A, the exception by vendor B.

Vendors are Twemoji, OpenMoji and Noto Color Emoji (``rose_gen.assets.emoji.artwork``); A and B
always differ in artwork (Twemoji SVG against Twemoji PNG never counts). The pool holds
one entry per identity of ``assets_manifest/emoji_style_identities.json`` whose vendor
pairings in use were all verified (both tiles inked, visibly different at 42 px);
``orient`` draws one of the allowed ordered vendor pairs, so every scene uses a distinct
identity.

By default the composition is v0.1's: in every v0.1 EmojiStyle scene the majority is
Twemoji SVG (``twemoji_svg``) and the exception another provider's PNG (``pngfile``, a
set v0.1 neither published nor identified). Noto Color Emoji stands in for it, as in
``rose-replay`` (``assets_manifest/replay_v0_1.json``): it is a second, independent
artwork opposite Twemoji (Twemoji's own PNGs are the same drawing), and, like v0.1's
``pngfile``, a raster rendition. OpenMoji (outlined line art) is the more distant style
and stays available through the options.

The two tiles of a scene are scaled so their ink boxes have the same area whatever the
vendors (:mod:`rose_gen.assets.emoji.fit`; the share is :func:`rose_gen.assets.emoji.artwork.pair_fit`
of the pair's two vendors, recorded in the render spec), so size never tells the
exception.

Options (``pool(options)``):

- ``vendor_pairs``: the ordered ``[majority, target]`` vendor pairs scenes draw from
  (default ``[["twemoji", "noto"]]``, v0.1's composition), or ``"all"``: every ordered
  pair of distinct artworks among ``vendors`` (the six-way vendor mix);
- ``vendors``: vendors ``"all"`` pairs (default ``["twemoji", "openmoji", "noto"]``, at
  least two distinct artworks);
- ``skin_tones``: keep identities with a skin-tone modifier (default ``False``: the five
  tones of one person would crowd the pool);
- ``exclude_groups``: Unicode groups left out (default ``["Component"]``);
- ``groups``: when given, only these Unicode groups;
- ``visibility``: stricter thresholds than the manifest's (``VisibilityRule`` fields).

Row fields follow v0.1; ``majority_style``/``target_style`` are vendor names,
``h2_label``/``h3_title`` are Unicode group/subgroup names (v0.1 used a Chinese emoji
site's labels), ``emoji_name_zh`` is CLDR's simplified-Chinese name from the ``emoji``
package, paths are relative to the providing package, with forward slashes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen.assets.emoji.manifest import identity_records
from rose_gen.assets.emoji.similarity import VisibilityRule, judge
from rose_gen.assets.emoji.vendors import (
    EMOJI_VENDORS,
    STYLE_VENDORS,
    distinct_artwork_pairs,
    require_vendors,
)
from rose_gen.sources.base import SOURCES, AssetError, AssetPair, SourceInfo
from rose_gen.sources.emoji_common import EmojiPairSource, asset_spec, pair_fit

INFO = SourceInfo(name="emoji_style", subset="ROSE-EmojiStyle", id_prefix=SUBSET_ID_PREFIX["ROSE-EmojiStyle"], primitive_type="EMOJI_STYLE",
                  item_seed_base=202600000000, layout_family="glyph_emoji", image_split="pilot")

# A difficulty preset's similarity band ranks EmojiStyle pairs by how alike the two vendors draw the
# identity: the manifest's SSIM of the two tiles at 42 px (mean over the vendor pairs in use),
# carried as render["band_similarity"] so rows, tiers and the standard pool stay v0.1's. Pairs below
# the floor depict the identity too differently to count as "the same thing, another vendor"
# (Twemoji's troll face against Noto's whole-body troll: 0.13); an applied band leaves them out.
STYLE_SIMILARITY_FLOOR = 0.2
V0_1_VENDOR_PAIRS: tuple[tuple[str, str], ...] = (("twemoji", "noto"),)  # twemoji_svg -> pngfile stand-in
DEFAULT_OPTIONS: dict[str, Any] = {"vendor_pairs": [list(p) for p in V0_1_VENDOR_PAIRS], "vendors": list(STYLE_VENDORS),
                                   "skin_tones": False, "exclude_groups": ["Component"], "groups": None,
                                   "visibility": {}}


def style_fields(record: Mapping[str, Any], majority: str, target: str) -> dict[str, Any]:
    """v0.1 EmojiStyle row fields for one identity drawn majority-by / target-by two vendors."""
    return {
        "background_emoji": record["emoji"],
        "target_emoji": record["emoji"],
        "emoji_char": record["emoji"],
        "unicode_key": record["key"],
        "majority_style": majority,
        "target_style": target,
        "h2_label": record["group"],
        "h3_title": record["subgroup"],
        "emoji_name_zh": record["name_zh"],
        "background_path": record["files"][majority]["path"],
        "target_path": record["files"][target]["path"],
    }


def _options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    opts = {**DEFAULT_OPTIONS, **dict(options or {})}
    unknown = sorted(set(opts) - set(DEFAULT_OPTIONS))
    if unknown:
        raise AssetError(f"emoji_style: unknown option(s) {unknown}; known: {sorted(DEFAULT_OPTIONS)}")
    for name in opts["vendors"]:
        if name not in EMOJI_VENDORS:
            raise AssetError(f"emoji_style: unknown vendor {name!r}; known: {', '.join(EMOJI_VENDORS.names())}")
    if opts["vendor_pairs"] == "all":
        pairs = distinct_artwork_pairs(opts["vendors"])
        if not pairs:
            raise AssetError(f"emoji_style: vendors {opts['vendors']} share one artwork; name two distinct ones")
    else:
        pairs = [_vendor_pair(p) for p in opts["vendor_pairs"] or ()]
        if not pairs:
            raise AssetError('emoji_style: vendor_pairs is empty; give [[majority, target], ...] or "all"')
    return {**opts, "ordered": pairs}


def _vendor_pair(pair: Any) -> tuple[str, str]:
    """One ``[majority, target]`` entry of ``vendor_pairs``, checked (one-line AssetError)."""
    if isinstance(pair, str) or len(pair) != 2:
        raise AssetError(f"emoji_style: vendor_pairs entry {pair!r} is not [majority, target]")
    a, b = (str(v) for v in pair)
    for name in (a, b):
        if name not in EMOJI_VENDORS:
            raise AssetError(f"emoji_style: unknown vendor {name!r} in vendor_pairs; known: "
                             f"{', '.join(EMOJI_VENDORS.names())}")
    if not distinct_artwork_pairs([a, b]):
        raise AssetError(f"emoji_style: vendor_pairs entry [{a}, {b}] draws one artwork twice; pair two artworks")
    return a, b


def style_pool(options: Mapping[str, Any] | None = None) -> list[AssetPair]:
    """Verified identities (stable key order), one AssetPair each; see the module docstring."""
    opts = _options(options)
    rule = VisibilityRule.from_options(opts["visibility"])
    ordered = opts["ordered"]
    require_vendors(sorted({v for p in ordered for v in p}))
    unordered = sorted({tuple(sorted(p)) for p in ordered})
    excluded = set(opts["exclude_groups"] or ())
    wanted = set(opts["groups"]) if opts["groups"] else None
    pool: list[AssetPair] = []
    for key, rec in sorted(identity_records().items()):
        if rec["group"] in excluded or (wanted is not None and rec["group"] not in wanted):
            continue
        if rec["skin_tone"] and not opts["skin_tones"]:
            continue
        if rec.get("art_fit") is None:  # some vendor draws no ink: nothing to fit
            continue
        ver = rec["verification"]
        if ver["cell_size"] != rule.cell_size:
            raise AssetError(f"emoji_style: manifest verified at {ver['cell_size']} px, options ask "
                             f"{rule.cell_size} px; rebuild with assets_manifest/build/build_emoji.py")
        ok = all(judge(ver["ink"][a], ver["ink"][b], ver["pairs"][f"{a}|{b}"]["changed_fraction"],
                       ver["pairs"][f"{a}|{b}"]["ssim"], rule) for a, b in unordered)
        if not ok:
            continue
        a, b = ordered[0]
        ssim = float(np.mean([ver["pairs"][f"{u}|{v}"]["ssim"] for u, v in unordered]))
        pool.append(AssetPair(
            source=INFO.name, majority=f"{a}:{key}", target=f"{b}:{key}", pair_key=key,
            row_fields=style_fields(rec, a, b),
            render={"majority": asset_spec(rec, a, fit=pair_fit(rec, (a, b))),
                    "target": asset_spec(rec, b, fit=pair_fit(rec, (a, b))),
                    "vendor_pairs": [list(p) for p in ordered],
                    "band_similarity": round(ssim, 6) if ssim >= STYLE_SIMILARITY_FLOOR else None},
        ))
    return pool


class EmojiStyleSource(EmojiPairSource):
    """The ROSE-EmojiStyle visual source (see the module docstring)."""

    info = INFO
    manifests = ("emoji_vendors", "emoji_style_identities")

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        """Verified identities in key order (one scene per identity)."""
        return style_pool(options)

    def vendors_used(self, options: Mapping[str, Any]) -> list[str]:
        """The vendors of the allowed ordered pairs."""
        return sorted({v for p in _options(options)["ordered"] for v in p})

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Draw the ordered (majority, target) vendor pair uniformly from the allowed ones."""
        choices = pair.render["vendor_pairs"]
        majority, target = choices[int(rng.integers(len(choices)))]
        rec = identity_records()[pair.pair_key]
        return AssetPair(source=pair.source, majority=f"{majority}:{pair.pair_key}",
                         target=f"{target}:{pair.pair_key}", pair_key=pair.pair_key,
                         row_fields=style_fields(rec, majority, target),
                         render={"majority": asset_spec(rec, majority, fit=pair_fit(rec, (majority, target))),
                                 "target": asset_spec(rec, target, fit=pair_fit(rec, (majority, target))),
                                 "vendor_pairs": [list(p) for p in choices]},
                         similarity=pair.similarity)


    def companions(self, pair: AssetPair) -> list[AssetPair]:
        """Second exception identities for a scene of ``pair`` (difficulty presets): the same
        identity drawn by each other vendor (another artwork than both of the scene's) whose art
        reaches the scene's ink-box share, at that share, beside the scene's own majority tile."""
        rec = identity_records()[pair.pair_key]
        majority, target = pair.render["majority"], pair.render["target"]
        used = {majority["vendor"], target["vendor"]}
        out = []
        for vendor in sorted(v for v in STYLE_VENDORS if v not in used and v in rec["files"]):
            if not distinct_artwork_pairs([vendor, majority["vendor"]]) or not distinct_artwork_pairs(
                    [vendor, target["vendor"]]):
                continue
            fit = target.get("fit")
            if fit is not None and pair_fit(rec, (majority["vendor"], target["vendor"], vendor)) < fit - 1e-9:
                continue  # this vendor's art cannot be drawn at the scene's ink-box share (size would tell)
            out.append(AssetPair(source=pair.source, majority=pair.majority, target=f"{vendor}:{pair.pair_key}",
                                 pair_key=pair.pair_key, row_fields=pair.row_fields,
                                 render={"majority": majority,
                                         "target": asset_spec(rec, vendor, fit=target.get("fit"))},
                                 similarity=pair.similarity))
        return out


SOURCE = EmojiStyleSource()
if INFO.name not in SOURCES:
    SOURCES.add(INFO.name, SOURCE)
