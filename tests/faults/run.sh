#!/usr/bin/env bash
# The fault suite (see faults.py). `--short` (CI, a few minutes) or `--full` (RELIABILITY.md).
#
# Builds what its consumer processes need, reusing what the bindings' CI already built:
#   rust    core/examples/fault_worker.rs and the redelay CLI (cargo, dev profile)
#   python  tests/faults/worker.py with the installed binding (tests/python-binding.sh: the venv
#           bindings-python/ci.sh left, else a wheel built once into tests/.venv-python)
#   node    tests/faults/worker.mjs with bindings-node/redelay.js; the native addon is built
#           (bindings-node/scripts/install.js, release) when missing or older than its sources
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/tests/ensure-redis.sh"
# Two builds: `--example` would limit the CLI package to examples too, so its binary (used for
# `verify`) was never built here and a stale one could be checked against a newer layout.
cargo build --quiet --manifest-path "$root/Cargo.toml" -p redelay --example fault_worker
cargo build --quiet --manifest-path "$root/Cargo.toml" -p redelay-cli --bin redelay

python="$("$root/tests/python-binding.sh")" || { echo "faults: no Python binding (tests/python-binding.sh failed)"; exit 1; }
export REDELAY_FAULTS_PYTHON="$python"

command -v node >/dev/null || { echo "faults: node is not on PATH"; exit 1; }
addon="$(compgen -G "$root/bindings-node/redelay.*.node" | head -n 1 || true)"
if [ -n "$addon" ]; then
  changed="$(find "$root/Cargo.lock" "$root/core/src" "$root/core/lua" "$root/core/Cargo.toml" "$root/bindings-node/src" \
    "$root/bindings-node/Cargo.toml" "$root/bindings-node/build.rs" -newer "$addon" -print -quit 2>/dev/null || true)"
  if [ -n "$changed" ]; then
    echo "faults: ${changed#"$root/"} changed since the Node addon was built; building it again" >&2
    addon=""
  fi
fi
if [ -z "$addon" ]; then
  node "$root/bindings-node/scripts/install.js" --force
fi

exec python3 "$root/tests/faults/faults.py" "$@"
