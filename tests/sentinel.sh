#!/usr/bin/env bash
# Redis Sentinel for tests: a master, a replica, and one Sentinel (quorum 1) watching them as
# "mymaster", all on free 127.0.0.1 ports.
#
#   tests/sentinel.sh start DIR      prints redis+sentinel://127.0.0.1:SPORT/mymaster
#   tests/sentinel.sh failover DIR   asks the Sentinel to fail over now and waits until the
#                                    replica is the master
#   tests/sentinel.sh stop DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd="${1:?usage: sentinel.sh start|failover|stop DIR}"
dir="${2:?usage: sentinel.sh start|failover|stop DIR}"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ping() { for _ in $(seq 1 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }

case "$cmd" in
  start)
    "$here/ensure-redis.sh"
    mkdir -p "$dir"
    m=$(free_port); r=$(free_port); s=$(free_port)
    for p in "$m" "$r"; do
      mkdir -p "$dir/$p"
      extra=()
      [ "$p" = "$r" ] && extra=(--replicaof 127.0.0.1 "$m")
      redis-server --bind 127.0.0.1 --port "$p" --dir "$dir/$p" --save "" --appendonly no \
        --repl-diskless-sync-delay 0 --daemonize yes --pidfile "$dir/$p/redis.pid" \
        --logfile "$dir/$p/redis.log" "${extra[@]}"
      wait_ping "$p"
    done
    # The replica must have finished its first sync: WAIT (wait_for_replicas) counts on it, and a
    # busy machine can take seconds.
    up=0
    for _ in $(seq 1 300); do
      redis-cli -p "$r" info replication | grep -q 'master_link_status:up' && { up=1; break; }
      sleep 0.1
    done
    [ "$up" = 1 ] || { echo "sentinel.sh: the replica on $r did not sync with $m within 30 s" >&2; exit 1; }
    mkdir -p "$dir/$s"
    cat >"$dir/$s/sentinel.conf" <<CONF
bind 127.0.0.1
port $s
dir $dir/$s
sentinel monitor mymaster 127.0.0.1 $m 1
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 5000
CONF
    redis-server "$dir/$s/sentinel.conf" --sentinel --daemonize yes --pidfile "$dir/$s/redis.pid" \
      --logfile "$dir/$s/redis.log"
    wait_ping "$s"
    for _ in $(seq 1 100); do
      redis-cli -p "$s" sentinel replicas mymaster 2>/dev/null | grep -q "$r" && break
      sleep 0.1
    done
    printf '%s\n' "$m" "$r" "$s" >"$dir/ports"
    echo "redis+sentinel://127.0.0.1:$s/mymaster"
    ;;
  failover)
    mapfile -t P <"$dir/ports"
    s=${P[2]}
    old=$(redis-cli -p "$s" sentinel get-master-addr-by-name mymaster | tail -1)
    # Right after start the Sentinel may not have the replica's INFO yet (NOGOODSLAVE): retry.
    for _ in $(seq 1 60); do
      out=$(redis-cli -p "$s" sentinel failover mymaster 2>&1)
      [ "$out" = OK ] && break
      sleep 0.5
    done
    for _ in $(seq 1 200); do
      now=$(redis-cli -p "$s" sentinel get-master-addr-by-name mymaster | tail -1)
      if [ "$now" != "$old" ] && redis-cli -p "$now" role | head -1 | grep -q master; then
        echo "master is now 127.0.0.1:$now"
        exit 0
      fi
      sleep 0.1
    done
    echo "sentinel.sh: failover did not complete" >&2
    exit 1
    ;;
  stop)
    if [ -f "$dir/ports" ]; then
      while read -r p; do kill "$(cat "$dir/$p/redis.pid" 2>/dev/null)" 2>/dev/null || true; done <"$dir/ports"
    fi
    rm -rf "$dir"
    ;;
  *) echo "usage: sentinel.sh start|failover|stop DIR" >&2; exit 64 ;;
esac
