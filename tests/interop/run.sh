#!/usr/bin/env bash
# The cross-language interop matrix: every language publishes to every other (tests/interop/).
#
#   tests/with-redis.sh tests/interop/run.sh
#
# Run it after the bindings' own CI (bindings-python/ci.sh, bindings-node/ci.sh,
# bindings-kotlin/ci.sh): it uses what they built and installed, and builds only the agents:
#   rust    core/examples/interop_agent.rs and the redelay CLI (cargo, dev profile; needed)
#   python  tests/interop/agent.py with the venv bindings-python/ci.sh left (.venv-ci) when
#           redelay imports there, else a venv of its own with the wheel built the way ci.sh does
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
  py=""
  for venv in "$root/bindings-python/.venv-ci" "$here/.venv-python"; do
    if [ -x "$venv/bin/python" ] && (cd "$here" && "$venv/bin/python" -c 'import redelay' 2>/dev/null); then
      py="$venv/bin/python"
      break
    fi
  done
  if [ -z "$py" ]; then
    python="${PYTHON:-python3}"
    if ! command -v "$python" >/dev/null || ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
      skip python "no Python >= 3.9 ($python)"
    elif ! "$python" -m venv "$here/.venv-python" >/dev/null 2>&1; then
      rm -rf "$here/.venv-python"
      skip python "the Python venv module is missing"
    else
      # As bindings-python/ci.sh does it: maturin, one release build of the wheel, installed.
      echo "interop: no installed Python binding found; building the wheel once into tests/interop/.venv-python"
      vpy="$here/.venv-python/bin/python"
      dist="$(mktemp -d "${TMPDIR:-/tmp}/redelay-interop-wheel.XXXXXX")"
      if "$vpy" -m pip install --quiet --disable-pip-version-check "maturin>=1.16,<2" &&
        "$vpy" -m maturin build --release --manifest-path "$root/bindings-python/Cargo.toml" --out "$dist" &&
        "$vpy" -m pip install --quiet --disable-pip-version-check --force-reinstall "$dist"/redelay-*.whl; then
        py="$vpy"
      else
        rm -rf "$here/.venv-python"
        fail python "building or installing the wheel"
      fi
      rm -rf "$dist"
    fi
  fi
  [ -n "$py" ] && agents+=(--agent "python=$(quoted "$py" "$here/agent.py")")
fi

# --- node -------------------------------------------------------------------------------------
if wants node; then
  if ! command -v node >/dev/null; then
    skip node "no node on PATH"
  elif ! compgen -G "$root/bindings-node/*.node" >/dev/null; then
    skip node "the native addon is not built (run bindings-node/ci.sh, or npm run build:addon in bindings-node)"
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
