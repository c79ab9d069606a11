#!/usr/bin/env bash
# CI of the Python binding, from a clean clone: installs its tools with pip, builds the abi3
# wheel once (release), installs it into a venv, runs pytest against the installed wheel,
# mypy --strict on the examples and mypy's stubtest on the native module's stub. Needs Python
# >= 3.9 with pip, Rust, and REDIS_URL:
#
#   tests/with-redis.sh bindings-python/ci.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run this under tests/with-redis.sh}"
python="${PYTHON:-python3}"

# A fresh venv under the binding (git-ignored); fall back to the user site if venv is missing.
venv="$here/.venv-ci"
rm -rf "$venv"
if "$python" -m venv "$venv" >/dev/null 2>&1; then
  py="$venv/bin/python"
  pipflags=()
else
  echo "ci.sh: python venv module unavailable; installing into the user site" >&2
  py="$python"
  pipflags=(--user)
fi
"$py" -m pip install --quiet --disable-pip-version-check ${pipflags[@]+"${pipflags[@]}"} \
  "maturin>=1.16,<2" "pytest>=7" "mypy>=1.18"

# One build of the wheel.
dist="$(mktemp -d "${TMPDIR:-/tmp}/redelay-wheel.XXXXXX")"
trap 'rm -rf "$dist"' EXIT
"$py" -m maturin build --release --manifest-path "$here/Cargo.toml" --out "$dist"
wheel="$(ls "$dist"/redelay-*.whl)"
"$py" -m pip install --quiet --disable-pip-version-check ${pipflags[@]+"${pipflags[@]}"} --force-reinstall "$wheel"

# Tests against the installed wheel: run from tests/, where the source tree is not importable
# (conftest refuses to run if it were).
status=0
(cd "$here/tests" && REDELAY_TEST_INSTALLED=1 "$py" -m pytest -p no:cacheprovider -q -rfE .) || status=$?

# pyproject.toml says Python >= 3.9 (the wheel is abi3-py39): the same tests, on the same
# wheel, in Python 3.9 when this machine has one (on PATH, or pyenv's), so that a newer API
# than 3.9 has fails here.
oldest=""
for p in python3.9 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9; do
  if "$p" -c 'import sys, venv; assert sys.version_info[:2] == (3, 9)' >/dev/null 2>&1; then oldest="$p"; fi
done
if [ -n "$oldest" ] && "$oldest" -m venv "$here/.venv-ci39" >/dev/null 2>&1; then
  echo "== pytest on $("$oldest" --version)"
  py39="$here/.venv-ci39/bin/python"
  "$py39" -m pip install --quiet --disable-pip-version-check "pytest>=7" "$wheel"
  (cd "$here/tests" && REDELAY_TEST_INSTALLED=1 "$py39" -m pytest -p no:cacheprovider -q -rfE .) || status=$?
  rm -rf "$here/.venv-ci39"
else
  echo "== pytest on Python 3.9: skipped (no Python 3.9 with venv on this machine)"
fi

# Types: the examples, as a user's code, against the installed package.
(cd "$here/examples" && "$py" -m mypy --strict --no-incremental --cache-dir=/dev/null .) || status=$?

# The hand-written stub of the native module (python/redelay/_native.pyi) against the module
# itself, as installed: every name, signature, default and class flag (final, disjoint base).
(cd "$here/tests" && "$py" -m mypy.stubtest redelay._native) || status=$?

exit $status
