#!/usr/bin/env bash
# The cross-language interop matrix: every language publishes to every other (tests/interop/).
#
#   tests/with-redis.sh tests/interop/run.sh
#
# Run it after the bindings' own CI (bindings-python/ci.sh, bindings-node/ci.sh,
# bindings-kotlin/ci.sh): it uses what they built and installed, and builds only the agents:
#   rust    core/examples/interop_agent.rs and the redelay CLI (cargo, dev profile; needed)
#   python  tests/interop/agent.py with the venv bindings-python/ci.sh left (.venv-ci) when
#           redelay imports there, else a venv with the wheel built the way ci.sh does
#           (tests/python-binding.sh, shared with tests/faults)
#   node    tests/interop/agent.mjs with bindings-node/redelay.js (the addon ci.sh built)
#   kotlin  tests/interop/kotlin, a Maven project using dev.redelay:redelay:0.1.0 from ~/.m2
# A language whose binding is not built or installed is skipped with the reason; a language
# that is there but fails (to build its agent, or in the matrix) fails the run. The last line
# is `interop: N passed, M failed` (checks); the exit status is non-zero on any failure.
#
# REDELAY_INTEROP_LANGS="rust python" limits the languages (rust is always needed: its CLI
# peeks and respawns). REDELAY_INTEROP_WORK keeps the specs, outputs and logs in that directory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run tests/with-redis.sh tests/interop/run.sh}"
want="${REDELAY_INTEROP_LANGS:-rust python node kotlin}"
wants() { [[ " $want " == *" $1 "* ]]; }
# Unicode arguments (nack reasons) must reach the JVM intact.
if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then export LC_ALL=C.UTF-8; fi

if [ -n "${REDELAY_INTEROP_WORK:-}" ]; then
  work="$REDELAY_INTEROP_WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/redelay-interop.XXXXXX")"
fi
agents=()
failed=()
skip() { echo "interop: skipping $1: $2"; }
fail() { echo "interop: FAILED: $1: $2"; failed+=(--failed "$1: $2"); }
quoted() { printf '%q ' "$@"; }

# --- rust: the agent and the CLI ------------------------------------------------------------
target="${CARGO_TARGET_DIR:-$root/target}"
echo "interop: building the rust agent and the CLI (cargo, dev profile)"
if ! (cd "$root" && cargo build -q -p redelay --example interop_agent && cargo build -q -p redelay-cli --bin redelay); then
  echo "interop: FAILED: rust: cargo build"
  [ -z "${REDELAY_INTEROP_WORK:-}" ] && rm -rf "$work"
  echo "interop: 0 passed, 1 failed"
  exit 1
fi
cli="$target/debug/redelay"
agents+=(--agent "rust=$(quoted "$target/debug/examples/interop_agent")")

# --- python -----------------------------------------------------------------------------------
if wants python; then
  # The installed binding (tests/python-binding.sh: the venv bindings-python/ci.sh left, else a
  # wheel built once the way ci.sh does it, into tests/.venv-python).
  py=""
  pystatus=0
  py="$("$root/tests/python-binding.sh" 2>"$work/python-binding.err")" || pystatus=$?
  cat "$work/python-binding.err"
  case $pystatus in
    0) ;;
    2) skip python "$(tail -n 1 "$work/python-binding.err")" ;;
    *) fail python "building or installing the wheel" ;;
  esac
  [ -n "$py" ] && agents+=(--agent "python=$(quoted "$py" "$here/agent.py")")
fi

# --- node -------------------------------------------------------------------------------------
if wants node; then
  if ! command -v node >/dev/null; then
    skip node "no node on PATH"
  elif ! compgen -G "$root/bindings-node/*.node" >/dev/null; then
    skip node "the native addon is not built (run bindings-node/ci.sh, or npm install in bindings-node)"
  elif ! node -e "require(process.argv[1])" "$root/bindings-node/redelay.js" >/dev/null 2>"$work/node-load.err"; then
    fail node "bindings-node/redelay.js does not load: $(tail -n 3 "$work/node-load.err")"
  else
    agents+=(--agent "node=$(quoted node "$here/agent.mjs")")
  fi
fi

# --- kotlin -----------------------------------------------------------------------------------
if wants kotlin; then
  repo="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}"
  jar="$repo/dev/redelay/redelay/0.1.0/redelay-0.1.0.jar"
  kt="$here/kotlin"
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    skip kotlin "java or mvn is not on PATH"
  elif [ ! -f "$jar" ]; then
    skip kotlin "dev.redelay:redelay:0.1.0 is not installed in $repo (run bindings-kotlin/ci.sh)"
  else
    stamp="$kt/target/interop-built"
    # Build once: again only when the sources, the pom or the installed artifact changed.
    if [ ! -f "$stamp" ] || [ -n "$(find "$kt/pom.xml" "$kt/src" "$jar" -newer "$stamp" -print -quit)" ]; then
      echo "interop: building the kotlin agent (mvn package)"
      rm -f "$stamp"
      if (cd "$kt" && mvn -B -ntp -q package >"$work/kotlin-mvn.log" 2>&1); then
        touch "$stamp"
      else
        tail -n 30 "$work/kotlin-mvn.log"
        fail kotlin "mvn package of tests/interop/kotlin"
      fi
    fi
    if [ -f "$stamp" ]; then
      agents+=(--agent "kotlin=$(quoted java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$kt/target/classes:$(cat "$kt/target/classpath.txt")" interop.AgentKt)")
    fi
  fi
fi

# --- the matrix -------------------------------------------------------------------------------
status=0
python3 "$here/matrix.py" --url "$REDIS_URL" --cli "$cli" --work "$work" "${agents[@]}" ${failed[@]+"${failed[@]}"} || status=$?
if [ $status -eq 0 ] && [ -z "${REDELAY_INTEROP_WORK:-}" ]; then rm -rf "$work"; fi
exit $status
