#!/usr/bin/env bash
# The Kotlin benchmark: publishBatch messages/s and deliver+ack messages/s, one JSON line on
# stdout ({"lang":"kotlin","publish_batch_per_s":..,"deliver_ack_per_s":..}), progress on stderr.
#
#   tests/with-redis.sh bench/kotlin/run.sh
#
# Uses the installed dev.redelay:redelay:0.1.0: run bindings-kotlin/ci.sh (or `mvn install` in
# bindings-kotlin/jvm) first, with the default release profile. Options: see Bench.kt
# (BENCH_N, BENCH_BATCH, BENCH_INFLIGHT, BENCH_CONCURRENCY, BENCH_BODY, BENCH_WARMUP);
# JAVA_OPTS adds JVM options.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
cd "$here"
mvn -B -ntp -q package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >&2
# shellcheck disable=SC2086
exec java -Xmx2g ${JAVA_OPTS:-} -cp "target/classes:$(cat target/classpath.txt)" bench.BenchKt
