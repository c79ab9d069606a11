#!/usr/bin/env bash
# The test launcher: starts a private redis-server on a free 127.0.0.1 port (installing it when
# missing), exports REDIS_URL=redis://127.0.0.1:PORT, runs the given command, stops the server,
# and exits with the command's status.
#
#   tests/with-redis.sh cargo test
#
# REDELAY_REDIS_ARGS adds redis-server options (e.g. "--appendonly yes").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/ensure-redis.sh"
dir="$(mktemp -d "${TMPDIR:-/tmp}/redelay-redis.XXXXXX")"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# shellcheck disable=SC2086
redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" --appendonly no \
  --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" ${REDELAY_REDIS_ARGS:-}
stop() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null || true
  rm -rf "$dir"
}
trap stop EXIT
for _ in $(seq 1 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
export REDIS_URL="redis://127.0.0.1:$port"
echo "redelay: redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on $REDIS_URL" >&2
set +e
"$@"
status=$?
set -e
exit $status
