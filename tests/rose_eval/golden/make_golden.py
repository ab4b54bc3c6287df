"""Regenerate the golden parity files (developer tool; never run by the test suite).

The expected outputs are produced by the PUBLIC v0.1 evaluator (repository
xbdxwyh/ROSE-v0.1, file demo/evaluate_rose.py), which is not part of this repository:

    python tests/rose_eval/golden/make_golden.py /path/to/evaluate_rose.py

For every case it writes ``cases/<name>/predictions.jsonl`` (when the case has its own),
``args.json`` and ``expected/<the eight output files>``, with the absolute metadata and
predictions paths inside evaluation_summary.json replaced by placeholders.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TINY = REPO / "rose_eval" / "examples" / "tiny"
CASES = HERE / "cases"
PLACEHOLDERS = {"{tiny}": TINY, "{case}": None}


def adversarial_answers(row: dict[str, Any]) -> list[Any]:
    """Odd answers for one row: spacing, case, Unicode digits, bad tokens, odd types."""
    gold, mode, n = row["answer"], row["task_mode"], row["ground_truth_count"]
    rows, cols = row["rows"], row["cols"]
    clicks = [f"CLICK({c})" for c in row["ground_truth_clicks"]]
    end = "DONE" if mode == "CLICK" else f"SUBMIT({n})"
    every_target = [f"CLICK({c})" for c in row["all_target_cells"]]
    return [
        gold, gold.lower(), gold.upper(), f"  {gold} \n", gold.replace(";", " ;\n "),
        gold.replace("(", "( ").replace(")", " )").replace(",", " , "),
        gold.replace("1", "\u0661").replace("2", "\uff12").replace("3", "\u0663"),
        gold + ";", ";" + gold + ";;", "DONE; " + gold, gold + "; DONE", "COUNT(3);",
        "COUNT 3", "COUNT(-1)", "COUNT(3.0)", f"COUNT(0{n})", f"The answer is {gold}.",
        f"```\n{gold}\n```", ";;;DONE;;", "DONE", "SUBMIT(0)", "CLICK(R0,C1); DONE",
        "CLICK(R99999999999999999999,C1); DONE", "COUNT(123456789012345678901234567890)",
        "foo; " + gold, "; ".join(["CLICK(R1 C1)", *clicks, end]), "CLICK(1,1); " + end,
        "CLICK(R1,C1) DONE", "CLICK(R1,C1);DONE", "; ".join([*clicks, *clicks, end]),
        "; ".join([*clicks, f"CLICK(R{rows},C{cols})", end]),
        "; ".join([*clicks, f"CLICK(R{rows + 1},C{cols})", end]),
        "; ".join([*clicks, f"SUBMIT({n + 1})"]), "; ".join([*reversed(clicks), end]),
        "; ".join(clicks), "SUBMIT()", "CLIC\u212a(R1,C1); DONE", "CLICK(R1,C1)\uff1b DONE",
        "COUNT(\u00a01\u00a0)", "\u200bCOUNT(1)", "COUNT(1)\u2028", "\ufeffCOUNT(1)",
        "; ".join([*every_target, end]), f"COUNT({len(row['all_target_cells'])})",
        f"SUBMIT({len(row['all_target_cells'])})", None, "", "   ", 3, [gold], {"a": gold},
        True, 1.5,
    ]


ERRORS = [None, None, None, "", "None", "timeout", 0, False]


def adversarial_predictions(rows: list[dict[str, Any]], offset: int, *, drop_every: int = 0,
                            extras: int = 0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        if drop_every and index % drop_every == drop_every - 1:
            continue
        answers = adversarial_answers(row)
        prediction: dict[str, Any] = {"item_id": row["item_id"], "model": "adversary",
                                      "raw_text": answers[(7 * index + offset) % len(answers)]}
        error = ERRORS[(index + offset) % len(ERRORS)]
        if error is not None or index % 2:
            prediction["error"] = error
        if index % 13 == 5:
            prediction.pop("raw_text")
        out.append(prediction)
    out += [{"item_id": f"NOT_IN_RELEASE_{k}", "model": "adversary", "raw_text": "COUNT(1)"}
            for k in range(extras)]
    return out


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def case_specs() -> dict[str, tuple[list[dict[str, Any]] | None, list[str]]]:
    test_rows, dev_rows = load(TINY / "metadata_test.jsonl"), load(TINY / "metadata_dev.jsonl")
    oracle = [{"item_id": r["item_id"], "model": "oracle", "raw_text": r["answer"],
               "error": None} for r in test_rows]
    tiny = ["--dataset_root", "{tiny}"]
    return {
        "tiny_example": (None, [*tiny, "--predictions", "{tiny}/predictions_test.jsonl"]),
        "oracle": (oracle, [*tiny, "--predictions", "{case}/predictions.jsonl",
                            "--model", "claude46sonnet"]),
        "adversarial_a": (adversarial_predictions(test_rows, 0, extras=2),
                          [*tiny, "--predictions", "{case}/predictions.jsonl"]),
        "adversarial_b": (adversarial_predictions(test_rows, 31, drop_every=6),
                          [*tiny, "--predictions", "{case}/predictions.jsonl", "--allow_partial",
                           "--near_miss_l1", "2", "--digits", "2",
                           "--display_name", "Adversary (b)"]),
        "dev_partial": (adversarial_predictions(dev_rows, 11, drop_every=4, extras=1),
                        [*tiny, "--split", "dev", "--predictions", "{case}/predictions.jsonl",
                         "--allow_partial", "--digits", "0"]),
    }


def expand(args: list[str], case_dir: Path) -> list[str]:
    return [a.replace("{tiny}", str(TINY)).replace("{case}", str(case_dir)) for a in args]


def normalise_summary(data: bytes, metadata: Path, predictions: Path) -> bytes:
    """Replace the run's absolute input paths by placeholders."""
    for path, mark in ((metadata, "<METADATA>"), (predictions, "<PREDICTIONS>")):
        data = data.replace(json.dumps(str(path), ensure_ascii=False)[1:-1].encode(), mark.encode())
    return data


def main(public_evaluator: str) -> None:
    for name, (predictions, args) in case_specs().items():
        case_dir = CASES / name
        shutil.rmtree(case_dir, ignore_errors=True)
        (case_dir / "expected").mkdir(parents=True)
        if predictions is not None:
            (case_dir / "predictions.jsonl").write_text(
                "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions),
                encoding="utf-8")
        (case_dir / "args.json").write_text(json.dumps(args, indent=1) + "\n", encoding="utf-8")
        out = case_dir / "_public_out"
        subprocess.run([sys.executable, public_evaluator, *expand(args, case_dir), "--out_dir",
                        str(out)], check=True, stdout=subprocess.DEVNULL)
        summary = json.loads((out / "evaluation_summary.json").read_text(encoding="utf-8"))
        for produced in sorted(out.iterdir()):
            data = produced.read_bytes()
            if produced.name == "evaluation_summary.json":
                data = normalise_summary(data, Path(summary["metadata_jsonl"]),
                                         Path(summary["predictions_jsonl"]))
            (case_dir / "expected" / produced.name).write_bytes(data)
        shutil.rmtree(out)
        print(f"{name}: {len(list((case_dir / 'expected').iterdir()))} files")


if __name__ == "__main__":
    main(sys.argv[1])
