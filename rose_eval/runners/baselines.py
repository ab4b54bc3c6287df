"""Built-in solvers that answer without a model: ``oracle``, ``random``, ``cv``, ``prior`` and ``robust``.

A solver is made from a :class:`SolverContext` (the run's seed, release folder and scored
split) and answers one item with a raw answer string. They
give the numbers meaning: oracle shows the pipeline is sound (it must score 100%),
random is uniform guessing, prior the chance floor a blind guesser reaches with the dev
split's answers, cv shows the exceptions are visible and the protocol executable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rose_eval.formal import formal_answer
from rose_eval.registry import Registry
from rose_eval.runners.dataset import DatasetItem

Solver = Callable[[DatasetItem], str]


@dataclass(frozen=True)
class SolverContext:
    """What a solver factory may know of the run: its seed, the release folder (None when
    the items come from elsewhere) and the split being answered."""

    seed: int
    dataset_root: Path | None
    split: str


class SolverError(ValueError):
    """A solver cannot answer this run (e.g. the prior on the split it was fitted on);
    the message is one line."""


SolverFactory = Callable[[SolverContext], Solver]

SOLVERS: Registry[SolverFactory] = Registry("solver")

# The random baseline's ranges (documented floor, not tuned to the data).
RANDOM_MAX_COUNT = 8
RANDOM_MAX_CLICKS = 5


def item_rng(seed: int, item_id: str) -> np.random.Generator:
    """A generator seeded by (seed, item_id) alone: same answer whatever the order or selection."""
    key = int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:8], "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), key])))


@SOLVERS.register("oracle")
def oracle(ctx: SolverContext) -> Solver:
    """Emit the gold answer of every row."""

    def solve(item: DatasetItem) -> str:
        return str(item.row["answer"])

    return solve


def _random_cells(rng: np.random.Generator, rows: int, cols: int) -> list[tuple[int, int]]:
    k = int(rng.integers(0, min(RANDOM_MAX_CLICKS, rows * cols) + 1))
    flat = rng.choice(rows * cols, size=k, replace=False)
    return [(int(i) // cols + 1, int(i) % cols + 1) for i in sorted(flat)]


@SOLVERS.register("random")
def random_answers(ctx: SolverContext) -> Solver:
    """Grammar-valid random answers for the row's task mode, seeded per item.

    COUNT(n) with n uniform in 0..8; CLICK of 0..5 distinct in-grid cells then DONE;
    CLICK_COUNT adds a consistent SUBMIT(k).
    """

    def solve(item: DatasetItem) -> str:
        rng = item_rng(ctx.seed, item.item_id)
        mode = item.row["task_mode"]
        if mode == "COUNT":
            return formal_answer(mode, count=int(rng.integers(0, RANDOM_MAX_COUNT + 1)))
        cells = _random_cells(rng, int(item.row["rows"]), int(item.row["cols"]))
        return formal_answer(mode, cells, count=len(cells))

    return solve


def _image_solver(name: str, solve_file: Callable[[Path | str, str], str]) -> Solver:
    """A solver that reads only the item's image file and its prompt text (cv, robust)."""

    def solve(item: DatasetItem) -> str:
        if item.image_path is None:  # a failed row, never a made-up answer
            raise ValueError(f"the {name} solver reads the image; a text_only control item has none")
        prompt = str(item.row.get("prompt_local") or item.row.get("prompt") or "")
        return solve_file(item.image_path, prompt)

    return solve


@SOLVERS.register("cv")
def cv(ctx: SolverContext) -> Solver:
    """The pixel solver: reads only the image file and the prompt text of the row."""
    from rose_eval.runners.cv_solver import solve_image

    return _image_solver("cv", solve_image)


@SOLVERS.register("prior")
def prior(ctx: SolverContext) -> Solver:
    """The chance floor: the dev split's most frequent answer for the prompt's template,
    subset and stated region size (:mod:`rose_eval.runners.prior`)."""
    from rose_eval.runners.prior import prior_solver

    return prior_solver(ctx)


@SOLVERS.register("robust")
def robust(ctx: SolverContext) -> Solver:
    """The solvability reference: periodicity grid, jitter-tolerant cell alignment, count-free
    separation (:mod:`rose_eval.runners.robust_solver`); reads only the image and the prompt."""
    from rose_eval.runners.robust_solver import solve_robust

    return _image_solver("robust", solve_robust)
