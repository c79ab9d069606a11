#!/usr/bin/env bash
# Builds and tests the Kotlin/JVM binding from a clean clone:
#   1. cargo builds the native library once and uniffi-bindgen generates the Kotlin bindings
#      (build-native.sh, called by Maven in jvm/'s generate-sources phase);
#   2. `mvn install` in jvm/ compiles, runs the JUnit 5 tests (Surefire) against REDIS_URL and
#      installs dev.redelay:redelay:0.1.0 (jar with the native library + sources jar) into ~/.m2;
#   3. an app is minified with ProGuard and the jar's consumer rules, and run (minify-check/);
#   4. the example project, which knows redelay only by those coordinates, is built and run.
#
#   tests/with-redis.sh bindings-kotlin/ci.sh
#
# Needs JDK 17+, Maven, Rust; Maven fetches its dependencies from Maven Central on first run.
# REDELAY_CARGO_PROFILE=dev builds the native library faster (unoptimized).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
export REDIS_URL

echo "== kotlin: native library, bindings, tests, install" >&2
(cd "$here/jvm" && timeout 2400 mvn -B -ntp install)

echo "== kotlin: an app minified with the jar's ProGuard rules" >&2
timeout 600 "$here/minify-check/check.sh"

echo "== kotlin: example project against the installed coordinates" >&2
# timeout: the example's JVM must exit by itself after closing the client.
(cd "$here/example" && timeout 300 mvn -B -ntp -q package exec:exec)
echo "== kotlin: ok" >&2
