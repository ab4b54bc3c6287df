"""``rose-run --solver prior`` (registered in :mod:`rose_eval.runners.baselines`): the chance floor as a solver (see :mod:`rose_eval.answer_prior`).

It reads, of each scored item, only what a model sees as text (:data:`VISIBLE_FIELDS`:
the template its sentence names, the subset, the region size the sentence states), and
answers with the most frequent gold answer of such prompts on the release's **dev** split.
It refuses to answer the dev split itself (that would score the prior on its own data) and
a release without a dev split.
"""

from __future__ import annotations

from rose_eval.answer_prior import FIT_SPLIT, VISIBLE_FIELDS, dev_prior, guess_for
from rose_eval.io import InputError
from rose_eval.runners.baselines import Solver, SolverContext, SolverError
from rose_eval.runners.dataset import DatasetItem


def prior_solver(ctx: SolverContext) -> Solver:
    """Answer from the dev split's answer prior, never from the scored rows' gold fields."""
    if ctx.split == FIT_SPLIT:
        raise SolverError("--solver prior is fitted on the dev split and cannot score it; "
                          "pass --split test")
    if ctx.dataset_root is None:
        raise SolverError("--solver prior needs --dataset_root (a release with a dev split)")
    try:
        fitted = dev_prior(ctx.dataset_root)
    except InputError as exc:
        raise SolverError(f"--solver prior: {ctx.dataset_root} has no dev split to fit on "
                          f"({exc.what}); use a release with metadata_dev.jsonl") from None

    def solve(item: DatasetItem) -> str:
        visible = {name: item.row.get(name) for name in VISIBLE_FIELDS}
        return guess_for(fitted, visible, str(visible["task_mode"]))

    return solve
