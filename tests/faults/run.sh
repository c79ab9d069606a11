#!/usr/bin/env bash
# The fault suite (see faults.py). `--short` (CI, a few minutes) or `--full` (RELIABILITY.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/tests/ensure-redis.sh"
cargo build --quiet --manifest-path "$root/Cargo.toml" -p redelay --example fault_worker -p redelay-cli
exec python3 "$root/tests/faults/faults.py" "$@"
