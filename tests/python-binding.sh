#!/usr/bin/env bash
# Prints the path of a Python interpreter that imports the installed `redelay` package (the
# Python binding), for suites that run Python processes against it (tests/interop,
# tests/faults). It uses, in this order:
#   bindings-python/.venv-ci   the venv bindings-python/ci.sh left
#   tests/.venv-python         the venv this script built before
# the first where redelay imports and none of the binding's sources (core included) changed
# since the venv was made (both scripts make the venv, then build the wheel into it). Else it
# builds the wheel once the way bindings-python/ci.sh does (maturin, release) and installs it
# into tests/.venv-python.
#
# Exit status: 0 with the path on stdout; 2 when there is no Python >= 3.9 with its venv module
# (a suite may skip Python then); 1 when building or installing the wheel failed. Progress and
# errors go to stderr.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/tests/.venv-python"
sources=("$root/Cargo.lock" "$root/core/src" "$root/core/lua" "$root/core/Cargo.toml" "$root/bindings-python/src"
  "$root/bindings-python/python" "$root/bindings-python/Cargo.toml" "$root/bindings-python/pyproject.toml")

for v in "$root/bindings-python/.venv-ci" "$venv"; do
  [ -x "$v/bin/python" ] && [ -f "$v/pyvenv.cfg" ] || continue
  (cd "$root/tests" && "$v/bin/python" -c 'import redelay' 2>/dev/null) || continue
  changed="$(find "${sources[@]}" -newer "$v/pyvenv.cfg" -print -quit 2>/dev/null || true)"
  if [ -n "$changed" ]; then
    echo "python-binding: not using $v: ${changed#"$root/"} changed since its wheel was built" >&2
    continue
  fi
  echo "$v/bin/python"
  exit 0
done

python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null || ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "python-binding: no Python >= 3.9 ($python)" >&2
  exit 2
fi
rm -rf "$venv"
if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
  rm -rf "$venv"
  echo "python-binding: the Python venv module is missing" >&2
  exit 2
fi
echo "python-binding: building the wheel once (maturin, release) into $venv" >&2
dist="$(mktemp -d "${TMPDIR:-/tmp}/redelay-wheel.XXXXXX")"
trap 'rm -rf "$dist"' EXIT
vpy="$venv/bin/python"
if "$vpy" -m pip install --quiet --disable-pip-version-check "maturin>=1.16,<2" >&2 &&
  "$vpy" -m maturin build --release --manifest-path "$root/bindings-python/Cargo.toml" --out "$dist" >&2 &&
  "$vpy" -m pip install --quiet --disable-pip-version-check --force-reinstall "$dist"/redelay-*.whl >&2; then
  echo "$vpy"
else
  rm -rf "$venv"
  echo "python-binding: building or installing the wheel failed" >&2
  exit 1
fi
