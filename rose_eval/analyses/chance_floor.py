"""The chance floor beside every run: what a blind guesser scores on the same items.

The floor is the answer prior of :mod:`rose_eval.answer_prior` (the prompt's template,
subset and stated region size; the most frequent gold answer of such prompts on the
release's dev split), fitted on the dev split and answering every scored item, scored by
the evaluator's own rules. Beside it:

* its PASS per template and subset, with Table 2's equal-subset macros;
* its own perception-to-action gap (Counting Avg. T1-T2 minus Action Avg. T3-T5), to read
  beside the run's gap in ``perception_action_gap``: the part of a gap a blind guess
  already shows is not perception;
* ``uniform``: the PASS of a guess uniform over the answer counts 0..n, n the largest gold
  count (clicks, for a click task) of the template in the subset among the scored items:
  1 / (n + 1), what the prior falls to when no count is more likely than another (for a
  click task the blind guess that can pass is the empty one, right 1 / (n + 1) of the time);
* ``random``: the exact expected PASS of ``rose-run --solver random`` (COUNT uniform 0-8;
  0-5 distinct clicks anywhere in the grid).

Without a release folder, without a dev split, or when the scored split is dev itself, the
entry says why it is not available (never a floor fitted on the scored items).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb
from pathlib import Path
from typing import Any

from rose_eval.analyses.gap import perception_action_gap
from rose_eval.answer_prior import FIT_SPLIT, MIN_SUPPORT, VISIBLE_FIELDS, dev_prior, guess_for
from rose_eval.io import InputError
from rose_eval.score import score_item
from rose_eval.summaries import macro, mean
from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT, canonical_template, ordered_subsets

FLOOR_MODEL = "prior-floor"
RANDOM_MAX_COUNT = 8  # rose-run --solver random's ranges (rose_eval/runners/baselines.py)
RANDOM_MAX_CLICKS = 5
METHOD = ("most frequent dev-split gold answer per (template, subset, region size stated in the "
          f"prompt), backing off to (template, subset) and template below {MIN_SUPPORT} dev items")


class FittedOnScored(ValueError):
    """The scored items include rows of the split the floor is fitted on."""


def unavailable(reason: str) -> dict[str, Any]:
    """The entry of a run that has no floor, with the reason."""
    return {"available": False, "reason": reason}


def random_expected_pass(record: Mapping[str, Any]) -> float:
    """The random solver's exact PASS probability on one scored item."""
    gold = int(record.get("gt_count") or 0)
    if record.get("task_mode") == "COUNT":
        return 1.0 / (RANDOM_MAX_COUNT + 1) if gold <= RANDOM_MAX_COUNT else 0.0
    cells = int(record["rows"]) * int(record["cols"])
    most = min(RANDOM_MAX_CLICKS, cells)
    clicks = len(record.get("gt_clicks") or [])
    return 1.0 / (most + 1) / comb(cells, clicks) if clicks <= most else 0.0


def _by_subset_template(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[Mapping[str, Any]]]]:
    out: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for record in records:
        template = canonical_template(str(record.get("task_template")))
        if template in TEMPLATE_ORDER:
            out.setdefault(str(record.get("rose_subset")), {}).setdefault(template, []).append(record)
    return {s: out[s] for s in ordered_subsets(out)}


def _table(groups: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]], value) -> dict[str, Any]:
    """{subset: {short template: value(records)}} and the equal-subset macro per template."""
    by_subset = {s: {TEMPLATE_SHORT[t]: value(groups[s][t]) for t in TEMPLATE_ORDER if t in groups[s]}
                 for s in groups}
    macros = {TEMPLATE_SHORT[t]: macro(by_subset[s].get(TEMPLATE_SHORT[t]) for s in by_subset)
              for t in TEMPLATE_ORDER}
    macros["Avg. PASS"] = macro(macros[TEMPLATE_SHORT[t]] for t in TEMPLATE_ORDER)
    return {"by_template": macros, "by_subset": by_subset}


def _uniform(records: Sequence[Mapping[str, Any]]) -> float:
    """1 / (largest gold count + 1): a guess uniform over the counts 0..max."""
    return 1.0 / (max(int(r.get("gt_count") or 0) for r in records) + 1)


def floor_records(items: Sequence[Mapping[str, Any]], metadata: Mapping[str, Mapping[str, Any]],
                  root: Path) -> tuple[list[dict[str, Any]], int]:
    """The prior's scored records on the run's items (and the number of dev rows fitted)."""
    prior = dev_prior(root)
    seen = [str(item.get("item_id")) for item in items if str(item.get("item_id")) in prior.item_ids]
    if seen:
        raise FittedOnScored(f"{len(seen)} scored items are dev rows the floor is fitted on (first: {seen[0]})")
    records = []
    for item in items:
        row = metadata[str(item.get("item_id"))]
        visible = {name: row.get(name) for name in VISIBLE_FIELDS}
        guess = guess_for(prior, visible, str(row.get("task_mode")))
        records.append(score_item(row, {"raw_text": guess, "model": FLOOR_MODEL}))
    return records, prior.n_rows


def chance_floor(items: Sequence[Mapping[str, Any]], metadata: Mapping[str, Mapping[str, Any]],
                 root: Path | None, split: str) -> dict[str, Any]:
    """The floor's PASS, its gap, uniform and random chance on the run's items."""
    if split == FIT_SPLIT:
        return unavailable("the scored split is dev, which the floor is fitted on")
    if root is None:
        return unavailable("no release folder (--dataset_root) to fit the floor on")
    try:
        records, n_dev = floor_records(items, metadata, root)
    except InputError:
        return unavailable(f"the release has no {FIT_SPLIT} split to fit the floor on")
    except FittedOnScored as exc:
        return unavailable(str(exc))
    groups = _by_subset_template(records)
    gap = perception_action_gap(records)
    return {
        "available": True,
        "method": METHOD,
        "fitted_on": FIT_SPLIT,
        "dev_rows": n_dev,
        "scored_items": len(records),
        "floor": _table(groups, lambda rs: mean(r["pass"] for r in rs)),
        "floor_gap": {"Counting Avg.": gap["Counting Avg."], "Action Avg.": gap["Action Avg."],
                      "Delta": gap["Delta"]},
        "uniform": _table(groups, _uniform),
        "random": _table(groups, lambda rs: mean(random_expected_pass(r) for r in rs)),
    }
