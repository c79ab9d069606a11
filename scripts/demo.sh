#!/usr/bin/env bash
# The demo: builds the `redelay` CLI and runs `redelay demo` against REDIS_URL
# (default redis://127.0.0.1:6379). When no Redis answers there, it runs against a private
# redis-server started by tests/with-redis.sh (installed from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "redelay: building the CLI (release) ..." >&2
cargo build --release --quiet -p redelay-cli
bin=target/release/redelay
url="${REDIS_URL:-redis://127.0.0.1:6379}"
if "$bin" --url "$url" stats >/dev/null 2>&1; then
  exec "$bin" --url "$url" demo "$@"
fi
echo "redelay: no Redis at $url; starting a private one" >&2
exec tests/with-redis.sh bash -c '"$0" demo "$@"' "$bin" "$@"
