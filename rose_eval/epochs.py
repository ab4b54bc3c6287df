"""Repeated runs (``rose-run --epochs k``): split a predictions file by epoch, check the
epochs are complete and consistent, and summarise them.

A row's ``epoch`` field (an integer >= 1; a row without one is epoch 1) says which repeat
it answers; item ids are the same in every epoch. rose-eval writes the public evaluator's
eight files for epoch 1, so a repeated run's folder reads like any single run's, and
``epochs.json`` beside them (:func:`epochs_summary`) with:

- every epoch's headline numbers (micro PASS, Table 1 and Table 2 Avg. PASS) and their
  mean over the epochs;
- per-item agreement: the share of items whose verdict (PASS or not) is the same in every
  epoch, overall and per subset;
- the intervals (:func:`rose_eval.analyses.bootstrap.scene_bootstrap`) of all epochs'
  rows together. The bootstrap resamples scenes, so an item's epochs are rows of its
  scene's cluster, resampled together: repeats narrow an interval only as far as they
  average out the model's own sampling noise, never as if they were new scenes. With
  complete epochs the pooled point is the mean over the epochs.

Epochs that are not 1..k, or that answer different items, are refused unless the caller
allows it (``--allow_uneven_epochs``); then each epoch is scored on its own items, the
agreement on the items every epoch answers, and the pooled point is no longer the mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rose_eval.io import InputError, Record
from rose_eval.vocab import SUBSET_ORDER

EPOCHS_FILE = "epochs.json"
UNEVEN_FIX = ("re-run the same rose-run command to finish every epoch, or pass "
              "--allow_uneven_epochs to score the epochs as they are")
HEADLINES = ("table1/Avg. PASS", "table2/Avg. PASS")


def epoch_of(record: Record) -> int:
    """The record's epoch (1 without the field); InputError when it is not an integer >= 1."""
    value = record.row.get("epoch", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"epoch must be an integer >= 1, got {value!r}", record.where,
                         "write the repeat number (1..k) as a JSON integer, or drop the field")
    return value


def split_epochs(records: Iterable[Record]) -> dict[int, list[Record]] | None:
    """Records by epoch (ascending), or None when no row has an ``epoch`` field (a
    single-epoch file, scored exactly as before)."""
    records = list(records)
    if not any("epoch" in rec.row for rec in records):
        return None
    by_epoch: dict[int, list[Record]] = {}
    for rec in records:
        by_epoch.setdefault(epoch_of(rec), []).append(rec)
    return dict(sorted(by_epoch.items()))


def uneven(by_epoch: Mapping[int, Sequence[Record]]) -> list[str]:
    """What makes the epochs incomplete or inconsistent (empty when they are even):
    epochs other than 1..k, or epochs answering different item ids."""
    problems = []
    epochs = list(by_epoch)
    if epochs != list(range(1, len(epochs) + 1)):
        gaps = sorted(set(range(1, max(epochs) + 1)) - set(epochs))
        problems.append(f"epochs {', '.join(map(str, epochs))} are not 1..k (missing: "
                        f"{', '.join(map(str, gaps))})")
    ids = {epoch: {str(rec.row.get("item_id")) for rec in recs} for epoch, recs in by_epoch.items()}
    everywhere = set.intersection(*ids.values())
    for epoch, own in ids.items():
        if own != everywhere:
            extra = sorted(own - everywhere)
            problems.append(f"epoch {epoch} answers {len(extra)} item(s) another epoch does not "
                            f"(first: {extra[0]})")
    return problems


def check_even(by_epoch: Mapping[int, Sequence[Record]], where: object, *, allow: bool) -> None:
    """InputError for uneven epochs unless ``allow``."""
    problems = uneven(by_epoch)
    if problems and not allow:
        raise InputError(f"{len(by_epoch)} epochs, uneven: {problems[0]}", str(where), UNEVEN_FIX)


def _headlines(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    from rose_eval.analyses.bootstrap import build_scene_table, point_statistics

    table = build_scene_table(rows)
    points = point_statistics(table) if table.subsets else {}
    out: dict[str, float | None] = {
        "pass": sum(int(r.get("pass") or 0) for r in rows) / len(rows) if rows else None}
    for name in HEADLINES:
        value = float(points[name][0]) if name in points else float("nan")
        out[name] = value if value == value else None  # NaN -> None (no rows of a kind)
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def agreement(rows_by_epoch: Mapping[int, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Share of the items every epoch scored whose verdict is the same in all epochs,
    overall and per subset (``items``: how many items were compared)."""
    verdicts: dict[str, list[int]] = {}
    subset_of: dict[str, str] = {}
    for rows in rows_by_epoch.values():
        for row in rows:
            item = str(row.get("item_id"))
            verdicts.setdefault(item, []).append(int(row.get("pass") or 0))
            subset_of[item] = str(row.get("rose_subset"))
    k = len(rows_by_epoch)
    compared = {item: v for item, v in verdicts.items() if len(v) == k}

    def share(items: Sequence[str]) -> dict[str, Any]:
        same = sum(1 for item in items if len(set(compared[item])) == 1)
        return {"items": len(items), "same_verdict": same,
                "share": same / len(items) if items else None}

    by_subset = {s: share([i for i in compared if subset_of[i] == s]) for s in SUBSET_ORDER
                 if any(subset_of[i] == s for i in compared)}
    return {**share(sorted(compared)), "by_subset": by_subset}


def epochs_summary(rows_by_epoch: Mapping[int, Sequence[Mapping[str, Any]]], *, even: bool,
                   problems: Sequence[str] = (), seed: int = 0, n_boot: int = 10_000,
                   intervals: bool = True) -> dict[str, Any]:
    """The content of ``epochs.json`` for scored rows by epoch (see the module docstring)."""
    per_epoch = [{"epoch": epoch, "items": len(rows), **_headlines(rows)}
                 for epoch, rows in rows_by_epoch.items()]
    names = ("pass", *HEADLINES)
    summary: dict[str, Any] = {
        "epochs": len(rows_by_epoch),
        "even": even,
        "problems": list(problems),
        "per_epoch": per_epoch,
        "mean": {name: _mean([e[name] for e in per_epoch]) for name in names},
        "agreement": agreement(rows_by_epoch),
        "public_files": "the eight files beside this one score epoch 1",
    }
    if intervals:
        from rose_eval.analyses.bootstrap import scene_bootstrap

        pooled = [row for rows in rows_by_epoch.values() for row in rows]
        summary["intervals"] = {
            "rows": "all epochs; an item's epochs are rows of its scene's cluster",
            "point": "the mean over the epochs" if even else
                     "pooled over the rows each epoch has (epochs uneven: not the mean)",
            **scene_bootstrap(pooled, seed=seed, n_boot=n_boot)}
    return summary


def summary_line(summary: Mapping[str, Any]) -> str:
    """One stderr line: epochs, mean Avg. PASS (per epoch) and the agreement."""
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}"

    name = HEADLINES[0]
    per = ", ".join(pct(e[name]) for e in summary["per_epoch"])
    agree = summary["agreement"]
    return (f"{summary['epochs']} epochs: mean Table 1 Avg. PASS {pct(summary['mean'][name])} % "
            f"(per epoch {per}); same verdict in every epoch for {pct(agree['share'])} % of "
            f"{agree['items']} items")
