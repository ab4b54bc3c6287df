#!/usr/bin/env bash
# The main job on the embedded default: generate the mini release, solve it with the
# cv baseline (reads only pixels and prompts), and evaluate the predictions.
set -euo pipefail
out=${1:?usage: demo.sh OUT_DIR}
release=$out/release
preds=$out/predictions_cv_test.jsonl

rose-gen profile=mini output_dir="$release" overwrite=true
rose-verify "$release"
rose-run --dataset_root "$release" --split test --solver cv --output "$preds"
rose-eval --dataset_root "$release" --split test --predictions "$preds" \
  --out_dir "$out/eval_cv_test" --model cv-baseline
echo "demo: release in $release, evaluation in $out/eval_cv_test" >&2
