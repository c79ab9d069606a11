#!/usr/bin/env bash
# One command, one private redis-server, one table: publish (batched) and deliver+ack
# messages/s for redelay from Rust, Python, Node and Kotlin, and for BullMQ.
#
#   bench/languages.sh [--rounds N]        (default 1; with more, medians)
#
# Each binding must be built first (bash scripts/test.sh does it: Python's wheel in
# bindings-python/.venv-ci, Node's addon, Kotlin's artifact in ~/.m2); a missing one is
# reported and skipped. Every side runs its own driver with the same shape of load: 100k
# messages of 32-64 bytes, batches of 1000, a no-op handler. Results: bench/results/languages-<UTC>/.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds=1
[ "${1:-}" = "--rounds" ] && rounds="${2:?--rounds needs a number}"
if [ -z "${REDIS_URL:-}" ]; then
  exec "$root/tests/with-redis.sh" bash "$0" "$@"
fi
out="$root/bench/results/languages-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p redelay-cli || exit 1
(cd "$root/bench/bullmq" && { [ -d node_modules ] || npm ci --silent; })

py="$root/bindings-python/.venv-ci/bin/python"
run() { # name, command...
  local name="$1"; shift
  redis-cli -u "$REDIS_URL" flushall >/dev/null
  echo "== $name" >&2
  "$@" >"$out/$name-$r.json" 2>"$out/$name-$r.log" || { echo "   $name failed (see $out/$name-$r.log)" >&2; rm -f "$out/$name-$r.json"; }
}
for r in $(seq 1 "$rounds"); do
  run rust "$root/target/release/redelay" bench --json --only a,b --concurrency 200
  if [ -x "$py" ] && "$py" -c 'import redelay' 2>/dev/null; then
    run python "$py" "$root/bench/python/bench.py"
  else
    echo "   python: skipped (run bindings-python/ci.sh first)" >&2
  fi
  if ls "$root"/bindings-node/redelay.*.node >/dev/null 2>&1; then
    run node node "$root/bench/node/bench.mjs"
  else
    echo "   node: skipped (run bindings-node/ci.sh first)" >&2
  fi
  if [ -x "$root/bench/kotlin/run.sh" ] && ls ~/.m2/repository/dev/redelay >/dev/null 2>&1; then
    run kotlin "$root/bench/kotlin/run.sh"
  else
    echo "   kotlin: skipped (run bindings-kotlin/ci.sh first)" >&2
  fi
  run bullmq node "$root/bench/bullmq/bench.mjs" --json --low 10 --burst 100 --memory 100 --single 1000
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(f).rsplit("-", 1)[0]
    try:
        lines = [l for l in open(f).read().splitlines() if l.strip().startswith("{")]
        d = json.loads(lines[-1])
    except Exception:
        continue
    rows.setdefault(name, []).append((d.get("publish_batch_per_s", 0), d.get("deliver_ack_per_s", 0)))
order = ["rust", "python", "node", "kotlin", "bullmq"]
label = {"rust": "redelay, Rust", "python": "redelay, Python", "node": "redelay, Node", "kotlin": "redelay, Kotlin", "bullmq": "BullMQ (Node)"}
bull = rows.get("bullmq")
bp = statistics.median(p for p, _ in bull) if bull else 0
bd = statistics.median(d for _, d in bull) if bull else 0
lines = ["| system | publish batched, msg/s | deliver+ack, msg/s | × BullMQ (publish / deliver) |", "|---|---:|---:|---:|"]
for k in order:
    if k not in rows:
        lines.append(f"| {label[k]} | not run | not run | |")
        continue
    p = statistics.median(x for x, _ in rows[k]); d = statistics.median(y for _, y in rows[k])
    ratio = f"{p / bp:.1f} / {d / bd:.1f}" if bp and bd and k != "bullmq" else ""
    lines.append(f"| {label[k]} | {p:,.0f} | {d:,.0f} | {ratio} |")
table = "\n".join(lines)
open(os.path.join(out, "table.md"), "w").write(table + "\n")
print(table)
PY
echo "results: $out" >&2
