"""Randomised parity sweep against the public v0.1 evaluator (developer tool, not a test).

    python tests/rose_eval/golden/parity_sweep.py /path/to/evaluate_rose.py \
        [--variants 200] [--real 20] [--work /tmp/rose-parity]

For each case it writes a metadata folder and a predictions file, runs the public
evaluator and rose-eval (``--no_analyses``; every fifth case with analyses, whose summary
must equal the public one once the ``analyses`` key is removed) and compares all eight
output files byte for byte. When the public evaluator fails, rose-eval must exit 2 with
one line on stderr and leave no output directory. Cases: random adversarial predictions
over the tiny example (test and dev), perturbed metadata rows, the 1,112 real v0.1 rows
(shipped in tests/data/rose_v0_1) with oracle and perturbed answers, and the fatal input errors.

Inputs on which the public evaluator crashes by design differences (unhashable ``error``
values, lone surrogates, numerals beyond Python's int-string limit) are left out: there
rose-eval scores instead of crashing.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import io
import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rose_eval.cli.eval import main as rose_eval_main
from rose_eval.report.tables import PARITY_FILES, SUMMARY
from tests.reference import v01_rows_path
from tests.rose_eval.golden.make_golden import TINY, adversarial_answers, load

REAL = v01_rows_path()
ERRORS = [None, None, None, None, "", "None", "timeout", 0, False, "null", float("nan")]


def load_public(path: str) -> Callable[[list[str]], str | None]:
    spec = importlib.util.spec_from_file_location("public_evaluate_rose", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)

    def run(args: list[str]) -> str | None:
        saved = sys.argv
        sys.argv = ["evaluate_rose.py", *args]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                module.main()
            return None
        except BaseException as exc:  # the public evaluator raises anything
            return f"{type(exc).__name__}: {exc}"[:300]
        finally:
            sys.argv = saved

    return run


def run_ours(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = rose_eval_main(args)
    return status, err.getvalue()


def random_answer(row: dict[str, Any], rng: random.Random) -> Any:
    rows, cols = row["rows"], row["cols"]
    end = "DONE" if row["task_mode"] == "CLICK" else f"SUBMIT({rng.randint(0, 5)})"
    clicks = [f"CLICK(R{rng.randint(0, rows + 1)},C{rng.randint(0, cols + 1)})"
              for _ in range(rng.randint(0, 6))]
    extra = ["; ".join([*clicks, end]), f"COUNT({rng.randint(0, 6)})", row["answer"],
             row["answer"], "\t" + row["answer"].replace(";", " ;\n ") + "\r\n"]
    return rng.choice(adversarial_answers(row) + extra)


def random_predictions(rows: list[dict[str, Any]], rng: random.Random, *, partial: float = 0.0,
                       extras: int = 0, model_mode: str = "same") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in rows:
        if rng.random() < partial:
            continue
        prediction: dict[str, Any] = {"item_id": row["item_id"]}
        if model_mode == "same":
            prediction["model"] = "m-x"
        elif model_mode == "mixnull" and rng.random() < 0.5:
            prediction["model"] = rng.choice([None, "", " m-y "])
        elif model_mode == "known":
            prediction["model"] = "gpt-5.5"
        if rng.random() < 0.95:
            prediction["raw_text"] = random_answer(row, rng)
        if rng.random() < 0.3:
            prediction["error"] = rng.choice(ERRORS)
        out.append(prediction)
    out += [{"item_id": f"EXTRA_{k}", "model": "m-x" if model_mode == "same" else None,
             "raw_text": "COUNT(1)"} for k in range(extras)]
    if out and partial and rng.random() < 0.4:
        out[0]["item_id"] = 12345
    rng.shuffle(out)
    return out


class Sweep:
    def __init__(self, public: Callable[[list[str]], str | None], work: Path) -> None:
        self.public, self.work, self.results = public, work, []

    def case(self, name: str, metadata: Path | list[dict[str, Any]], predictions: list[dict],
             args: list[str] = (), *, split: str = "test", analyses: bool = False,
             ascii_json: bool = False, crlf: bool = False) -> None:
        base = self.work / name
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        root = metadata if isinstance(metadata, Path) else base / "release"
        if not isinstance(metadata, Path):
            root.mkdir()
            (root / f"metadata_{split}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in metadata), "utf-8")
        pred = base / "predictions.jsonl"
        newline = "\r\n" if crlf else "\n"
        pred.write_text("".join(json.dumps(p, ensure_ascii=ascii_json) + newline
                                for p in predictions), "utf-8")
        common = ["--dataset_root", str(root), "--predictions", str(pred), "--split", split, *args]
        public_error = self.public([*common, "--out_dir", str(base / "public")])
        extra = ["--n_boot", "200"] if analyses else ["--no_analyses"]
        status, err = run_ours([*common, "--out_dir", str(base / "ours"), *extra])
        if public_error is not None:
            ok = status == 2 and not (base / "ours").exists() and err.count("\n") == 1
            self.results.append((name, ok, f"public: {public_error} | ours: {err.strip()}"))
            return
        if status != 0:
            self.results.append((name, False, f"ours failed: {err.strip()}"))
            return
        differing = []
        for file_name in PARITY_FILES:
            a, b = (base / "public" / file_name).read_bytes(), (base / "ours" / file_name).read_bytes()
            if file_name == SUMMARY and analyses:
                ours = json.loads(b)
                ours.pop("analyses", None)
                same = json.dumps(json.loads(a)) == json.dumps(ours)
            else:
                same = a == b
            if not same:
                differing.append(file_name)
        self.results.append((name, not differing, f"differs: {differing}" if differing else "identical"))


def metadata_variants() -> dict[str, Callable[[list[dict[str, Any]]], Any]]:
    def each(fn):
        def apply(rows):
            for i, r in enumerate(rows):
                fn(i, r)
        return apply

    def pop(key, every=2):
        return each(lambda i, r: r.pop(key, None) if i % every == 0 else None)

    def label_pairs(labels):
        return [[int(x[1:].split(",")[0]), int(x.split("C")[1])] for x in labels]

    return {
        "no_all_targets": pop("all_target_cells"),
        "empty_all_targets": each(lambda i, r: r.__setitem__("all_target_cells", [])),
        "no_region_targets": pop("region_target_cells"),
        "no_gt_count": pop("ground_truth_count", 3),
        "no_gt_clicks": pop("ground_truth_clicks", 3),
        "string_clicks": each(lambda i, r: r.__setitem__(
            "ground_truth_clicks", " ; ".join(r["ground_truth_clicks"]).lower())),
        "pair_clicks": each(lambda i, r: r.__setitem__(
            "ground_truth_clicks", label_pairs(r["ground_truth_clicks"]))),
        "str_rows": each(lambda i, r: r.update(rows=str(r["rows"]), cols=float(r["cols"]))),
        "lower_mode": each(lambda i, r: r.__setitem__("task_mode", r["task_mode"].lower())
                           if i % 5 == 0 else None),
        "no_mode": pop("task_mode", 6),
        "no_split": pop("split", 2),
        "extra_params": each(lambda i, r: r["region_params"].update(zz=1)),
        "exclusion_of_global": each(lambda i, r: r.__setitem__(
            "region_params", {"exclude_type": "GLOBAL", "exclude_params": {}})
            if r["region_type"] == "EXCLUSION" else None),
        "unclipped_range": each(lambda i, r: r.__setitem__(
            "region_params", {"r1": 0, "r2": r["rows"] + 3})
            if r["region_type"] == "ROW_RANGE" else None),
        "no_subset": pop("rose_subset", 7),
        "odd_subset": each(lambda i, r: r.__setitem__("rose_subset", "ROSE-Other")
                           if i % 9 == 0 else None),
        "no_scene": pop("scene_id", 4),
        "only_t1": lambda rows: [r for r in rows if r["task_template"].startswith("T1_")],
        "one_subset": lambda rows: [r for r in rows if r["rose_subset"] == "ROSE-PixelEdit"],
        "bridges_only": lambda rows: [r for r in rows if "B_" in r["task_template"]],
        # fatal for both evaluators
        "bad_region_type": each(lambda i, r: r.__setitem__("region_type", "CIRCLE")
                                if i == 5 else None),
        "bad_params": each(lambda i, r: r["region_params"].pop("r1", None)
                           if r["region_type"] == "RECTANGLE" else None),
        "no_rows": pop("rows", 11),
        "bad_rows": each(lambda i, r: r.__setitem__("rows", "ten") if i == 3 else None),
        "bad_coord": each(lambda i, r: r.__setitem__("ground_truth_clicks", ["A1"])
                          if i == 4 else None),
        "bad_collection": each(lambda i, r: r.__setitem__("all_target_cells", {"a": 1})
                               if i == 4 else None),
        "no_item_id": pop("item_id", 30),
        "duplicate_item_id": each(lambda i, r: r.__setitem__("item_id", "X")
                                  if i in (3, 7) else None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("public_evaluator")
    parser.add_argument("--variants", type=int, default=200)
    parser.add_argument("--real", type=int, default=20)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rose-parity"))
    opts = parser.parse_args()
    sweep = Sweep(load_public(opts.public_evaluator), opts.work)
    tiny, tiny_dev = load(TINY / "metadata_test.jsonl"), load(TINY / "metadata_dev.jsonl")

    for k in range(opts.variants):
        rng = random.Random(1000 + k)
        partial = rng.choice([0.0, 0.0, 0.1, 0.5])
        args = ["--allow_partial"] if partial else []
        if rng.random() < 0.3:
            args += ["--near_miss_l1", str(rng.choice([0, 2, 5]))]
        if rng.random() < 0.3:
            args += ["--digits", str(rng.choice([0, 2, 3]))]
        if rng.random() < 0.2:
            args += ["--display_name", rng.choice(["My Model", "  ", "Ünï 模型"])]
        if rng.random() < 0.2:
            args += ["--model", rng.choice(["claude46sonnet", "override"])]
        mode = rng.choice(["same", "same", "mixnull", "known", "none"])
        preds = random_predictions(tiny, rng, partial=partial, extras=rng.choice([0, 0, 3]),
                                   model_mode=mode)
        sweep.case(f"tiny_{k}", TINY, preds, args, analyses=k % 5 == 0,
                   ascii_json=rng.random() < 0.5, crlf=rng.random() < 0.2)
    for k in range(5):
        sweep.case(f"dev_{k}", TINY, random_predictions(tiny_dev, random.Random(5000 + k)),
                   ["--allow_partial"] if k else [], split="dev")
    sweep.case("mixed_split_file", tiny + tiny_dev, random_predictions(tiny, random.Random(7)))
    for name, change in metadata_variants().items():
        rows = copy.deepcopy(tiny)
        preds = random_predictions(copy.deepcopy(tiny), random.Random(len(name)))
        rows = change(rows) or rows
        sweep.case(f"meta_{name}", rows, preds)
    if REAL.exists():
        real = load(REAL)
        for k in range(opts.real):
            rng = random.Random(9000 + k)
            if k == 0:
                preds = [{"item_id": r["item_id"], "model": "oracle", "raw_text": r["answer"],
                          "error": None} for r in real]
            else:
                preds = random_predictions(real, rng, partial=0.0 if k % 2 else 0.2)
            sweep.case(f"real_{k}", real, preds,
                       ["--allow_partial"] if k % 2 == 0 and k else [], analyses=k == 1)
    base = random_predictions(tiny, random.Random(1))
    sweep.case("err_missing", TINY, base[:-3])
    sweep.case("err_no_match", TINY, [{"item_id": "nope", "raw_text": "x"}], ["--allow_partial"])
    sweep.case("err_duplicate", TINY, base + [base[0]])
    sweep.case("err_no_item_id", TINY, base + [{"raw_text": "x"}])
    sweep.case("err_two_models", TINY, [dict(p, model=f"m{i % 2}") for i, p in enumerate(base)])

    failures = [r for r in sweep.results if not r[1]]
    for name, _, message in failures:
        print("FAIL", name, message[:500])
    fatal = sum("public:" in message for _, _, message in sweep.results)
    print(f"{len(sweep.results) - len(failures)} of {len(sweep.results)} cases agree "
          f"({fatal} fatal-input cases: both refuse; the rest: 8 files byte-identical)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
