#!/usr/bin/env bash
# A TLS-only redis-server for tests, with certificates made here (a private CA and a server
# certificate for 127.0.0.1 and localhost) and an ACL user restricted to redelay's keys.
#
#   tests/tls.sh start DIR   prints PORT; DIR/ca.pem is the CA to trust
#   tests/tls.sh stop DIR
#
# Users: those of tests/users.acl (see tests/acl.sh): "app" / "app-secret" holds the rule the
# README documents, "other" / "other-secret" may only touch "other:*"; the default user is off.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:?usage: tls.sh start|stop DIR}"
dir="${2:?usage: tls.sh start|stop DIR}"
case "$cmd" in
  start)
    "$here/ensure-redis.sh"
    mkdir -p "$dir"
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=redelay test CA" \
      -keyout ca.key -out ca.pem >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile san.ext -out server.pem >/dev/null 2>&1
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # The users of tests/users.acl (the rule documented in the README), as tests/acl.sh.
    cp "$here/users.acl" users.acl
    redis-server --bind 127.0.0.1 --port 0 --tls-port "$port" --tls-cert-file server.pem \
      --tls-key-file server.key --tls-ca-cert-file ca.pem --tls-auth-clients no \
      --aclfile "$dir/users.acl" --save "" --appendonly no --dir "$dir" \
      --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
    for _ in $(seq 1 100); do
      redis-cli --tls --cacert ca.pem -p "$port" --user app --pass app-secret ping >/dev/null 2>&1 && break
      sleep 0.05
    done
    if ! redis-cli --tls --cacert ca.pem -p "$port" --user app --pass app-secret ping >/dev/null 2>&1; then
      echo "tls.sh: redis-server did not start:" >&2
      tail -3 redis.log >&2
      exit 1
    fi
    echo "$port" >port
    echo "$port"
    ;;
  stop)
    kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null || true
    rm -rf "$dir"
    ;;
  *) echo "usage: tls.sh start|stop DIR" >&2; exit 64 ;;
esac
