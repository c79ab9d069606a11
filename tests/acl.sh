#!/usr/bin/env bash
# A redis-server for tests on a plain port, with the ACL users of tests/users.acl: "app" /
# "app-secret" holds exactly the rule the README documents (redelay's keys and channels under
# the "redelay:" prefix, and the commands redelay uses); "other" / "other-secret" may only touch
# "other:*"; the default user is off. (tests/tls.sh serves the same users over TLS; this one
# needs no TLS in the server build, so it runs on every server the suites run on.)
#
#   tests/acl.sh start DIR   prints PORT
#   tests/acl.sh stop DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:?usage: acl.sh start|stop DIR}"
dir="${2:?usage: acl.sh start|stop DIR}"
case "$cmd" in
  start)
    "$here/ensure-redis.sh"
    mkdir -p "$dir"
    cp "$here/users.acl" "$dir/users.acl"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    redis-server --bind 127.0.0.1 --port "$port" --aclfile "$dir/users.acl" --save "" --appendonly no \
      --dir "$dir" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
    for _ in $(seq 1 100); do
      redis-cli -p "$port" --user app --pass app-secret ping >/dev/null 2>&1 && break
      sleep 0.05
    done
    if ! redis-cli -p "$port" --user app --pass app-secret ping >/dev/null 2>&1; then
      echo "acl.sh: redis-server did not start:" >&2
      tail -3 "$dir/redis.log" >&2
      exit 1
    fi
    echo "$port"
    ;;
  stop)
    kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null || true
    rm -rf "$dir"
    ;;
  *) echo "usage: acl.sh start|stop DIR" >&2; exit 64 ;;
esac
