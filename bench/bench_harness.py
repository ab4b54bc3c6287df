"""Time the harness adapters' own work (not the model calls) on a generated release.

    .venv/bin/python bench/bench_harness.py [--release DIR] [--repeats 3]

Without --release, generates ``rose-gen profile=mini`` (30 scenes, 100 test rows) in a
temporary folder. Reports median wall and CPU seconds, and per test item:

- building the inspect_ai task (samples, image facts: one read + sha256 per image),
- ``rose-export vlmevalkit`` (TSV with base64 images),
- reading a VLMEvalKit result file (.tsv and .xlsx) into prediction rows,
- lmms-eval ``process_results`` over every doc (the strict scorer per item).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from rose_eval.harness import lmms_eval_task
from rose_eval.harness.inspect_task import rose
from rose_eval.harness.vlmevalkit import export_tsv, read_result_file
from rose_eval.split_rows import read_rows, split_of_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_eval import timed  # noqa: E402 - the bench folder is not a package
from record import add_markdown_flag, run_context, write_row  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    add_markdown_flag(parser, "harness.md")
    args = parser.parse_args()
    context = run_context()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        release = args.release
        if release is None:
            from rose_gen.release.config import load_config
            from rose_gen.release.pipeline import generate_release

            release = tmp / "mini"
            generate_release(load_config(["profile=mini", f"output_dir={release}", "progress=false"]))
        items = len(read_rows(split_of_file(release / "data" / "test.parquet")))
        tsv = tmp / "ROSE_test.tsv"
        export_tsv(release, tsv)
        frame = pd.read_csv(tsv, sep="\t").drop(columns=["image"])
        frame["prediction"] = frame["answer"]
        frame.to_csv(tmp / "m_ROSE_test.tsv", sep="\t", index=False)
        frame.to_excel(tmp / "m_ROSE_test.xlsx", index=False)
        import datasets

        docs = [dict(d) for d in datasets.load_dataset(
            "parquet", data_files={"test": str(release / "data" / "test.parquet")},
            cache_dir=str(tmp / "hf"))["test"]]
        cases = {
            "inspect task build": lambda: rose(dataset_root=str(release)),
            "rose-export vlmevalkit": lambda: export_tsv(release, tmp / "again.tsv"),
            "read result .tsv": lambda: read_result_file(tmp / "m_ROSE_test.tsv", warn=lambda _m: None),
            "read result .xlsx": lambda: read_result_file(tmp / "m_ROSE_test.xlsx", warn=lambda _m: None),
            "lmms process_results": lambda: [lmms_eval_task.process_results(d, [d["ground_truth_formal_answer"]])
                                             for d in docs],
        }
        print(f"{items} test items of {release}")
        for name, fn in cases.items():
            wall, cpu = timed(fn, args.repeats)
            print(f"{name:24s} wall {wall:7.3f} s  cpu {cpu:7.3f} s  ({1000 * cpu / items:.2f} ms CPU per item)")
            if args.markdown:
                intro = ("The harness adapters' own work, no model calls: building the inspect_ai task, "
                         "`rose-export vlmevalkit`, reading a VLMEvalKit result file, lmms-eval's "
                         "`process_results` over every document; median of the repeats. Without "
                         "`--release`, on a fresh `profile=mini` release. Reproduce: "
                         "`.venv/bin/python bench/bench_harness.py --markdown`.")
                source = "mini" if args.release is None else args.release.name
                write_row(args.markdown, "Harness adapters", intro,
                          ["release", "test items", "wall s", "CPU s", "CPU ms per item"], name,
                          [source, f"{items:,}", f"{wall:.3f}", f"{cpu:.3f}", f"{1000 * cpu / items:.2f}"], context)


if __name__ == "__main__":
    main()
