#!/usr/bin/env bash
# The side-by-side benchmark: redelay and BullMQ against the same fresh private redis-server,
# alternating A/B for several rounds, then a table of medians with the ratio redelay/BullMQ,
# and a chart of the lateness distributions. See bench/README.md.
#
#   bench/run.sh [--rounds N] [--quick] [--only redelay|bullmq] [--no-build]
#
# Results: bench/results/<UTC timestamp>/{redelay,bullmq}-rN.json (+ .log with each run's
# stderr), meta.txt, summary.md, summary.json, lateness.png.
# Environment: REDELAY_REDIS_ARGS adds redis-server options (tests/with-redis.sh);
# REDELAY_BENCH_ARGS / BULLMQ_BENCH_ARGS add arguments to each side's command;
# REDELAY_BIN runs another redelay binary (then pass --no-build).
set -euo pipefail

# All in one function, so that bash has read the whole file before running any of it (editing
# this file during a run cannot change the run).
main() {

bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$bench/.." && pwd)"
bin="${REDELAY_BIN:-$root/target/release/redelay}"

rounds=3
quick=""
only=""
build=1
usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    --rounds=*) rounds="${1#*=}"; shift ;;
    --quick) quick="--quick"; shift ;;
    --only) only="${2:?--only needs redelay or bullmq}"; shift 2 ;;
    --only=*) only="${1#*=}"; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; usage; exit 2 ;;
  esac
done
case "$rounds" in ''|*[!0-9]*|0) echo "run.sh: --rounds needs a positive number" >&2; exit 2 ;; esac
case "$only" in ''|redelay|bullmq) ;; *) echo "run.sh: --only takes redelay or bullmq" >&2; exit 2 ;; esac

say() { echo "run.sh: $*" >&2; }

if [ -z "${REDELAY_BENCH_INNER:-}" ]; then
  # ---- outer: prepare both sides, then run the rounds inside a private redis-server ----
  command -v node >/dev/null || { say "node is required for the BullMQ side"; exit 1; }
  if [ "$only" != "redelay" ]; then
    lock="$bench/bullmq/package-lock.json"
    stamp="$bench/bullmq/node_modules/.package-lock.json"
    if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
      say "npm ci in bench/bullmq"
      (cd "$bench/bullmq" && npm ci --no-audit --no-fund >&2)
    fi
  fi
  if [ "$only" != "bullmq" ] && [ "$build" = 1 ]; then
    say "cargo build --release -p redelay-cli"
    if ! (cd "$root" && cargo build --release -p redelay-cli >&2); then
      say "cargo build failed: fix the build, or run the BullMQ side alone with --only bullmq"
      exit 1
    fi
  fi
  if ! python3 -c 'import matplotlib' 2>/dev/null; then
    say "installing matplotlib (pip) for the chart"
    python3 -m pip install --quiet matplotlib >&2 \
      || python3 -m pip install --quiet --user matplotlib >&2 \
      || python3 -m pip install --quiet --break-system-packages matplotlib >&2 \
      || say "could not install matplotlib: the chart will be skipped"
  fi
  stamp_dir="$(date -u +%Y%m%dT%H%M%SZ)"
  out="$bench/results/$stamp_dir"
  mkdir -p "$out"
  export REDELAY_BENCH_INNER=1 REDELAY_BENCH_OUT="$out"
  args=(--rounds "$rounds")
  [ -n "$quick" ] && args+=("$quick")
  [ -n "$only" ] && args+=(--only "$only")
  exec "$root/tests/with-redis.sh" bash "${BASH_SOURCE[0]}" "${args[@]}"
fi

# ---- inner: REDIS_URL points at a fresh private redis-server ----
out="${REDELAY_BENCH_OUT:?}"
: "${REDIS_URL:?with-redis.sh exports REDIS_URL}"
rcli() { redis-cli -u "$REDIS_URL" "$@"; }

# Server settings a bench may change (the redelay bench sets the slowlog ones): taken at the
# start and put back before every run.
saved_config=()
for key in hz slowlog-log-slower-than slowlog-max-len latency-monitor-threshold; do
  val="$(rcli CONFIG GET "$key" | sed -n 2p)"
  if [ -n "$val" ]; then saved_config+=("$key" "$val"); fi
done

