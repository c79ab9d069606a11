#!/usr/bin/env bash
# A/B of two redelay builds on a Redis Cluster of one master that holds every slot (so the
# bench's Redis CPU figures, read from one node, cover all of it): `redelay bench --only a`
# (single awaited publishes, then batches of 1,000), alternating A and B for ROUNDS rounds;
# prints each run's Redis CPU µs per message and its throughput.
#
#   bench/cluster_ab.sh OLD_BINARY NEW_BINARY [ROUNDS]      (default 4 rounds)
#
# Build the old binary in a worktree: git worktree add /tmp/old REV && (cd /tmp/old && cargo
# build --release -p redelay-cli); the new one with cargo build --release -p redelay-cli.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
a="${1:?usage: cluster_ab.sh OLD_BINARY NEW_BINARY [ROUNDS]}"
b="${2:?usage: cluster_ab.sh OLD_BINARY NEW_BINARY [ROUNDS]}"
rounds="${3:-4}"
"$root/tests/ensure-redis.sh"
dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --cluster-enabled yes \
  --cluster-config-file nodes.conf --save '' --appendonly no \
  --daemonize yes --pidfile "$dir/pid" --logfile "$dir/log"
for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$port" cluster addslotsrange 0 16383 >/dev/null
for _ in $(seq 1 100); do
  redis-cli -p "$port" cluster info | grep -q cluster_state:ok && break
  sleep 0.1
done
for r in $(seq 1 "$rounds"); do
  for bin in "$a" "$b"; do
    redis-cli -p "$port" flushall >/dev/null
    "$bin" --url "redis+cluster://127.0.0.1:$port" bench --only a --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
c = j["redis_cpu_us_per_msg"]
single, batch = c["publish_single"], c["publish_batch"]
rate_single, rate_batch = j["publish_single_per_s"], j["publish_batch_per_s"]
print(f"round {sys.argv[1]} {sys.argv[2]}: Redis CPU us/msg single {single} batch {batch}; "
      f"msg/s single {rate_single:.0f} batch {rate_batch:.0f}")
' "$r" "$bin"
  done
done
