"""Where a single publish's Redis time goes: publish.lua for one message, and variants of it
with parts taken out, each run 5,000 times against a private Redis, pipelined 100 at a time
(so Redis stays busy and its caches warm: the script's own cost, not the round trip's).

    tests/with-redis.sh python3 bench/publish_cost.py

Prints, per variant, Redis CPU per call (INFO cpu), the time inside EVALSHA and the part of it
spent in the Redis commands the script calls (INFO commandstats). The variants:

    return 1              EVALSHA of an empty script: the floor of any script call
    lib                   all of lib.lua's top level (it defines the helpers; every script call ran
                          all of it before scripts.rs kept only the parts each script uses)
    publish, general path publish.lua without its one-message path (what every publish ran
                          before it): the batch bookkeeping for one message
    publish               publish.lua as the client sends it (with the parts of lib.lua it uses): one
                          message, generated id, due in 1 h
    - with all of lib     the same with the whole of lib.lua, as every script carried it before
    - history             without the history counter (one HINCRBY per call)
    - wake check          without looking up the earliest due time (ZRANGE) and the wake
    the commands alone    the same eight Redis commands with no Lua around them: TIME, HMGET meta,
                          HINCRBY seq, HGET, HSET, ZRANGE, ZADD and HINCRBY
    as a function         publish as a Redis 7 function (FUNCTION LOAD once, then FCALL): the
                          parts of lib.lua it uses are defined once, when the library loads, instead
                          of at every call (the "in EVALSHA" column is then the time in FCALL)

Python's standard library only: a minimal RESP client on a socket.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from pathlib import Path
from typing import List, Union

ROOT = Path(__file__).resolve().parent.parent
KEYS = [f"redelay:{{cost}}:{k}" for k in ("msg", "sched", "body", "died", "meta", "jobs", "hist", "wake")]
CALLS, PIPELINE = 5000, 100

Reply = Union[bytes, None, List["Reply"]]


class Redis:
    def __init__(self, url: str) -> None:
        host, port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.file = self.sock.makefile("rb")

    @staticmethod
    def encode(*args: Union[str, bytes, int]) -> bytes:
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def read(self) -> Reply:
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        return [self.read() for _ in range(max(int(rest), 0))]

    def call(self, *args: Union[str, bytes, int]) -> Reply:
        self.sock.sendall(self.encode(*args))
        return self.read()

    def text(self, *args: Union[str, bytes, int]) -> str:
        reply = self.call(*args)
        assert isinstance(reply, bytes)
        return reply.decode()


def cpu_seconds(r: Redis) -> float:
    lines = r.text("INFO", "cpu").splitlines()
    return sum(float(x.split(":")[1]) for x in lines if x.startswith(("used_cpu_user:", "used_cpu_sys:")))


def replaced(code: str, *changes: tuple[str, str]) -> str:
    """`code` with each (old, new) replaced; old must be in it exactly once."""
    for old, new in changes:
        assert code.count(old) == 1, f"publish.lua changed: {old!r} is not in it once"
        code = code.replace(old, new)
    return code


def lib_for(lib: str, script: str) -> str:
    """The parts of lib.lua a script carries, as core/src/storage/scripts.rs's `lib_for` picks
    them: the opening comment, then each top-level `local` definition (with the comment lines
    right above it) that the script names, directly or through another kept one."""
    lines = lib.splitlines()
    defs = []  # (first line, names)
    for i, line in enumerate(lines):
        if not line.startswith("local "):
            continue
        rest = line[len("local ") :]
        if rest.startswith("function "):
            names = [rest[len("function ") :].split("(")[0].strip()]
        else:
            names = [n.strip() for n in rest.split("=")[0].split(",")]
        begin = i
        while begin > 0 and lines[begin - 1].startswith("--"):
            begin -= 1
        defs.append((begin, names))
    ends = [d[0] for d in defs[1:]] + [len(lines)]
    texts = ["\n".join(lines[b:e]) for (b, _), e in zip(defs, ends)]
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", script))
    kept = [False] * len(defs)
    grew = True
    while grew:
        grew = False
        for k, (_, names) in enumerate(defs):
            if not kept[k] and any(n in named for n in names):
                kept[k] = grew = True
                named |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", texts[k]))
    header = ["\n".join(lines[: defs[0][0]])] if defs[0][0] > 0 else []
    return "\n".join(header + [t for t, k in zip(texts, kept) if k])


def function_library(lib_parts: str, body: str) -> str:
    """A script as the one function of a Redis function library: lib.lua's definitions at the
    library's top level (run once, at FUNCTION LOAD), the queue's keys assigned at each call."""
    keys = "MSG, SCHED, BODY, DIED, META, LEGACY, HIST, WAKE"
    decl = f"local {keys} =\n  " + ", ".join(f"KEYS[{i}]" for i in range(1, 9))
    assert lib_parts.count(decl) == 1, "lib.lua's line naming the queue's keys changed"
    top = lib_parts.replace(decl, f"local {keys}")
    call = f"{keys} = " + ", ".join(f"KEYS[{i}]" for i in range(1, 9))
    register = "redis.register_function('publish', function(KEYS, ARGV)"
    return f"#!lua name=redelay_cost\n{top}\n{register}\n{call}\n{body}\nend)\n"


def main() -> None:
    r = Redis(os.environ["REDIS_URL"])
    lib = (ROOT / "core/lua/lib.lua").read_text()
    body = (ROOT / "core/lua/publish.lua").read_text()
    publish = lib_for(lib, body) + "\n" + body
    # The cuts below act on the one-message path, which this call takes.
    no_history = ("    hist({ p = 1 }, now)\n", "")
    no_wake = ("    local before = first_waiting()\n", "    local before = nil\n")
    no_wake_call = ("    wake_if_earlier(before, due)\n", "")
    single = publish.index("if n == 1 and not CALLS then")
    general = publish[:single] + publish[publish.index("local seq0 = ", single) :]
    commands = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000
redis.call('HMGET', KEYS[5], 'v', 'nohist', 'hmin', 'hhour', 'shards', 'of')
local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)
redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
redis.call('HGET', KEYS[1], seq)
redis.call('HSET', KEYS[1], seq, ARGV[4])
redis.call('ZADD', KEYS[2], now + 3600000, seq)
redis.call('HINCRBY', KEYS[7], 'm1:p', 1)
return 1
"""
    variants = {
        "return 1": "return 1",
        "lib": lib + "\nreturn 1",
        "publish, general path": general,
        "publish": publish,
        "- with all of lib": lib + "\n" + body,
        "- history": replaced(publish, no_history),
        "- wake check": replaced(publish, no_wake, no_wake_call),
        "the commands alone": commands,
    }
    # One message as the client encodes it: the record's first 18 bytes (version 2, INLINE,
    # attempts 0, max_attempts 10, ttr 30 s, backoff 1 s .. 1 h), then replace 0, due mode 0
    # (delay), delay 1 h, no expiry; a generated id; a 34-byte blob; then the shard count of a
    # plain queue (0: no shard mark to check).
    spec = struct.pack(">BBHHIII", 2, 1, 0, 10, 30000, 1000, 3600000) + bytes([0, 0])
    spec += (3600000).to_bytes(6, "big") + bytes([0]) + (0).to_bytes(6, "big")
    print(f"{'variant':20} {'Redis CPU':>10} {'in EVALSHA':>11} {'of it commands':>15}   (µs per call)")
    args = (len(KEYS), *KEYS, 1, "", spec, b"x" * 34, 0)
    r.call("FUNCTION", "LOAD", "REPLACE", function_library(lib_for(lib, body), body))
    calls = {name: Redis.encode("EVALSHA", r.text("SCRIPT", "LOAD", code), *args) for name, code in variants.items()}
    calls["as a function"] = Redis.encode("FCALL", "publish", *args)
    for name, cmd in calls.items():
        r.call("DEL", *KEYS)
        r.sock.sendall(cmd)
        r.read()
        r.call("CONFIG", "RESETSTAT")
        before = cpu_seconds(r)
        for _ in range(CALLS // PIPELINE):
            r.sock.sendall(cmd * PIPELINE)
            for _ in range(PIPELINE):
                r.read()
        used = cpu_seconds(r) - before
        stats = {}
        for line in r.text("INFO", "commandstats").splitlines():
            if line.startswith("cmdstat_"):
                cmd_name, fields = line[8:].split(":", 1)
                stats[cmd_name] = int(fields.split("usec=")[1].split(",")[0])
        outer = "fcall" if "fcall" in stats else "evalsha"
        inner = sum(v for k, v in stats.items() if k not in (outer, "info", "config|resetstat"))
        print(f"{name:20} {used * 1e6 / CALLS:10.1f} {stats[outer] / CALLS:11.2f} {inner / CALLS:15.2f}")
    r.call("DEL", *KEYS)
    r.call("FUNCTION", "DELETE", "redelay_cost")


if __name__ == "__main__":
    main()