# Each run starts on an empty server: no keys, no cached scripts, fresh stats and slowlog,
# the same settings.
reset_redis() {
  local i
  for ((i = 0; i < ${#saved_config[@]}; i += 2)); do
    rcli CONFIG SET "${saved_config[i]}" "${saved_config[i + 1]}" >/dev/null
  done
  rcli FLUSHALL >/dev/null
  rcli SCRIPT FLUSH >/dev/null
  rcli CONFIG RESETSTAT >/dev/null
  rcli SLOWLOG RESET >/dev/null
}

# The redelay side runs only if the binary has the `bench` subcommand.
redelay_ok=0
if [ "$only" != "bullmq" ]; then
  if [ ! -x "$bin" ]; then
    say "SKIPPING redelay: $bin does not exist (build failed or --no-build without a build)"
  elif ! "$bin" bench --help >/dev/null 2>&1; then
    say "SKIPPING redelay: '$bin bench' does not exist yet (the CLI lacks the bench subcommand)"
  else
    redelay_ok=1
  fi
fi
bullmq_ok=1
[ "$only" = "redelay" ] && bullmq_ok=0

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "redis: $(redis-server --version)"
  echo "redis args: ${REDELAY_REDIS_ARGS:-(defaults of tests/with-redis.sh)}"
  echo "redis config: ${saved_config[*]}"
  echo "node: $(node --version)"
  echo "bullmq: $(node -p 'require(process.argv[1]).version' "$bench/bullmq/node_modules/bullmq/package.json" 2>/dev/null || echo '?')"
  echo "ioredis: $(node -p 'require(process.argv[1]).version' "$bench/bullmq/node_modules/ioredis/package.json" 2>/dev/null || echo '?')"
  echo "rustc: $(rustc --version 2>/dev/null || echo '?')"
  echo "redelay commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  if [ "$redelay_ok" = 1 ]; then echo "redelay binary: ${bin#"$root"/}, built $(date -u -r "$bin" +%Y-%m-%dT%H:%M:%SZ)"; fi
  echo "rounds: $rounds${quick:+ (quick)}"
  echo "order: odd rounds redelay then BullMQ, even rounds BullMQ then redelay"
} >"$out/meta.txt"
say "results in $out"

failures=0
run_side() { # side round
  local side="$1" r="$2" json="$out/$1-r$2.json" log="$out/$1-r$2.log" status=0
  local -a cmd
  if [ "$side" = redelay ]; then
    # shellcheck disable=SC2206
    cmd=("$bin" bench --json $quick ${REDELAY_BENCH_ARGS:-})
  else
    # shellcheck disable=SC2206
    cmd=(node "$bench/bullmq/bench.mjs" --json $quick ${BULLMQ_BENCH_ARGS:-})
  fi
  reset_redis
  say "round $r/$rounds: $side: ${cmd[*]}"
  local t0=$SECONDS
  "${cmd[@]}" >"$json.tmp" 2>"$log" || status=$?
  if [ "$status" -eq 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$json.tmp" 2>/dev/null; then
    mv "$json.tmp" "$json"
    say "round $r/$rounds: $side done in $((SECONDS - t0)) s"
  else
    mv "$json.tmp" "$json.failed"
    failures=$((failures + 1))
    say "round $r/$rounds: $side FAILED (exit $status); see $log"
    tail -n 5 "$log" >&2 || true
  fi
}

for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order=(redelay bullmq); else order=(bullmq redelay); fi
  for side in "${order[@]}"; do
    if [ "$side" = redelay ] && [ "$redelay_ok" = 1 ]; then run_side redelay "$r"; fi
    if [ "$side" = bullmq ] && [ "$bullmq_ok" = 1 ]; then run_side bullmq "$r"; fi
  done
done
reset_redis

echo
python3 "$bench/compare.py" "$out" || failures=$((failures + 1))
shopt -s nullglob
results=("$out"/redelay-r*.json "$out"/bullmq-r*.json)
if [ ${#results[@]} -gt 0 ] && python3 -c 'import matplotlib' 2>/dev/null; then
  python3 "$bench/chart.py" -o "$out/lateness.png" "${results[@]}" || say "chart failed"
fi
echo
say "results: $out"
if [ "$redelay_ok" = 0 ] && [ "$only" != "bullmq" ]; then
  say "note: the redelay side was skipped (see above)"
fi
[ "$failures" -eq 0 ]
}

main "$@"
exit $?
