#!/usr/bin/env bash
# Single awaited publishes side by side: redelay (`redelay bench --only a`: 10,000 publishes,
# one call in flight) and asynq 0.26 (bench/asynq: 10,000 Client.Enqueue, one at a time), on
# one fresh private redis-server, alternating A/B for several rounds; prints the medians of
# messages/s and of Redis CPU per message (issue 14: where a single publish's time goes).
# Each round also runs 20,000 PINGs one at a time (`redis-benchmark -c 1`): the floor of a
# round trip's cost on this machine, which no script can go below.
#
#   bench/single.sh [--rounds N]          (default 3)
#
# Needs cargo and go (asynq comes from the Go module proxy, pinned by bench/asynq/go.sum).
# Results: bench/results/single-<UTC time>/{redelay,asynq}-rN.json and summary.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds=3
[ "${1:-}" = "--rounds" ] && rounds="${2:?--rounds needs a number}"
if [ -z "${REDIS_URL:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p redelay-cli
  (cd "$root/bench/asynq" && go build -o "$root/target/release/asynq-bench" .)
  exec "$root/tests/with-redis.sh" bash "${BASH_SOURCE[0]}" --rounds "$rounds"
fi
out="$root/bench/results/single-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)"
  echo "redis: $(redis-server --version)"
  echo "go: $(go version)"
  echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/meta.txt"
run() { # name, command...
  local name="$1"
  shift
  redis-cli -u "$REDIS_URL" flushall >/dev/null
  redis-cli -u "$REDIS_URL" script flush >/dev/null
  "$@" >"$out/$name-r$r.json" 2>"$out/$name-r$r.log"
}
cpu_s() { # the Redis server's CPU seconds so far
  redis-cli -u "$REDIS_URL" info cpu | awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {print s}'
}
ping_round() { # 20,000 PINGs, one in flight: {"per_s": …, "redis_cpu_us_per_call": …}
  local before after rps
  before=$(cpu_s)
  rps=$(redis-benchmark -u "$REDIS_URL" -c 1 -n 20000 -t ping_mbulk --csv | awk -F'"' '/PING_MBULK/ {print $4}')
  after=$(cpu_s)
  python3 -c "import json; print(json.dumps({'per_s': float('$rps'), 'redis_cpu_us_per_call': round(($after - $before) * 1e6 / 20000, 2)}))"
}
for r in $(seq 1 "$rounds"); do
  echo "single.sh: round $r of $rounds" >&2
  ping_round >"$out/ping-r$r.json"
  if [ $((r % 2)) -eq 1 ]; then
    run redelay "$root/target/release/redelay" bench --only a --json
    run asynq "$root/target/release/asynq-bench" --json
  else
    run asynq "$root/target/release/asynq-bench" --json
    run redelay "$root/target/release/redelay" bench --only a --json
  fi
done
python3 - "$out" "$rounds" <<'PY' | tee "$out/summary.md"
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(name):
    return [json.load(open(f"{out}/{name}-r{r}.json")) for r in range(1, rounds + 1)]
rd, aq = load("redelay"), load("asynq")
rows = [
    ("messages/s", [d["publish_single_per_s"] for d in rd], [d["publish"]["single"]["per_s"] for d in aq]),
    ("Redis CPU µs per message", [d["redis_cpu_us_per_msg"]["publish_single"] for d in rd],
     [d["redis_cpu_us_per_msg"]["publish_single"] for d in aq]),
]
ping = load("ping")
print(f"Single awaited publishes, medians of {rounds} rounds (bench/results/{os.path.basename(out)}):\n")
print("| | redelay | asynq 0.26 | redelay/asynq |\n|---|---:|---:|---:|")
for name, a, b in rows:
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {name} | {ma:,.1f} | {mb:,.1f} | {ma / mb:.2f} |")
per_s, cpu = [p["per_s"] for p in ping], [p["redis_cpu_us_per_call"] for p in ping]
print(f"\nThe floor, PING one at a time (redis-benchmark -c 1): {statistics.median(per_s):,.0f}/s and "
      f"{statistics.median(cpu):.1f} µs of Redis CPU per call (rounds: {', '.join(f'{c:.1f}' for c in cpu)} µs)")
PY
