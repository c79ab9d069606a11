#!/usr/bin/env bash
# Code lines of each binding (pygount: code, not comments, docstrings or blank lines), against
# issue 13's target: at most 60% of the lines before it (Python 1865, Node 1131, Kotlin 1082).
# Generated files are not counted (napi-rs's index.js/index.d.ts, the redelay.js/redelay.d.ts tsc
# emits from bindings-node/lib, UniFFI's Kotlin).
#
#   scripts/binding-lines.sh          (installs pygount with pip when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pygount >/dev/null || python3 -m pip install --quiet pygount >&2
code_lines() {
  pygount --format=summary "$@" | awk -F'│' '/Sum/ {gsub(/ /, "", $5); print $5}'
}
printf '%-8s %6s %6s %6s  %s\n' binding lines before target paths
row() { # name, lines before issue 13, paths...
  local name="$1" before="$2"
  shift 2
  printf '%-8s %6s %6s %6s  %s\n' "$name" "$(code_lines "$@")" "$before" "$((before * 60 / 100))" "$*"
}
row python 1865 bindings-python/src bindings-python/python/redelay
row node 1131 bindings-node/src bindings-node/lib
row kotlin 1082 bindings-kotlin/src bindings-kotlin/jvm/src/main/kotlin
