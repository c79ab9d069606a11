#!/usr/bin/env bash
# The memory floor of a pending message: what Redis itself charges for the two entries every
# pending message has (a `msg` hash entry and a `sched` sorted-set entry), at the sizes layout 2
# stores and at smaller ones, down to a record that holds nothing but the body. It answers "how
# far can a layout change bring bench/run.sh's (e) figure down on this server?".
#
#   bench/memory-floor.sh [SERVER ...]     default: redis-server (installed when missing)
#
# SERVER is a redis-server (or valkey-server) binary; its redis-cli/valkey-cli must sit beside
# it or on PATH. Each gets a fresh private server on a free 127.0.0.1 port; each case writes
# 100,000 entries in one script and reads used_memory before and after. Prints a Markdown
# table, bytes per message. The message is the one of bench/run.sh's (e): a 32-byte body, no
# headers, a generated 6-digit id.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=100000
[ $# -gt 0 ] || { "$root/tests/ensure-redis.sh"; set -- redis-server; }

# name | Lua body run for i = 100000 .. 100000+n-1 (i is the id; rep(k) a k-byte string)
cases=(
  "layout 2 as stored: record 90 B (56-byte header, 34-byte blob) + member 12 B (seq ‖ id)|redis.call('ZADD','z',i,'abcdef'..i); redis.call('HSET','h',i,rep(90))"
  "msg hash entry, record 90 B (layout 2)|redis.call('HSET','h',i,rep(90))"
  "msg hash entry, record 74 B (a 40-byte header)|redis.call('HSET','h',i,rep(74))"
  "msg hash entry, record 56 B (a 22-byte header)|redis.call('HSET','h',i,rep(56))"
  "msg hash entry, record 34 B (no header: the blob alone)|redis.call('HSET','h',i,rep(34))"
  "sched sorted-set entry, member 12 B (layout 2: seq ‖ id)|redis.call('ZADD','z',i,'abcdef'..i)"
  "sched sorted-set entry, member 6 B (the id alone)|redis.call('ZADD','z',i,i)"
  "floor: blob-only record 34 B + id-only member 6 B|redis.call('ZADD','z',i,i); redis.call('HSET','h',i,rep(34))"
)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

measure() { # server -> one column of bytes per message, one line per case
  local server="$1" cli dir port
  cli="$(dirname "$server")/$(basename "$server" | sed 's/-server$/-cli/')"
  [ -x "$cli" ] || cli="$(command -v "$(basename "$cli")")"
  dir="$(mktemp -d)"
  port="$(free_port)"
  "$server" --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
    --daemonize yes --pidfile "$dir/pid" --logfile "$dir/log"
  for _ in $(seq 1 100); do "$cli" -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  used() { "$cli" -p "$port" info memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
  for c in "${cases[@]}"; do
    "$cli" -p "$port" flushall >/dev/null
    sleep 0.2 # lazy frees of the case before
    local before after
    before="$(used)"
    "$cli" -p "$port" eval "local function rep(k) return string.rep('x', k) end
      for i = 100000, 100000 + $n - 1 do ${c#*|} end" 0 >/dev/null
    after="$(used)"
    echo $(((after - before) / n))
  done
  "$cli" -p "$port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$dir"
}

columns=()
header="| case |"
rule="|---|"
for s in "$@"; do
  version="$("$s" --version | sed -n 's/.*\(Redis\|Valkey\) server v=\([0-9.]*\).*/\1 \2/p')"
  header="$header $version |"
  rule="$rule---:|"
  columns+=("$(measure "$s")")
done
echo "$header"
echo "$rule"
for i in "${!cases[@]}"; do
  row="| ${cases[$i]%%|*} |"
  for col in "${columns[@]}"; do row="$row $(sed -n "$((i + 1))p" <<<"$col") |"; done
  echo "$row"
done
