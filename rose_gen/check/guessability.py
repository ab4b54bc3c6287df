"""Answer guessability of a release (``rose-audit``): how far a blind guess gets per template.

Per template, over the release's main rows: the most frequent gold answer and its share,
the expected PASS of the answer prior fitted on the dev split and answering the test split
(:mod:`rose_eval.answer_prior`, what ``rose-run --solver prior`` scores), and uniform
chance, 1 / (largest gold count + 1) averaged over the subsets (as ``rose-eval``'s
``chance_floor`` analysis reports it). A template whose prior PASS stands more than
:data:`WARN_POINTS` points above uniform chance is listed in ``warnings``: a model's PASS
there is partly guessable from the prompt (``profile=balanced`` removes it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rose_eval.answer_prior import fit_prior, guess_for
from rose_eval.vocab import TEMPLATE_ORDER, TEMPLATE_SHORT

WARN_POINTS = 10.0  # prior PASS this many points above uniform chance: a warning


def _count(row: Mapping[str, Any]) -> int:
    return int(row.get("ground_truth_count") or 0)


def _uniform(members: Sequence[Mapping[str, Any]]) -> float:
    """Mean over subsets of 100 / (largest gold count in the subset + 1)."""
    top: dict[str, int] = {}
    for r in members:
        subset = str(r.get("rose_subset"))
        top[subset] = max(top.get(subset, 0), _count(r))
    return sum(100.0 / (n + 1) for n in top.values()) / len(top)


def guessability(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per template: top answer and share, prior PASS (dev -> test), uniform chance, warnings."""
    dev = [r for r in rows if r.get("split") == "dev"]
    test = [r for r in rows if r.get("split") == "test"]
    prior = fit_prior(dev) if dev else None
    templates: dict[str, Any] = {}
    warnings = []
    for template in TEMPLATE_ORDER:
        members = [r for r in rows if r.get("task_template") == template]
        if not members:
            continue
        answers = Counter(str(r.get("answer")) for r in members)
        top, top_n = min(answers.items(), key=lambda kv: (-kv[1], kv[0]))
        uniform = _uniform(members)
        scored = [r for r in test if r.get("task_template") == template]
        prior_pass = None
        if prior is not None and scored:
            hits = sum(guess_for(prior, r, str(r.get("task_mode"))) == str(r.get("answer")) for r in scored)
            prior_pass = round(100.0 * hits / len(scored), 1)
        short = TEMPLATE_SHORT[template]
        templates[short] = {"rows": len(members), "top_answer": top, "top_share": round(100.0 * top_n / len(members), 1),
                            "prior_pass": prior_pass, "uniform": round(uniform, 1)}
        if prior_pass is not None and prior_pass - uniform > WARN_POINTS:
            warnings.append(f"{short}: a blind guess fitted on dev scores {prior_pass:.1f} % on test "
                            f"(uniform chance {uniform:.1f} %; top answer {top} in "
                            f"{100.0 * top_n / len(members):.1f} % of rows)")
    return {"templates": templates, "warn_points": WARN_POINTS, "warnings": warnings,
            "prior_fitted_on": "dev" if prior is not None else None}


def guessability_table(record: Mapping[str, Any]) -> str:
    """Plain-text lines: one per template, then one per warning."""
    head = f"{'template':<10} {'rows':>5} {'top answer':<28} {'share':>6} {'prior PASS':>10} {'uniform':>7}"
    lines = [head, "-" * len(head)]
    for short, t in record["templates"].items():
        prior = "-" if t["prior_pass"] is None else f"{t['prior_pass']:.1f}"
        lines.append(f"{short:<10} {t['rows']:>5} {t['top_answer'][:28]:<28} {t['top_share']:>6.1f} "
                     f"{prior:>10} {t['uniform']:>7.1f}")
    lines += [f"rose-audit: guessable answers: {w}" for w in record["warnings"]]
    return "\n".join(lines)
