#!/usr/bin/env bash
# Runs every test suite against one private redis-server (tests/with-redis.sh), then prints one
# summary line: "N passed, M failed". Suites: the linters, the Rust core and CLI, the README's Rust
# quick start as a project of its own, then each binding's ci.sh, the no-Rust install test of the release artifacts, the interop matrix when present, and
# the dashboard's browser tests. Each suite's full output is kept in target/test-logs/.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ -z "${REDIS_URL:-}" ]; then
  exec tests/with-redis.sh bash "$0" "$@"
fi
# A full run builds the workspace several ways (tests, each binding, release artifacts, agents).
# Incremental caches and full debug info are most of target/ (about 14 GB per clone with them) and
# buy nothing in a one-shot run; a run on a nearly full disk fails with ENOSPC in every suite.
# Line tables keep file:line in panics and backtraces. Set either variable to override.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
logs="$root/target/test-logs"
mkdir -p "$logs"
passed=0; failed=0; broken=()

# count LOG: adds the passed/failed counts a test runner printed in LOG.
count() {
  local p f
  read -r p f < <(python3 "$root/scripts/count_tests.py" "$1")
  passed=$((passed + p)); failed=$((failed + f))
  echo "== $2: $p passed, $f failed"
}

suite() {
  local name="$1"; shift
  echo "== $name: $*"
  local log="$logs/$name.log"
  "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  count "$log" "$name"
  if [ "$status" -ne 0 ]; then
    broken+=("$name (exit $status)")
  fi
}

# Linters and format checks (scripts/lint.sh): one count per check, a finding fails CI.
suite lint scripts/lint.sh
suite rust cargo test -p redelay -p redelay-cli -p redelay-server
# The README's Rust quick start, built as a new project of its own and run (Ctrl-C ends it).
suite readme-rust scripts/readme-rust.sh
for b in python node kotlin; do
  if [ -x "bindings-$b/ci.sh" ]; then
    suite "$b" "bindings-$b/ci.sh"
  fi
done
# Release artifacts for this machine (scripts/release.sh --host-only), installed with no Rust on
# PATH into a fresh venv / npm project / Maven project, each running its README quick start.
if [ -x scripts/install-test.sh ]; then
  suite install scripts/install-test.sh --build "$root/target/dist-ci"
fi
if [ -x tests/interop/run.sh ]; then
  suite interop tests/interop/run.sh
fi
# The dashboard in Debian's headless Chromium (installed when missing) against redelay serve.
if [ -x tests/browser/run.sh ]; then
  suite browser tests/browser/run.sh
fi
if [ -x tests/faults/run.sh ]; then
  suite faults tests/faults/run.sh --short
fi
# The benchmark command must keep working: a seconds-long smoke run (no timing is asserted).
if grep -q '"bench"\|Bench(' cli/src/main.rs 2>/dev/null; then
  suite bench-smoke cargo run --quiet -p redelay-cli -- bench --quick
fi

if [ ${#broken[@]} -gt 0 ]; then
  echo "failing suites: ${broken[*]}"
  [ "$failed" -eq 0 ] && failed=1
fi
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
