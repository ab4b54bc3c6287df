#!/usr/bin/env bash
# ROSE toolkit: one entry point for set-up, the demo and the tests.
#   ./run.sh demo   set up, then generate the mini release, solve it with the cv baseline, evaluate it
#   ./run.sh test   set up, then lint, run the whole test suite and prove the evaluator-only
#                   install (scripts/check_eval_only.sh; skipped when pytest arguments are given)
#   ./run.sh check-ray   the Ray launcher in its own venv on a local Ray head (scripts/check_ray.sh;
#                   not part of test: ~1.1 GB of Ray and ~5 min on a 2-core machine the first time)
# Set-up is idempotent: Debian packages (when root), a .venv with pinned packages.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD
VENV=$ROOT/.venv
PY=${PYTHON:-python3}

say() { printf '[run.sh] %s\n' "$*" >&2; }

missing_system_packages() {
  local pkg
  grep -v '^\s*#' system-packages.txt | grep -v '^\s*$' | while read -r pkg; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || echo "$pkg"
  done
}

ensure_system_packages() {
  local missing
  missing=$(missing_system_packages | tr '\n' ' ')
  [ -z "${missing// }" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    say "missing Debian packages (install them as root): apt-get install $missing"
    exit 1
  fi
}

ensure_venv() {
  local stamp=$VENV/.rose-setup-stamp want
  want=$(cat pyproject.toml constraints.txt 2>/dev/null | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
    return 0
  fi
  say "setting up $VENV"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade "pip>=23.2" 2>/dev/null
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[dev]" \
      >"$VENV/setup.log" 2>&1; then
    grep -v "^WARNING: Location" "$VENV/setup.log" | tail -n 20 >&2
    say "package install failed (full log: $VENV/setup.log)"
    exit 1
  fi
  "$VENV/bin/python" -c "import rose_gen, rose_eval" || { say "package install failed"; exit 1; }
  echo "$want" >"$stamp"
}

setup() {
  ensure_system_packages
  ensure_venv
  export PATH=$VENV/bin:$PATH
}

demo() {
  setup
  local out=${ROSE_DEMO_DIR:-$ROOT/out/demo}
  mkdir -p "$out"
  bash "$ROOT/scripts/demo.sh" "$out"
}

tests() {
  setup
  ruff check .
  # One worker per core plus one (pytest-xdist): many tests wait on child processes, local
  # servers and Retry-After pauses, and the extra worker fills that idle core time
  # (bench/suite.md). `./run.sh test -n 0` runs in one process.
  # Bytecode caching on for the run, even where the environment turns it off (container images
  # often set PYTHONDONTWRITEBYTECODE): the suite starts about 350 Python processes (xdist
  # workers, CLI and launcher jobs), and each would otherwise compile the packages and rewrite
  # the test modules from source again; caches go to the git-ignored __pycache__ folders.
  unset PYTHONDONTWRITEBYTECODE
  python -m pytest -q -n "$(( $(nproc) + 1 ))" --durations=25 "$@"
  if [ $# -eq 0 ]; then
    bash "$ROOT/scripts/check_eval_only.sh"
  fi
}

case "${1:-}" in
  demo) shift; demo "$@" ;;
  test) shift; tests "$@" ;;
  setup) setup ;;
  check-ray) ensure_system_packages; bash "$ROOT/scripts/check_ray.sh" ;;
  *) echo "usage: ./run.sh demo | ./run.sh test [pytest args] | ./run.sh check-ray" >&2; exit 2 ;;
esac
