#!/usr/bin/env bash
# Runs the Python, Node.js and Kotlin test suites on another architecture's release artifacts,
# under qemu user-mode emulation, in Debian's Python 3.11, Node.js 18 and JDK 17 of that
# architecture (scripts/qemu-arch.sh): the suites that CI runs on this machine's build, against
# the native code a user on ARCH gets.
#
#   tests/with-redis.sh scripts/arch-suites.sh --arch aarch64 [DIST]     (DIST: default dist/)
#
#   python  bindings-python/tests against the manylinux wheel of ARCH (pip installs it and
#           pytest for that platform into a folder of its own; REDELAY_TEST_INSTALLED=1)
#   node    each file of bindings-node/test, against the addon of @redelay/linux-ARCH-gnu, in a
#           copy of the package's JavaScript; children start through REDELAY_TEST_NODE.
#           types.test.js is left out: it runs tsc on the .d.ts files, the same everywhere
#   kotlin  bindings-kotlin/jvm's tests (Maven Surefire, -Djvm= the JDK of ARCH) against the
#           jar's linux-ARCH library; the test JVM starts its children through redelay.test.java,
#           by fork and exec (its default goes through jspawnhelper, a binary of ARCH that the
#           machine cannot exec); needs the host build of bindings-kotlin/jvm (generated sources)
#
# Part of the release check (RELEASING.md), after scripts/release.sh. Ends with
# "arch-suites: N passed, M failed" (tests, summed over the suites).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
arch=""
dist="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    *) dist="$1"; shift ;;
  esac
done
[ -n "$arch" ] || { echo "usage: arch-suites.sh --arch ARCH [DIST]" >&2; exit 2; }
dist="$(cd "$dist" && pwd)"
version="$("$root/scripts/set-version.sh" --print)"
case "$arch" in aarch64) node_arch=arm64 jna=linux-aarch64 ;; x86_64) node_arch=x64 jna=linux-x86-64 ;; esac
qemu="$root/target/qemu-$arch"
"$root/scripts/qemu-arch.sh" "$arch" "$qemu" || { echo "arch-suites: 0 passed, 1 failed"; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/redelay-arch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
count() { # SUITE PASSED FAILED
  echo "== arch-suites $1 ($arch): $2 passed, $3 failed"
  passed=$((passed + $2)); failed=$((failed + $3))
}

# ---- Python ------------------------------------------------------------------------------------
python_suite() {
  local wheel site="$work/python-site" out="$work/python.log"
  wheel="$(ls "$dist"/python/redelay-"$version"-cp*-abi3-*manylinux*_"$arch"*.whl 2>/dev/null | head -n 1)"
  [ -n "$wheel" ] || { echo "no manylinux wheel for $arch in $dist/python"; count python 0 1; return; }
  python3 -m venv "$work/venv" && "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
    --target "$site" "pytest>=7,<10" && "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
    --no-index --no-deps --target "$site" --platform "manylinux2014_$arch" --only-binary=:all: "$wheel" \
    || { count python 0 1; return; }
  (cd "$root/bindings-python/tests" && REDELAY_TEST_INSTALLED=1 PYTHONPATH="$site" \
    timeout 1800 "$qemu/python3" -m pytest -p no:cacheprovider -q -rfE .) >"$out" 2>&1
  tail -n 15 "$out"
  local line p f
  line="$(grep -E '^=*\s*[0-9]+ (passed|failed)' "$out" | tail -n 1)"
  p="$(echo "$line" | sed -nE 's/.*\b([0-9]+) passed.*/\1/p')"
  f="$(echo "$line" | sed -nE 's/.*\b([0-9]+) (failed|errors?).*/\1/p')"
  count python "${p:-0}" "${f:-$([ -n "$p" ] && echo 0 || echo 1)}"
}

# ---- Node.js -----------------------------------------------------------------------------------
node_suite() {
  # A copy laid out as in the repository: the conformance test reads ../../tests/conformance.
  local d="$work/bindings-node" plat p=0 f=0 file out
  plat="$dist/npm/redelay-linux-$node_arch-gnu-$version.tgz"
  [ -f "$plat" ] || { echo "no $plat"; count node 0 1; return; }
  mkdir -p "$d" "$work/tests"
  cp -R "$root/bindings-node/test" "$root/bindings-node/package.json" "$root/bindings-node/index.js" \
    "$root/bindings-node/redelay.js" "$d/"
  cp -R "$root/tests/conformance" "$work/tests/"
  tar -xzf "$plat" -C "$work" package/ && cp "$work"/package/*.node "$d/" || { count node 0 1; return; }
  for file in "$d"/test/*.test.js "$d"/test/*.test.mjs; do
    case "$(basename "$file")" in types.test.js) continue ;; esac
    out="$(cd "$d" && REDELAY_TEST_NODE="$qemu/node" timeout 900 "$qemu/node" --test-reporter=tap "$file" 2>&1)"
    local fp ff
    fp="$(echo "$out" | sed -n 's/^# pass //p' | tail -n 1)"
    ff="$(echo "$out" | sed -n 's/^# fail //p' | tail -n 1)"
    echo "   $(basename "$file"): ${fp:-?} passed, ${ff:-?} failed"
    [ "${ff:-1}" = 0 ] || echo "$out" | grep -E '^not ok|^ +error:' | head -n 10
    p=$((p + ${fp:-0})); f=$((f + ${ff:-1}))
  done
  count node "$p" "$f"
}

# ---- Kotlin ------------------------------------------------------------------------------------
kotlin_suite() {
  local jvm="$root/bindings-kotlin/jvm" jar out="$work/kotlin.log"
  jar="$dist/maven/dev/redelay/redelay/$version/redelay-$version.jar"
  [ -f "$jar" ] || { echo "no $jar"; count kotlin 0 1; return; }
  [ -d "$jvm/target/generated-sources/uniffi" ] \
    || { echo "bindings-kotlin/jvm has no generated sources: build it first (bindings-kotlin/ci.sh)"; count kotlin 0 1; return; }
  # The test classpath reads the native library from target/native: ARCH's, from the jar.
  rm -rf "$jvm/target/native/$jna" "$jvm/target/classes/$jna"
  python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith(sys.argv[3] + "/")]' \
    "$jar" "$jvm/target/native" "$jna" || { count kotlin 0 1; return; }
  (cd "$jvm" && timeout 2400 mvn -B -ntp test -Dredelay.skipNative=true -Djvm="$qemu/bin/java" \
    -DargLine="-Dredelay.test.java=$qemu/bin/java -Djdk.lang.Process.launchMechanism=FORK") >"$out" 2>&1
  local status=$?
  rm -rf "$jvm/target/native/$jna" "$jvm/target/classes/$jna"
  grep -E 'Tests run:|FAIL' "$out" | tail -n 15
  local line n fl er
  line="$(grep -E '^\[(INFO|ERROR|WARNING)\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$out" | tail -n 1)"
  if [ -z "$line" ]; then tail -n 30 "$out"; count kotlin 0 1; return; fi
  n="$(echo "$line" | sed -E 's/.*Tests run: ([0-9]+).*/\1/')"
  fl="$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')"
  er="$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')"
  [ "$status" -eq 0 ] || [ $((fl + er)) -gt 0 ] || er=1
  count kotlin $((n - fl - er)) $((fl + er))
}

python_suite
node_suite
kotlin_suite
echo "arch-suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
