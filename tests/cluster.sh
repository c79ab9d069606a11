#!/usr/bin/env bash
# A local Redis Cluster for tests: 3 masters, each with 1 replica, on free 127.0.0.1 ports.
#
#   tests/cluster.sh start DIR   prints the URL redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
#   tests/cluster.sh stop DIR    stops every node and removes DIR
#   tests/cluster.sh restart DIR PORT   starts the node on PORT again (after a kill), with its
#                                       cluster config and no data
#
# Each node lives in DIR/PORT (config, pid file, log). cluster-node-timeout is 1000 ms, so a
# replica takes over a killed master within a few seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:?usage: cluster.sh start|stop DIR}"
dir="${2:?usage: cluster.sh start|stop DIR}"

# Starts the node of port $1 in DIR/$1, daemonized.
node() {
  redis-server --bind 127.0.0.1 --port "$1" --dir "$dir/$1" --cluster-enabled yes \
    --cluster-config-file nodes.conf --cluster-node-timeout 1000 --save "" --appendonly no \
    --repl-diskless-sync-delay 0 \
    --daemonize yes --pidfile "$dir/$1/redis.pid" --logfile "$dir/$1/redis.log"
}

case "$cmd" in
  start)
    "$here/ensure-redis.sh"
    mkdir -p "$dir"
    # Six ports below 55535 whose cluster-bus port (port + 10000) is free too.
    mapfile -t ports < <(python3 - <<'PY'
import random, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
chosen = []
while len(chosen) < 6:
    p = random.randint(20000, 45000)
    if p not in chosen and free(p) and free(p + 10000):
        chosen.append(p)
print("\n".join(map(str, chosen)))
PY
)
    for p in "${ports[@]}"; do
      mkdir -p "$dir/$p"
      node "$p"
    done
    for p in "${ports[@]}"; do
      for _ in $(seq 1 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.05; done
    done
    addrs=()
    for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1
    for _ in $(seq 1 200); do
      ok=1
      for p in "${ports[@]}"; do
        redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || ok=0
      done
      [ $ok = 1 ] && break
      sleep 0.1
    done
    # A replica that never finished its first sync cannot take over: wait for all three.
    for _ in $(seq 1 200); do
      up=0
      for p in "${ports[@]}"; do
        redis-cli -p "$p" info replication 2>/dev/null | grep -q 'master_link_status:up' && up=$((up + 1))
      done
      [ $up -ge 3 ] && break
      sleep 0.1
    done
    printf '%s\n' "${ports[@]}" >"$dir/ports"
    echo "redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
    ;;
  restart)
    p="${3:?usage: cluster.sh restart DIR PORT}"
    node "$p"
    for _ in $(seq 1 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.05; done
    ;;
  stop)
    if [ -f "$dir/ports" ]; then
      while read -r p; do
        kill "$(cat "$dir/$p/redis.pid" 2>/dev/null)" 2>/dev/null || true
      done <"$dir/ports"
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: cluster.sh start|stop DIR, or restart DIR PORT" >&2
    exit 64
    ;;
esac
