"""Where the points are lost: the interface-control decomposition (``interface_controls``).

A release made with ``export.controls`` has, for every main task row, paired control rows on
the same scene with the same gold (:mod:`rose_eval.controls`). They are nested, each giving
the model more than the one before:

==================  =============================================  ===========================
control             what it gives                                  what is left to do
==================  =============================================  ===========================
standard            the image                                      see, locate, act
coords_given        + row/column labels in a margin                see, act
exceptions_given    + every exception cell marked                  bind the region, act
text_only           the grid as a symbol matrix, no image          act (symbolic execution)
==================  =============================================  ===========================

On the source items that have every present control scored (paired on the same items,
hence the same scenes), PASS of each is a share of those items, and the gap
``100 - PASS(standard)`` splits into consecutive differences that add up to it exactly:

- ``lost_to_coordinate_reading`` = coords_given - standard
- ``lost_to_perception`` = exceptions_given - coords_given
- ``lost_to_image_modality`` = text_only - exceptions_given (reading marks and labels off
  an image instead of text)
- ``lost_to_execution`` = 100 - text_only

A control the run lacks is skipped and its part joins the next one's (``chain`` lists the
steps used). A part can be negative (a control that hurts: a mark misread, text that is
harder than the picture). Every number is given per template (T1..T5) and pooled over them
(``all``: every paired item once), each with a 95 % scene bootstrap interval: scenes are
resampled with replacement within each subset (the subsets are strata), every resample
recomputes all the numbers from the same scenes, so the parts' intervals are paired.
Seeds come from (seed, subset, "interface_controls"): the result is the same on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rose_eval.analyses.bootstrap import LEVEL, interval, multiplicities, with_replacement
from rose_eval.seeding import stream
from rose_eval.vocab import CONTROL_ORDER, TEMPLATE_ORDER, ordered_subsets, template_of

STANDARD = "standard"
PART_OF: dict[str, str] = {
    "coords_given": "lost_to_coordinate_reading",
    "exceptions_given": "lost_to_perception",
    "text_only": "lost_to_image_modality",
}
EXECUTION = "lost_to_execution"
ALL = "all"


def _pass(record: Mapping[str, Any]) -> int:
    return int(record.get("pass") == 1)


def paired_items(items: Sequence[Mapping[str, Any]], controls: Sequence[Mapping[str, Any]],
                 ) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """(controls present, one entry per source item scored under every one of them).

    An entry holds the source item's subset, scene, template and a PASS (0/1) per condition.
    """
    present = tuple(c for c in CONTROL_ORDER if any(r.get("control") == c for r in controls))
    by_source: dict[str, dict[str, int]] = {}
    for record in controls:
        by_source.setdefault(str(record.get("source_item_id")), {})[str(record.get("control"))] = _pass(record)
    out = []
    for record in items:
        got = by_source.get(str(record.get("item_id")), {})
        if all(c in got for c in present):
            out.append({"subset": str(record.get("rose_subset")), "scene": str(record.get("scene_id")),
                        "template": template_of(record),
                        STANDARD: _pass(record), **{c: got[c] for c in present}})
    return present, out


def _numbers(totals: np.ndarray, chain: Sequence[str]) -> dict[str, np.ndarray]:
    """PASS (%) of each condition and the parts, from totals (..., 1 + len(chain)): n then passes."""
    n = totals[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = {cond: 100.0 * totals[..., 1 + k] / n for k, cond in enumerate(chain)}
    out = {f"pass_{cond}": rates[cond] for cond in chain}
    for before, after in zip(chain, chain[1:], strict=False):
        out[PART_OF[after]] = rates[after] - rates[before]
    out[EXECUTION] = 100.0 - rates[chain[-1]]
    out["gap"] = 100.0 - rates[STANDARD]
    return out


def _scene_sums(entries: Sequence[Mapping[str, Any]], chain: Sequence[str]
                ) -> dict[str, tuple[list[str], np.ndarray]]:
    """Per subset: its scenes and a (scenes, 1 + len(chain)) array of item counts and passes."""
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    for subset in ordered_subsets({e["subset"] for e in entries}):
        mine = [e for e in entries if e["subset"] == subset]
        scenes = sorted({e["scene"] for e in mine})
        index = {s: i for i, s in enumerate(scenes)}
        sums = np.zeros((len(scenes), 1 + len(chain)), dtype=np.int64)
        for e in mine:
            sums[index[e["scene"]], 0] += 1
            for k, cond in enumerate(chain):
                sums[index[e["scene"]], 1 + k] += e[cond]
        out[subset] = (scenes, sums)
    return out


def decompose(entries: Sequence[Mapping[str, Any]], chain: Sequence[str], *, seed: int, n_boot: int
              ) -> dict[str, Any]:
    """The numbers of one group of paired items with their scene bootstrap intervals."""
    strata = _scene_sums(entries, chain)
    total = sum((sums.sum(axis=0) for _, sums in strata.values()), np.zeros(1 + len(chain), dtype=np.int64))
    draws = np.zeros((n_boot, 1 + len(chain)), dtype=np.int64)
    for subset, (scenes, sums) in strata.items():
        rng = stream(seed, subset, "interface_controls")
        draws += multiplicities(with_replacement(len(scenes), n_boot, rng), len(scenes)) @ sums
    points, resampled = _numbers(total.astype(np.float64), chain), _numbers(draws.astype(np.float64), chain)
    out: dict[str, Any] = {"n_items": int(total[0]), "n_scenes": sum(len(s) for s, _ in strata.values())}
    for name, point in points.items():
        got = interval(float(point), resampled[name], LEVEL)
        out[name] = {k: None if v is None else round(v, 6) for k, v in got.items()}
    return out


def interface_controls(items: Sequence[Mapping[str, Any]], controls: Sequence[Mapping[str, Any]], *,
                       seed: int = 0, n_boot: int = 10_000) -> dict[str, Any] | None:
    """The decomposition of one run (None when it has no scored control items).

    ``items``: the main run's per-item records; ``controls``: the scored control items, each
    with its ``control`` and ``source_item_id``.
    """
    if not controls:
        return None
    present, entries = paired_items(items, controls)
    chain = (STANDARD, *present)
    out: dict[str, Any] = {
        "chain": list(chain),
        "parts": [PART_OF[c] for c in present] + [EXECUTION],
        "n_control_items": {c: sum(1 for r in controls if r.get("control") == c) for c in present},
        "n_paired_items": len(entries),
        "interval": f"{int(LEVEL * 100)} % scene bootstrap within subsets, {n_boot} resamples",
        "note": "PASS in % of the paired items; the parts add up to gap = 100 - pass_standard",
    }
    if not entries:
        out["by_template"], out[ALL] = {}, None
        return out
    out[ALL] = decompose(entries, chain, seed=seed, n_boot=n_boot)
    out["by_template"] = {t: decompose([e for e in entries if e["template"] == t], chain, seed=seed, n_boot=n_boot)
                          for t in TEMPLATE_ORDER if any(e["template"] == t for e in entries)}
    return out
