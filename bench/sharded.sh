#!/usr/bin/env bash
# Sharded queues: throughput and Redis CPU per message with 1 and 3 masters (issue 14 §2).
#
#   bench/sharded.sh [--rounds N] [--quick] [--shards N] [--no-build]
#
# Each round runs, against fresh private servers on 127.0.0.1 with no replicas:
#   single/1   one plain redis-server, a plain queue (1 shard): the reference
#   single/N   the same server, a queue of N shards (default 16): what sharding costs
#   c1/N       a Redis Cluster of 1 master holding all slots, N shards
#   c3/1       a Redis Cluster of 3 masters, a plain queue (it lives on one master)
#   c3/N       a Redis Cluster of 3 masters, N shards (spread over all three)
# and for each: `redelay bench --json --only a` (publish: single awaited publishes, then
# batches of 1000) and `--only b` (deliver+ack: 100,000 published in batches, then consumed
# with 200 handlers), reading every master's CPU time (utime + stime of /proc/PID/stat) before
# and after each. "life" is phase (b)'s Redis CPU over its messages: a message's whole life
# (batched publish, lease, ack). Results: bench/results/sharded-<UTC>/ (runs.jsonl, summary.md).
set -euo pipefail

main() {
bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$bench/.." && pwd)"
bin="${REDELAY_BIN:-$root/target/release/redelay}"
rounds=3; quick=""; shards=16; build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="${2:?}"; shift 2 ;;
    --quick) quick="--quick"; shift ;;
    --shards) shards="${2:?}"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sharded.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$build" = 1 ] && (cd "$root" && cargo build --release -q -p redelay-cli)
"$root/tests/ensure-redis.sh"
out="$bench/results/sharded-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/redelay-sharded.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
{
  echo "host: $(uname -srm), $(nproc) cores"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "redis: $(redis-server --version)"
  echo "redelay: $(git -C "$root" rev-parse --short HEAD) $("$bin" --version)"
  echo "command: bench/sharded.sh --rounds $rounds --shards $shards $quick"
} >"$out/meta.txt"
cat "$out/meta.txt" >&2

# A free port whose cluster-bus port (port + 10000) exists and is free too.
free_port() {
  python3 -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    if p < 55000:
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", p + 10000)); print(p); break
        except OSError:
            pass
        finally:
            b.close()
'
}
node() { # node PORT [cluster]: starts a redis-server (its pid into pids); fails if it does not answer
  local p="$1" extra=()
  mkdir -p "$work/$p"
  [ "${2:-}" = cluster ] && extra=(--cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000)
  redis-server --bind 127.0.0.1 --port "$p" --dir "$work/$p" --save "" --appendonly no \
    --daemonize yes --pidfile "$work/$p/redis.pid" --logfile "$work/$p/redis.log" "${extra[@]}" || return 1
  for _ in $(seq 1 100); do
    if redis-cli -p "$p" ping >/dev/null 2>&1; then
      pids+=("$(cat "$work/$p/redis.pid")")
      return 0
    fi
    sleep 0.05
  done
  echo "sharded.sh: redis-server on $p did not start: $(tail -3 "$work/$p/redis.log")" >&2
  return 1
}
# node_anywhere [cluster]: starts a node on some free port; echoes nothing, appends to ports
node_anywhere() {
  local p
  for _ in 1 2 3 4 5; do
    p="$(free_port)"
    if node "$p" "${1:-}"; then ports+=("$p"); return 0; fi
  done
  return 1
}
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  pids=()
}
cluster_ok() { for p in "$@"; do redis-cli -p "$p" cluster info | grep -q cluster_state:ok || return 1; done; }
# setup TOPOLOGY: starts it; sets url and ports
setup() {
  ports=()
  case "$1" in
    single)
      node_anywhere; url="redis://127.0.0.1:${ports[0]}" ;;
    c1)
      node_anywhere cluster
      redis-cli -p "${ports[0]}" cluster addslotsrange 0 16383 >/dev/null
      url="redis+cluster://127.0.0.1:${ports[0]}" ;;
    c3)
      node_anywhere cluster; node_anywhere cluster; node_anywhere cluster
      local addrs=()
      for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
      redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$work/create.log" 2>&1
      url="redis+cluster://$(IFS=,; echo "${addrs[*]}")" ;;
  esac
  for _ in $(seq 1 200); do
    [ "$1" = single ] && break
    cluster_ok "${ports[@]}" && break
    sleep 0.1
  done
}
ticks() { # CPU clock ticks of each master, space separated
  local t=()
  for p in "${ports[@]}"; do t+=("$(awk '{print $14 + $15}' "/proc/$(cat "$work/$p/redis.pid")/stat")"); done
  echo "${t[*]}"
}
hz="$(getconf CLK_TCK)"

for round in $(seq 1 "$rounds"); do
  for cfg in single/1 "single/$shards" "c1/$shards" c3/1 "c3/$shards"; do
    topo="${cfg%/*}"; n="${cfg#*/}"
    setup "$topo"
    for phase in a b; do
      before="$(ticks)"
      json="$("$bin" --url "$url" --shards "$n" bench --json --only "$phase" $quick 2>"$out/$topo-$n-$phase-r$round.log")"
      after="$(ticks)"
      python3 - "$round" "$topo" "$n" "$phase" "$hz" "$before" "$after" "$json" >>"$out/runs.jsonl" <<'PY'
import json, sys
rnd, topo, n, phase, hz, before, after, j = sys.argv[1:]
b = [int(x) for x in before.split()]; a = [int(x) for x in after.split()]
cpu = [(y - x) / int(hz) for x, y in zip(b, a)]
v = json.loads(j)
print(json.dumps({"round": int(rnd), "topology": topo, "shards": int(n), "phase": phase,
                  "cpu_s_per_master": cpu, "bench": {k: v[k] for k in
                  ("publish_single_per_s", "publish_batch_per_s", "deliver_ack_per_s", "settings")}}))
PY
      echo "sharded.sh: round $round $cfg ($phase) cpu per master: $before -> $after" >&2
    done
    stop_all
  done
done
python3 "$bench/sharded_summary.py" "$out/runs.jsonl" "$quick" | tee "$out/summary.md"
}
main "$@"
