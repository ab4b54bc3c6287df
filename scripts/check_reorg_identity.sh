#!/usr/bin/env bash
# Make a fixed set of small outputs with the tools installed in REPO/.venv, for a byte-level
# comparison of two versions of the code (a refactor must not change a single byte):
#   scripts/check_reorg_identity.sh OUT          # before: OUT/...
#   scripts/check_reorg_identity.sh OUT2         # after
#   diff -r OUT OUT2                             # nothing = identical
# Every run writes into the same scratch path (WORK, default /tmp/rose_identity_work) and is
# moved to OUT afterwards, so paths recorded in outputs are equal between the two runs.
# Covers: v0_1 (12 scenes a subset) at standard and extreme, vendor_mix, mini with MASK cues,
# a 3-shard mini merged with `rose-gen merge`, rose-verify, rose-audit, rose-gen preview,
# rose-run (oracle, random, cv) + rose-eval on the standard release, and rose-replay
# --report_only on the shipped v0.1 rows (tests/data/rose_v0_1).
set -euo pipefail
OUT=$(realpath -m "${1:?usage: check_reorg_identity.sh OUT_DIR}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROSE_BIN:-"$REPO/.venv/bin"}
WORK=${WORK:-/tmp/rose_identity_work}
rm -rf "$WORK" "$OUT"; mkdir -p "$WORK" "$OUT"
small() {  # scene overrides: N scenes per subset, 3 of them dev
  for s in glyph emoji_style emoji_content pixel_edit pixel_content; do
    printf 'subset.%s.scenes=%s subset.%s.dev_scenes=3 ' "$s" "$1" "$s"; done; }
gen() { # name, overrides...
  local name=$1; shift
  "$BIN/rose-gen" output_dir="$WORK/$name" workers=2 progress=false "$@" >"$OUT/$name.log" 2>&1
}
cd "$WORK"
# shellcheck disable=SC2046
gen v0_1_standard profile=v0_1 difficulty=standard $(small 12)
# shellcheck disable=SC2046
gen v0_1_extreme profile=v0_1 difficulty=extreme $(small 8)
# shellcheck disable=SC2046
gen vendor_mix profile=vendor_mix $(small 8)
gen mini_mask profile=mini render=mask seed=3
for i in 0 1 2; do
  "$BIN/rose-gen" output_dir="$WORK/sharded" workers=1 progress=false profile=mini seed=5 \
    shard.index=$i shard.count=3 >"$OUT/shard$i.log" 2>&1
done
"$BIN/rose-gen" merge "$WORK/sharded.shards" "$WORK/sharded" >"$OUT/merge.log" 2>&1
"$BIN/rose-verify" "$WORK/v0_1_extreme" >"$OUT/verify.log" 2>&1
"$BIN/rose-audit" "$WORK/v0_1_standard" >"$OUT/audit.log" 2>&1 || echo "audit status $?" >>"$OUT/audit.log"
"$BIN/rose-gen" preview "$WORK/v0_1_standard" --out "$WORK/preview" >"$OUT/preview.log" 2>&1
for solver in oracle random cv; do
  "$BIN/rose-run" --dataset_root "$WORK/v0_1_standard" --split test --solver "$solver" \
    --output "$WORK/preds_$solver.jsonl" >"$OUT/run_$solver.log" 2>&1
  "$BIN/rose-eval" --dataset_root "$WORK/v0_1_standard" --split test \
    --predictions "$WORK/preds_$solver.jsonl" --out_dir "$WORK/eval_$solver" >"$OUT/eval_$solver.log" 2>&1
done
gzip -dc "$REPO/tests/data/rose_v0_1/matched_local_count_test.jsonl.gz" >"$WORK/v0_1_rows.jsonl"
"$BIN/rose-replay" "$WORK/v0_1_rows.jsonl" --report_only "$WORK/replay_report.json" >"$OUT/replay.log" 2>&1
# predictions: completion order and latency vary run to run; keep them sorted, without latency
for f in "$WORK"/preds_*.jsonl; do
  "$BIN/python" -c 'import json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
for r in rows: r.pop("latency_s", None)
print("\n".join(json.dumps(r, sort_keys=True) for r in sorted(rows, key=lambda r: r["item_id"])))' "$f" >"$f.sorted"
  mv "$f.sorted" "$f"
done
mv "$WORK"/* "$OUT"/
rm -rf "$WORK" "$OUT"/sharded.shards
# progress bars and timings differ run to run: drop them from the logs
sed -i -E 's/.*\r//; /it(em)?\/s|scenes\/s/d' "$OUT"/*.log
echo "identity outputs in $OUT"
