"""ROSE-EmojiContent: two related emoji (same Unicode subgroup) drawn by one vendor.

By default both identities are drawn in Twemoji SVG, as in every v0.1 EmojiContent scene;
the vendor mix (Twemoji, OpenMoji, Noto) is an option.

Pairs come from ``assets_manifest/emoji_content_pairs.json``: per vendor, same-subgroup
pairs of identities whose *ink-thumbnail cosine similarity* (see ``emoji.md``) lies in
the build band and which were verified visible at 42 px. The pool keeps one entry per
undirected identity pair (``pair_key`` ``<code>__<code>``, sorted) whose similarity under
the chosen vendor lies in ``band``; when a pair qualifies under several vendors, vendors
are assigned greedily (least-used first, then name) so the three are balanced and no
identity pair appears twice.

Options (``pool(options)``):

- ``band``: ``[low, high]`` similarity band (default ``[0.90, 0.995]``);
- ``vendors``: vendors used (default ``["twemoji"]``, v0.1's; ``["twemoji", "openmoji", "noto"]``
  is the vendor mix);
- ``exclude_groups``: Unicode groups left out (default none);
- ``visibility``: stricter thresholds than the manifest's (``VisibilityRule`` fields).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rose_eval.vocab import SUBSET_ID_PREFIX
from rose_gen.assets.emoji.manifest import check_verification, emoji_manifest, identity_records
from rose_gen.assets.emoji.similarity import VisibilityRule, judge
from rose_gen.assets.emoji.vendors import EMOJI_VENDORS, STYLE_VENDORS, require_vendors
from rose_gen.sources.base import SOURCES, AssetError, AssetPair, SourceInfo
from rose_gen.sources.emoji_common import EmojiPairSource, asset_spec

INFO = SourceInfo(name="emoji_content", subset="ROSE-EmojiContent", id_prefix=SUBSET_ID_PREFIX["ROSE-EmojiContent"],
                  primitive_type="EMOJI_CONTENT", item_seed_base=202600000000, layout_family="glyph_emoji",
                  image_split="pilot")

DEFAULT_BAND = (0.90, 0.995)
V0_1_VENDORS: tuple[str, ...] = ("twemoji",)  # v0.1 drew every EmojiContent scene in twemoji_svg
DEFAULT_OPTIONS: dict[str, Any] = {"band": list(DEFAULT_BAND), "vendors": list(V0_1_VENDORS),
                                   "exclude_groups": [], "visibility": {}}


def content_fields(background: Mapping[str, Any], target: Mapping[str, Any], vendor: str,
                   similarity: float, pair_key: str) -> dict[str, Any]:
    """v0.1 EmojiContent row fields (majority = background)."""
    return {
        "background_emoji": background["emoji"],
        "target_emoji": target["emoji"],
        "background_unicode": background["key"],
        "target_unicode": target["key"],
        "h2_label": background["group"],
        "h3_title": background["subgroup"],
        "background_name_zh": background["name_zh"],
        "target_name_zh": target["name_zh"],
        "background_name_en": background["name_en"],
        "target_name_en": target["name_en"],
        "similarity": similarity,
        "pair_key": pair_key,
        "background_path": background["files"][vendor]["path"],
        "target_path": target["files"][vendor]["path"],
    }


def _options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    opts = {**DEFAULT_OPTIONS, **dict(options or {})}
    unknown = sorted(set(opts) - set(DEFAULT_OPTIONS))
    if unknown:
        raise AssetError(f"emoji_content: unknown option(s) {unknown}; known: {sorted(DEFAULT_OPTIONS)}")
    low, high = (float(x) for x in opts["band"])
    if not 0.0 <= low <= high <= 1.0:
        raise AssetError(f"emoji_content: band must satisfy 0 <= low <= high <= 1, got {opts['band']}")
    for name in opts["vendors"]:
        if name not in STYLE_VENDORS:
            known = ", ".join(n for n in EMOJI_VENDORS.names() if n in STYLE_VENDORS)
            raise AssetError(f"emoji_content: unknown vendor {name!r}; known: {known}")
    return {**opts, "band": (low, high)}


def _pair(records: Mapping[str, Mapping[str, Any]], vendor: str, majority: str, target: str,
          pair_key: str, similarity: float) -> AssetPair:
    bg, tg = records[majority], records[target]

    return AssetPair(source=INFO.name, majority=f"{vendor}:{majority}", target=f"{vendor}:{target}",
                     pair_key=pair_key, row_fields=content_fields(bg, tg, vendor, similarity, pair_key),
                     render={"majority": asset_spec(bg, vendor), "target": asset_spec(tg, vendor), "vendor": vendor},
                     similarity=similarity)


def content_pool(options: Mapping[str, Any] | None = None) -> list[AssetPair]:
    """Verified same-subgroup pairs in the band, one per identity pair, in pair_key order."""
    opts = _options(options)
    rule = VisibilityRule.from_options(opts["visibility"])
    doc = emoji_manifest("emoji_content_pairs")
    require_vendors(opts["vendors"])
    check_verification(doc, "emoji_content_pairs", rule.cell_size)
    low, high = opts["band"]
    excluded = set(opts["exclude_groups"] or ())
    vendors = set(opts["vendors"])
    by_key: dict[str, dict[str, dict[str, Any]]] = {}
    for p in doc["pairs"]:
        if p["vendor"] not in vendors or p["group"] in excluded or not low <= p["similarity"] <= high:
            continue
        if not judge(p["ink"][0], p["ink"][1], p["changed_fraction"], p["ssim"], rule):
            continue
        by_key.setdefault(p["pair_key"], {})[p["vendor"]] = p
    records = identity_records()
    used = dict.fromkeys(sorted(vendors), 0)
    pool: list[AssetPair] = []
    for pair_key in sorted(by_key):
        options_here = by_key[pair_key]
        vendor = min(options_here, key=lambda v: (used[v], v))
        used[vendor] += 1
        p = options_here[vendor]
        pool.append(_pair(records, vendor, p["a"], p["b"], pair_key, p["similarity"]))
    return pool


class EmojiContentSource(EmojiPairSource):
    """The ROSE-EmojiContent visual source (see the module docstring)."""

    info = INFO
    option_keys = frozenset(DEFAULT_OPTIONS)
    manifests = ("emoji_vendors", "emoji_style_identities", "emoji_content_pairs")

    def pool(self, options: Mapping[str, Any]) -> Sequence[AssetPair]:
        """Verified in-band pairs in pair_key order (one entry per identity pair)."""
        return content_pool(options)

    def vendors_used(self, options: Mapping[str, Any]) -> list[str]:
        """The vendors ``options`` allow."""
        return sorted(set(_options(options)["vendors"]))

    def orient(self, pair: AssetPair, rng: np.random.Generator) -> AssetPair:
        """Pick which identity is the majority with one coin flip."""
        vendor = pair.render["vendor"]
        a, b = pair.majority.split(":", 1)[1], pair.target.split(":", 1)[1]
        majority, target = (a, b) if rng.random() < 0.5 else (b, a)
        return _pair(identity_records(), vendor, majority, target, pair.pair_key, float(pair.similarity or 0.0))


SOURCE = EmojiContentSource()
if INFO.name not in SOURCES:
    SOURCES.add(INFO.name, SOURCE)
