# Sourced by the check scripts (scripts/check_eval_only.sh, scripts/check_ray.sh): one function that
# builds a venv of its own for an install of this checkout.
#
#   ensure_check_venv VENV SPEC PROBE WHAT
#
# installs `pip install -c constraints.txt -e SPEC` (SPEC: "$root" or "$root[ray]") into VENV, rebuilt
# only when pyproject.toml or constraints.txt change (a stamp of their sha256 in VENV/.stamp) or
# VENV/bin/PROBE is missing. On failure it prints the log's last lines and calls the caller's
# `fail` with WHAT. Needs $root (the checkout) and the caller's `say` and `fail`.

ensure_check_venv() {
  local venv=$1 spec=$2 probe=$3 what=$4 want
  want=$(cat "$root/pyproject.toml" "$root/constraints.txt" | sha256sum | cut -d' ' -f1)
  if [ -x "$venv/bin/$probe" ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  say "installing $what into $venv"
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade "pip>=23.2" 2>/dev/null
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$root/constraints.txt" \
      -e "$spec" >"$venv/setup.log" 2>&1; then
    grep -v "^WARNING: Location" "$venv/setup.log" | tail -n 20 >&2
    fail "pip install -c constraints.txt $what (full log: $venv/setup.log)"
  fi
  echo "$want" >"$venv/.stamp"
}
