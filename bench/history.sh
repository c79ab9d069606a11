#!/usr/bin/env bash
# The cost of the per-queue history (issue 15): `redelay bench` phases a (publish) and b
# (deliver+ack) with history on and with --no-history, alternating, 3 rounds, one Redis.
#
#   tests/with-redis.sh bench/history.sh [OUT_DIR]      (default bench/results/history-<time>)
#
# Writes on-N.json / off-N.json (bench/README.md's schema) and prints the medians.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${REDIS_URL:?run it under tests/with-redis.sh}"
(cd "$root" && cargo build -q --release -p redelay-cli)
bin="${CARGO_TARGET_DIR:-$root/target}/release/redelay"
out="${1:-$root/bench/results/history-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
for r in 1 2 3; do
  "$bin" --url "$REDIS_URL" bench --only a,b --json > "$out/on-$r.json"
  "$bin" --url "$REDIS_URL" bench --only a,b --json --no-history > "$out/off-$r.json"
done
python3 - "$out" <<'PY'
import glob, json, statistics, sys
med = {}
for k in ("on", "off"):
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{sys.argv[1]}/{k}-*.json"))]
    for m in ("publish_single_per_s", "publish_batch_per_s", "deliver_ack_per_s"):
        med[k, m] = statistics.median(r[m] for r in runs)
for m in ("publish_single_per_s", "publish_batch_per_s", "deliver_ack_per_s"):
    on, off = med["on", m], med["off", m]
    print(f"{m}: history on {on:,.0f}, off {off:,.0f} ({(off / on - 1) * 100:.1f}% more without)")
PY
