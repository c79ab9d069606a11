#!/usr/bin/env bash
# A/B on one redis-server: `redelay bench --only b` (100,000 published in batches, delivered and
# acked) with a plain queue and with 16 shards, alternating, 3 rounds; prints throughput, the
# server's CPU ticks (utime + stime of /proc/PID/stat; 100 per second) and the client's user and
# system seconds (/usr/bin/time) per run.
#
#   cargo build --release -p redelay-cli && tests/with-redis.sh bash bench/sharded_ab.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${REDELAY_BIN:-$root/target/release/redelay}"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
pid=$(redis-cli -u "$REDIS_URL" info server | awk -F: '/process_id/ {print $2}' | tr -d '\r')
for r in 1 2 3; do
  for n in 1 16; do
    redis-cli -u "$REDIS_URL" flushall >/dev/null
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    out=$(/usr/bin/time -f "%U %S" -o "$err" "$bin" --url "$REDIS_URL" --shards "$n" bench --json --only b 2>/dev/null)
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    rate=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["deliver_ack_per_s"])' "$out")
    echo "round $r shards=$n deliver+ack/s=$rate redis_ticks=$((after - before)) client_user_sys_s=$(tail -1 "$err")"
  done
done
