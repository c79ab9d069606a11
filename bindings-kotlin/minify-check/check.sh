#!/usr/bin/env bash
# Minifies App.java with the redelay jar and its runtime dependencies as one app (ProGuard:
# shrink and obfuscate; its optimizer is left out, it breaks kotlinx-coroutines by itself), with
# the consumer rules those jars carry in META-INF/proguard/ (R8 reads them by itself; ProGuard
# is given them here), then runs it against REDIS_URL. Shows that redelay.pro keeps what JNA
# needs and that the error kinds hold without their class names.
#
#   tests/with-redis.sh bindings-kotlin/minify-check/check.sh    (after `mvn package` in jvm/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${REDIS_URL:?REDIS_URL is not set: run under tests/with-redis.sh}"
jar="$here/../jvm/target/redelay-0.1.0.jar"
[ -f "$jar" ] || { echo "check.sh: no $jar; run mvn package in bindings-kotlin/jvm first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here/../jvm" && mvn -B -ntp -q dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile="$work/deps")
(cd "$here" && mvn -B -ntp -q dependency:build-classpath -Dmdep.outputFile="$work/proguard")
deps="$(cat "$work/deps")"
mkdir -p "$work/classes" "$work/rules"
javac -d "$work/classes" -cp "$jar:$deps" "$here/App.java"
for j in "$jar" ${deps//:/ }; do
  (cd "$work/rules" && unzip -qo "$j" 'META-INF/proguard/*' 2>/dev/null && mv META-INF/proguard/*.pro . ) || true
done
{
  echo "-injars $work/classes"
  echo "-injars $jar"
  for j in ${deps//:/ }; do echo "-injars $j(!META-INF/versions/**,!module-info.class)"; done
  echo "-outjars $work/app.jar"
  for m in java.base java.logging java.desktop; do echo "-libraryjars <java.home>/jmods/$m.jmod(!**.jar;!module-info.class)"; done
  echo "-dontoptimize"
  echo "-ignorewarnings"
  echo "-dontnote **"
  echo "-keep class App { public static void main(java.lang.String[]); }"
  for r in "$work"/rules/*.pro; do echo "-include $r"; done
} > "$work/app.pro"
grep -q redelay.pro "$work/app.pro" || { echo "check.sh: the jar has no META-INF/proguard/redelay.pro" >&2; exit 1; }
java -cp "$(cat "$work/proguard")" proguard.ProGuard @"$work/app.pro" > "$work/proguard.log" 2>&1 \
  || { tail -30 "$work/proguard.log" >&2; exit 1; }
java -cp "$work/app.jar" App
