#!/usr/bin/env bash
# The Ray launcher, proved in its own venv: `pip install -c constraints.txt '.[ray]'` must
# install, and `rose-gen -m hydra/launcher=rose_ray ... hydra.launcher.ray.init.address=auto`
# (the README's command) must run 3 shards on a running Ray cluster (a local head started
# here) and merge a release byte-identical to one process (workers=1).
# The venv (.venv-ray, ~1.1 GB: Ray) is rebuilt only when pyproject.toml or constraints.txt
# change. Cost on the 2-core VM: ~100 s to build the venv (warm pip cache), then ~100 s a run
# (a sweep with shard 1 killed, the rerun, the diff).
# Run it with ./run.sh check-ray (not part of ./run.sh test: that cost).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${ROSE_RAY_VENV:-$root/.venv-ray}
say() { printf '[ray] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# shellcheck source=scripts/lib_venv.sh
. "$root/scripts/lib_venv.sh"
ensure_check_venv "$venv" "$root[ray]" ray "'.[ray]'"

tmp=$(mktemp -d /tmp/rose-ray.XXXXXX)  # short: Ray's socket paths live under it
head_pid=
stop_head() {
  # Only the head this script started: its process group (setsid), never `ray stop`.
  if [ -n "$head_pid" ]; then kill -TERM -- "-$head_pid" 2>/dev/null || true; sleep 2
    kill -KILL -- "-$head_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap stop_head EXIT
port=$("$venv/bin/python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
export RAY_ADDRESS=127.0.0.1:$port RAY_USAGE_STATS_ENABLED=0 PYTHONPATH=$root  # the test source plug-in
setsid "$venv/bin/ray" start --head --block --node-ip-address=127.0.0.1 --port="$port" --num-cpus=2 \
  --include-dashboard=false --object-store-memory=100000000 --temp-dir="$tmp/ray" \
  >"$tmp/head.log" 2>&1 &
head_pid=$!
disown "$head_pid"  # stopped by stop_head: no "Killed" report from bash
for _ in $(seq 60); do
  "$venv/bin/python" -c "import ray; ray.init(address='auto', logging_level='ERROR'); ray.shutdown()" \
    >/dev/null 2>&1 && break
  kill -0 "$head_pid" 2>/dev/null || { tail -n 20 "$tmp/head.log" >&2; fail "ray start --head"; }
  sleep 1
done

read -r -a small < <(cd "$root" && "$venv/bin/python" -c \
  "from tests.fixtures.latin_source import latin_overrides; print(' '.join(latin_overrides(scenes=3, dev=1)))")
cd "$tmp"
"$venv/bin/rose-gen" output_dir=single workers=1 progress=false "${small[@]}" >"$tmp/single.log" 2>&1 \
  || { tail -n 5 "$tmp/single.log" >&2; fail "rose-gen workers=1"; }
# The README's Ray command as written (address=auto joins the head above through RAY_ADDRESS).
sweep=(-m hydra/launcher=rose_ray 'shard.index=range(0,3)' shard.count=3 output_dir=sharded
  hydra.launcher.ray.init.address=auto progress=false "${small[@]}")
# First with shard 1 killing its own process (SIGKILL, as the out-of-memory killer would): one line
# per unfinished shard, exit 1, no traceback, no partial folder left.
start=$(date +%s)
status=0
# Ray's workers get their environment from the cluster, not from this shell: the runtime_env passes it.
"$venv/bin/rose-gen" "${sweep[@]}" "+hydra.launcher.ray.init.runtime_env={env_vars:{ROSE_GEN_TEST_KILL_SHARD:'1'}}" \
  >"$tmp/killed.log" 2>&1 || status=$?
[ "$status" = 1 ] || { tail -n 20 "$tmp/killed.log" >&2; fail "a killed Ray shard: exit $status, not 1"; }
grep -q "^rose-gen: error: shard 1: stopped while running (pid " "$tmp/killed.log" \
  || { tail -n 20 "$tmp/killed.log" >&2; fail "no line for the killed shard 1"; }
! grep -q Traceback "$tmp/killed.log" || { cat "$tmp/killed.log" >&2; fail "a traceback for a killed shard"; }
! ls -d sharded.shards/.shard-* >/dev/null 2>&1 || fail "left: $(ls -A sharded.shards)"
say "ok: a killed Ray shard ends in these lines, exit 1 ($(( $(date +%s) - start )) s):"
grep '^rose-gen: error: ' "$tmp/killed.log" | sed 's/^/[ray]   /' >&2
start=$(date +%s)
"$venv/bin/rose-gen" "${sweep[@]}" >"$tmp/ray.log" 2>&1 \
  || { tail -n 20 "$tmp/ray.log" >&2; fail "rose-gen -m hydra/launcher=rose_ray (3 shards)"; }
grep -q "(15 scenes from 3 shards)" "$tmp/ray.log" || { tail -n 20 "$tmp/ray.log" >&2; fail "no merge line"; }
diff -r single sharded >/dev/null || fail "the Ray release differs from workers=1"
[ ! -e sharded.shards ] || fail "shard folders left after the merge: $(ls -A sharded.shards)"
say "ok: 3 shards on a local Ray head (address=auto) merged byte-identical to workers=1 ($(( $(date +%s) - start )) s)"
