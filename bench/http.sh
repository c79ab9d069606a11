#!/usr/bin/env bash
# HTTP benchmark, side by side on one private Redis: `redelay serve` and the lmstfy server
# (a build of its public source: LMSTFY_DIR names the directory holding `lmstfy-server` and
# the `lmstfy.toml` it was built with, from github.com/bitleak/lmstfy), both driven through lmstfy's API by
# the same load generator (bench/http/main.go: Go standard library, keep-alive connections,
# concurrent clients): publish N jobs, then consume and delete them one per request.
# Rounds alternate the order (A B, B A, ...); each round then does the same work through the
# Rust client (server/examples/direct_load.rs), for the gateway's overhead. Not part of CI.
#
#   LMSTFY_DIR=/path/to/lmstfy bench/http.sh [--n 20000] [--clients 16] [--rounds 3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=20000; clients=16; rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2"; shift 2;;
    --clients) clients="$2"; shift 2;;
    --rounds) rounds="$2"; shift 2;;
    *) echo "unknown option $1" >&2; exit 64;;
  esac
done
peer="${LMSTFY_DIR:-}"
[ -x "$peer/lmstfy-server" ] && [ -f "$peer/lmstfy.toml" ] || {
  echo "bench/http.sh: set LMSTFY_DIR to the directory holding lmstfy-server and lmstfy.toml (got '${peer}')" >&2
  exit 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }

(cd "$root" && cargo build --release --quiet -p redelay-cli && cargo build --release --quiet -p redelay-server --example direct_load)
(cd "$root/bench/http" && go build -o "$root/target/http-bench" .)
"$root/tests/ensure-redis.sh"

dir="$(mktemp -d "${TMPDIR:-/tmp}/redelay-httpbench.XXXXXX")"
rport=$(free_port); lport=$(free_port); laport=$(free_port); sport=$(free_port); saport=$(free_port)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  redis-cli -p "$rport" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
# lmstfy refuses to start without AOF and noeviction; redelay runs on the same server.
redis-server --bind 127.0.0.1 --port "$rport" --dir "$dir" --save '' --appendonly yes \
  --maxmemory-policy noeviction --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
wait_port "$rport"

sed -e "s/6431/$rport/g" -e "s/^Port = .*/Port = $lport/" -e "s/^AdminPort = .*/AdminPort = $laport/" \
  "$peer/lmstfy.toml" >"$dir/lmstfy.toml"
"$peer/lmstfy-server" -c "$dir/lmstfy.toml" -p "$dir/lmstfy.pid" >"$dir/lmstfy.log" 2>&1 &
pids+=($!)
wait_port "$laport"
ltoken=$(curl -s -XPOST "http://127.0.0.1:$laport/token/bench?description=bench" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

export REDIS_URL="redis://127.0.0.1:$rport/2"
stoken=$("$root/target/release/redelay" token create bench --description bench)
"$root/target/release/redelay" serve --listen "127.0.0.1:$sport" --no-admin >"$dir/serve.log" 2>&1 &
pids+=($!)
wait_port "$sport"

echo "redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') (appendonly yes, fsync everysec), $n jobs, $clients clients, $rounds rounds" >&2
out="$dir/results.jsonl"
spid=${pids[1]}; lpid=$(cat "$dir/lmstfy.pid" 2>/dev/null || echo "${pids[0]}"); rpid=$(cat "$dir/redis.pid")
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, clock ticks
hz=$(getconf CLK_TCK)
run() { # system base token queue server-pid: both phases, then the CPU time of the server and Redis
  local s0 r0; s0=$(cpu "$5"); r0=$(cpu "$rpid")
  if [ "$1" = "rust client" ]; then
    "$root/target/release/examples/direct_load" "$n" "$clients" "$4" | tee -a "$out"
  else
    "$root/target/http-bench" -system "$1" -base "$2" -token "$3" -queue "$4" -n "$n" -c "$clients" | tee -a "$out"
  fi
  python3 -c "import json,sys; print(json.dumps({'system': sys.argv[1], 'phase': 'cpu', 'server_us_per_job': (int(sys.argv[2]) - int(sys.argv[3])) * 1e6 / int(sys.argv[6]) / int(sys.argv[7]), 'redis_us_per_job': (int(sys.argv[4]) - int(sys.argv[5])) * 1e6 / int(sys.argv[6]) / int(sys.argv[7])}))" \
    "$1" "$(cpu "$5")" "$s0" "$(cpu "$rpid")" "$r0" "$hz" "$n" | tee -a "$out"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="redelay lmstfy"; else order="lmstfy redelay"; fi
  for s in $order; do
    if [ "$s" = redelay ]; then run redelay "http://127.0.0.1:$sport" "$stoken" "r$r" "$spid"
    else run lmstfy "http://127.0.0.1:$lport" "$ltoken" "r$r" "$lpid"; fi
  done
  # The same work through the Rust client, for the gateway's overhead (its "server" CPU is
  # the idle gateway's: about zero).
  run "rust client" - - "direct$r" "$spid"
done
keep="$root/bench/results/http-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$keep"; cp "$out" "$keep/results.jsonl"
python3 - "$out" <<'PY' | tee "$keep/summary.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| system | phase | jobs/s (median) | p50 ms | p99 ms | errors |")
print("|---|---|---|---|---|---|")
for phase in ("publish", "consume+delete"):
    for system in ("redelay", "lmstfy", "rust client"):
        rs = [r for r in rows if r["system"] == system and r["phase"] == phase]
        if not rs:
            continue
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"| {system} | {phase} | {med('per_second'):,.0f} | {med('p50_ms'):.2f} | {med('p99_ms'):.2f} | {sum(r['errors'] for r in rs)} |")
print("\n| system | server CPU µs per job (publish + consume + delete, median) | Redis CPU µs per job |")
print("|---|---|---|")
for system in ("redelay", "lmstfy", "rust client"):
    rs = [r for r in rows if r["system"] == system and r["phase"] == "cpu"]
    if rs:
        print(f"| {system} | {statistics.median(r['server_us_per_job'] for r in rs):.0f} | {statistics.median(r['redis_us_per_job'] for r in rs):.0f} |")
PY
