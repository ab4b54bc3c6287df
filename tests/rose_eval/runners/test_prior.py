"""The prior baseline: fitted on dev only, reads only the prompt-visible fields, refuses dev."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rose_eval.answer_prior import MIN_SUPPORT, VISIBLE_FIELDS, fit_prior, guess_for, region_size
from rose_eval.cli.run import main
from rose_eval.runners.baselines import SOLVERS, SolverContext, SolverError
from rose_eval.runners.dataset import DatasetItem

from .conftest import Release, write_release

# The dev split's answers per template: chosen so that no test gold answer equals them.
DEV_ANSWERS = {"T1_COUNT_GLOBAL": "COUNT(9)", "T2_COUNT_LOCAL_NUMERIC": "COUNT(7)",
               "T3_CLICK_LOCAL_NUMERIC": "DONE", "T4_CLICK_VISUAL_REGION": "CLICK(R1,C1); DONE",
               "T5_CLICK_COUNT_EXCLUSION": "SUBMIT(0)"}


def _with_dev(release: Release, answers: dict[str, str]) -> list[dict]:
    """Write metadata_dev.jsonl: a second synthetic release's rows (its images named as the
    release's, so they resolve) with ``answers`` as gold."""
    other = write_release(release.root.parent / "other", seed=11)  # same image names
    dev = [{**row, "answer": answers[row["task_template"]], "split": "dev"} for row in other.rows]
    (release.root / "metadata_dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dev), encoding="utf-8")
    return dev


def _run(root: Path, out: Path, split: str = "test") -> int:
    return main(["--dataset_root", str(root), "--split", split, "--solver", "prior", "--output", str(out),
                 "--no_progress"])


def test_prior_follows_dev_not_the_scored_split(release, tmp_path):
    _with_dev(release, DEV_ANSWERS)
    assert _run(release.root, tmp_path / "p.jsonl") == 0
    answers = {json.loads(line)["item_id"]: json.loads(line)["raw_text"]
               for line in (tmp_path / "p.jsonl").read_text().splitlines()}
    by_template: dict[str, Counter[str]] = {}
    for row in release.rows:
        by_template.setdefault(row["task_template"], Counter())[answers[row["item_id"]]] += 1
    # every answer is dev's answer of its template, which the test split never has as gold
    assert {t: set(c) for t, c in by_template.items()} == {t: {a} for t, a in DEV_ANSWERS.items()}
    test_gold = {row["task_template"]: Counter() for row in release.rows}
    for row in release.rows:
        test_gold[row["task_template"]][row["answer"]] += 1
    for template in ("T1_COUNT_GLOBAL", "T2_COUNT_LOCAL_NUMERIC"):
        assert DEV_ANSWERS[template] not in test_gold[template]


def test_prior_reads_only_the_prompt_visible_fields(release, tmp_path):
    _with_dev(release, DEV_ANSWERS)
    solve = SOLVERS.get("prior")(SolverContext(seed=0, dataset_root=release.root, split="test"))
    for row in release.rows:
        full = DatasetItem(item_id=row["item_id"], row=row, image_path=Path("/nonexistent"), line_no=1)
        bare = DatasetItem(item_id="x", row={k: row[k] for k in VISIBLE_FIELDS}, image_path=Path("/none"),
                           line_no=1)
        assert solve(full) == solve(bare) == DEV_ANSWERS[row["task_template"]]


@pytest.mark.parametrize("split", ["dev"])
def test_prior_refuses_the_dev_split(release, tmp_path, capsys, split):
    dev = _with_dev(release, DEV_ANSWERS)
    assert dev
    assert _run(release.root, tmp_path / "p.jsonl", split=split) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fitted on the dev split" in err[0]
    assert not (tmp_path / "p.jsonl").exists()


def test_prior_refuses_a_release_without_dev(release, tmp_path, capsys):
    assert _run(release.root, tmp_path / "p.jsonl") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no dev split" in err[0]
    assert not (tmp_path / "p.jsonl").exists()
    with pytest.raises(SolverError):
        SOLVERS.get("prior")(SolverContext(seed=0, dataset_root=None, split="test"))


@pytest.mark.parametrize(("sentence", "size"), [
    ("Count the number of cells that are different from the majority in rows 3 to 5.", "3 rows"),
    ("Count the number of cells that are different from the majority in row 4.", "1 rows"),
    ("Click all cells that are different from the majority, excluding columns 2 to 3, then submit", "2 columns"),
    ("Count ... from row 2 column 1 to row 4 column 6. Answer only", "3x6 box"),
    ("Click all cells that are different from the majority inside the highlighted region.", ""),
    ("Count the number of cells that are different from the majority in the whole grid.", ""),
])
def test_region_size_is_read_from_the_sentence(sentence, size):
    assert region_size(sentence) == size


def _row(template: str, size_rows: int, answer: str) -> dict:
    return {"task_template": template, "task_mode": "COUNT", "rose_subset": "ROSE-PixelEdit", "answer": answer,
            "prompt_local": f"Count the number of cells that are different from the majority in rows 1 to {size_rows}."}


def test_keys_back_off_when_sparse_and_ties_prefer_fewer():
    t2 = "T2_COUNT_LOCAL_NUMERIC"
    rows = [_row(t2, 1, "COUNT(0)")] * MIN_SUPPORT + [_row(t2, 4, "COUNT(2)")] * (MIN_SUPPORT - 1) \
        + [_row(t2, 3, "COUNT(3)")] * 2
    prior = fit_prior(rows)
    # 1-row spans have enough dev items of their own; 4-row spans back off to the subset's mode
    assert guess_for(prior, _row(t2, 1, "?"), "COUNT") == "COUNT(0)"
    assert guess_for(prior, _row(t2, 4, "?"), "COUNT") == "COUNT(0)"
    tied = fit_prior([_row(t2, 2, "COUNT(4)"), _row(t2, 2, "COUNT(1)")])
    assert guess_for(tied, _row(t2, 2, "?"), "COUNT") == "COUNT(1)"
    assert guess_for(prior, {**_row("T1_COUNT_GLOBAL", 1, "?")}, "COUNT") == "COUNT(0)"  # unseen: empty
