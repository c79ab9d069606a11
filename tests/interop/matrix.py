#!/usr/bin/env python3
"""The cross-language interop matrix of redelay (Python 3 standard library only).

Started by tests/interop/run.sh, which builds or locates one agent per language:

  matrix.py --url REDIS_URL --cli target/debug/redelay --work DIR \
            --agent 'rust=target/debug/examples/interop_agent' --agent 'python=... agent.py' ...

Every agent speaks the command line of core/examples/interop_agent.rs (QUEUES may be a
comma-separated list, so that one process serves several queues):

  AGENT publish URL QUEUES SPEC_JSON_FILE              -> prints [{"queue","id","status"}]
  AGENT consume URL QUEUES N OUT_JSON_FILE [--nack R]  -> prints "ready", writes the deliveries

What is checked:

1. matrix: for every producer P and consumer C, on a fresh queue "P -> C": bodies (empty, all
   256 byte values, 1 MiB random, UTF-8 text), headers with Unicode names and values, explicit
   (Unicode) ids and a 300 ms delay arrive intact: body bytes, headers, id, attempt 1,
   max_attempts, due_at - published_at = the delay (+-50 ms), 0 <= lateness < 1 s,
   delivered_at >= due_at. Consumers are started (and ready) before anything is published, so
   lateness measures delivery, not process start-up. One consumer process per language serves
   its queues of every producer; one producer process per language publishes to all of its.
2. nack: a message published and nacked (retry in 0, with a Unicode reason) by language L is
   shown by `redelay peek` (CLI) with 1 attempt and the reason, then delivered to the next
   language with attempt 2 and the reason as last_error.
3. dead letter: a message with max_attempts 1 published and nacked by L is dead (CLI peek),
   respawned with `redelay dead respawn`, and consumed by a third language with attempt 1 and
   its body and headers intact.
4. features: expiry, pause, search and bulk across languages (`features`).
5. a lapsed lease: a message left leased by a consumer that exited is counted as leased and
   lapsed by the stats of every language alike, then delivered again (attempt 2).
6. every queue is empty at the end (`redelay stats --json`).

Prints one line per pair and ends with `interop: N passed, M failed` (N, M count checks).
"""

import argparse
import base64
import json
import os
import random
import select
import shlex
import subprocess
import sys
import time
import traceback
from typing import Any, Dict, Iterator, List, Optional, Tuple

ORDER = ["rust", "python", "node", "kotlin"]
DELAY_MS = 300
READY_TIMEOUT = 120.0  # a JVM starting on a busy machine
PROCESS_TIMEOUT = 90.0  # agents give up fetching after 30 s by themselves


class Checks:
    """Counts checks; remembers the failures of each named group (a pair)."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.failures: Dict[str, List[str]] = {}

    def check(self, group: str, ok: bool, what: str) -> bool:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.setdefault(group, []).append(what)
        return ok

    def report(self, group: str, label: str) -> None:
        f = self.failures.get(group)
        if not f:
            print(f"{label}: ok", flush=True)
        else:
            shown = "; ".join(f[:6]) + (f"; ... ({len(f)} failures)" if len(f) > 6 else "")
            print(f"{label}: FAILED: {shown}", flush=True)


def error_for(err: Optional[str], queue: str, queues: List[str]) -> Optional[str]:
    """The part of a consumer's error that concerns `queue`: the agents name the queue a
    problem is about; an error naming none of its queues concerns them all."""
    if not err:
        return None
    if queue in err or not any(q in err for q in queues):
        return err
    return None


def short(v: Any, n: int = 80) -> str:
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.url: str = args.url
        self.cli: str = args.cli
        self.work: str = args.work
        self.agents: Dict[str, List[str]] = {}
        for a in args.agent:
            name, _, cmd = a.partition("=")
            self.agents[name] = shlex.split(cmd)
        self.langs = [lang for lang in ORDER if lang in self.agents]
        self.run_id = f"{int(time.time())}-{os.getpid()}"
        self.checks = Checks()
        self.env = dict(os.environ)
        self.env.setdefault("LC_ALL", "C.UTF-8")
        self.rng = random.Random()
        self._pending: Dict[str, Tuple[subprocess.Popen, str]] = {}

    # -- processes ------------------------------------------------------------------------

    def queue(self, kind: str, *parts: str) -> str:
        return "-".join(["interop", self.run_id, kind, *parts])

    def path(self, name: str) -> str:
        return os.path.join(self.work, name)

    def start(self, lang: str, args: List[str], log: str) -> subprocess.Popen:
        err = open(self.path(log), "wb")
        try:
            return subprocess.Popen(
                self.agents[lang] + args, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, env=self.env
            )
        finally:
            err.close()

    def stderr_of(self, log: str) -> str:
        try:
            with open(self.path(log), "rb") as f:
                text = f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        lines = text.splitlines()
        return " | ".join(lines[-3:])

    def wait_ready(self, procs: Dict[str, Tuple[subprocess.Popen, str]]) -> Dict[str, Optional[str]]:
        """Waits for each consumer's `ready` line; returns an error (or None) per language."""
        deadline = time.monotonic() + READY_TIMEOUT
        result: Dict[str, Optional[str]] = {}
        pending = dict(procs)
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                for lang in pending:
                    result[lang] = f"no 'ready' within {READY_TIMEOUT:.0f} s"
                break
            by_fd = {p.stdout.fileno(): lang for lang, (p, _) in pending.items()}  # type: ignore[union-attr]
            r, _, _ = select.select(list(by_fd), [], [], min(left, 1.0))
            for fd in r:
                lang = by_fd[fd]
                p, log = pending.pop(lang)
                line = p.stdout.readline().decode("utf-8", "replace").strip()  # type: ignore[union-attr]
                result[lang] = None if line == "ready" else f"expected 'ready', got {line!r}; {self.stderr_of(log)}"
        return result

    def finish(self, p: subprocess.Popen, log: str) -> Tuple[int, str, str]:
        """Waits for an agent; returns (exit status, stdout, stderr tail)."""
        try:
            out, _ = p.communicate(timeout=PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            return -1, out.decode("utf-8", "replace"), f"killed after {PROCESS_TIMEOUT:.0f} s"
        return p.returncode, out.decode("utf-8", "replace"), self.stderr_of(log)

    def cli_run(self, *args: str) -> Tuple[int, str]:
        r = subprocess.run(
            [self.cli, "--url", self.url, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.env,
            timeout=60,
        )
        return r.returncode, r.stdout.decode("utf-8", "replace")

    def write_spec(self, name: str, spec: List[Dict[str, Any]]) -> str:
        path = self.path(name)
        wire = []
        for m in spec:
            wire.append(
                {
                    "id": m["id"],
                    "body_b64": base64.b64encode(m["body"]).decode("ascii"),
                    "headers": m["headers"],
                    "delay_ms": m["delay_ms"],
                    "max_attempts": m["max_attempts"],
                    **{k: m[k] for k in ("expires_in_ms", "drop_on_expiry", "ttr_ms") if k in m},
                }
            )
        with open(path, "w", encoding="utf-8") as f:
            json.dump(wire, f, ensure_ascii=False)
        return path

    def publish_all(
        self, jobs: Dict[str, Tuple[List[str], str, List[Dict[str, Any]]]], group_of: Dict[str, str]
    ) -> None:
        """Runs one publisher per language at once: jobs[lang] = (queues, spec file, spec);
        checks every message was stored, booking each check on the group of its queue."""
        procs = {}
        for lang, (queues, spec_file, _) in jobs.items():
            procs[lang] = self.start(lang, ["publish", self.url, ",".join(queues), spec_file], f"publish-{lang}.log")
        for lang, p in procs.items():
            queues, _, spec = jobs[lang]
            code, out, err = self.finish(p, f"publish-{lang}.log")
            first = group_of[queues[0]]
            if not self.checks.check(first, code == 0, f"{lang} publish exited {code}: {err}"):
                continue
            try:
                got = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                self.checks.check(first, False, f"{lang} publish printed no JSON list: {short(out)}")
                continue
            seen = {(r.get("queue"), r.get("id")): r.get("status") for r in got}
            for q in queues:
                for m in spec:
                    status = seen.get((q, m["id"]))
                    self.checks.check(
                        group_of[q], status == "stored", f"publish of {m['id']!r} by {lang}: status {status!r}"
                    )

    def consume(self, jobs: Dict[str, Tuple[List[str], int, List[str]]], tag: str) -> None:
        """Starts one consumer per language (jobs[lang] = (queues, n per queue, how to settle:
        [] acks, ["--nack", REASON] nacks, ["--leave"] leaves them leased));
        `wait_ready(self._pending)` waits for them to be ready, `collect` for their end."""
        procs = {}
        for lang, (queues, n, settle) in jobs.items():
            out = self.path(f"{tag}-{lang}.json")
            args = ["consume", self.url, ",".join(queues), str(n), out, *settle]
            procs[lang] = (self.start(lang, args, f"{tag}-{lang}.log"), f"{tag}-{lang}.log")
        self._pending = procs

    def collect(self, tag: str) -> Dict[str, Tuple[Optional[str], List[Dict[str, Any]]]]:
        """Waits for the consumers started by `consume`; returns (error, deliveries) per language."""
        result = {}
        for lang, (p, log) in self._pending.items():
            code, _, err = self.finish(p, log)
            records: List[Dict[str, Any]] = []
            try:
                with open(self.path(f"{tag}-{lang}.json"), encoding="utf-8") as f:
                    records = json.load(f)
            except (OSError, ValueError) as e:
                err = f"{err} | no output: {e}"
            result[lang] = (None if code == 0 else f"{lang} consume exited {code}: {err}", records)
        return result

    def consume_for(
        self, tag: str, q: Dict[Any, str], consumer: Dict[Any, str], n: int, settle: Optional[List[str]] = None
    ) -> None:
        """`consume` with one consumer per language c, of the queues q[k] whose consumer[k] is c
        (in the order of q); `delivered` waits for them."""
        self.consume({c: ([q[k] for k in q if consumer[k] == c], n, settle or []) for c in self.langs}, tag)

    def delivered(
        self, tag: str, q: Dict[Any, str], consumer: Dict[Any, str], group: Dict[Any, str]
    ) -> Iterator[Tuple[Any, str, List[Dict[str, Any]]]]:
        """Waits for the consumers `consume_for(tag, q, consumer, ...)` started; books each
        consumer's error on the group of every queue it concerns, and yields (k, the consumer,
        the records it got from q[k]) for every k, consumer by consumer."""
        for c, (err, records) in self.collect(tag).items():
            keys = [k for k in q if consumer[k] == c]
            for k in keys:
                e = error_for(err, q[k], [q[x] for x in keys])
                if e:
                    self.checks.check(group[k], False, e)
                yield k, c, [r for r in records if r.get("queue") == q[k]]

    # -- checks of one delivery -----------------------------------------------------------

    def check_delivery(
        self, group: str, want: Dict[str, Any], got: Dict[str, Any], queue: str, attempt: int, timing: bool
    ) -> None:
        c = self.checks.check
        mid = want["id"]
        c(group, got.get("queue") == queue, f"{mid!r}: queue {got.get('queue')!r}")
        try:
            body = base64.b64decode(got.get("body_b64") or "", validate=True)
        except ValueError:
            body = None
        if body is None or body != want["body"]:
            detail = "undecodable" if body is None else f"{len(body)} bytes, {short(body[:24])}"
            c(group, False, f"{mid!r}: body differs (want {len(want['body'])} bytes, got {detail})")
        else:
            c(group, True, "")
        c(group, got.get("headers") == want["headers"], f"{mid!r}: headers {short(got.get('headers'))}")
        c(group, got.get("attempt") == attempt, f"{mid!r}: attempt {got.get('attempt')!r}, want {attempt}")
        c(group, got.get("max_attempts") == want["max_attempts"], f"{mid!r}: max_attempts {got.get('max_attempts')!r}")
        pub, due, dlv, late = (got.get(k) for k in ("published_at_ms", "due_at_ms", "delivered_at_ms", "lateness_ms"))
        if not all(isinstance(x, (int, float)) for x in (pub, due, dlv, late)):
            c(group, False, f"{mid!r}: times missing: {pub!r} {due!r} {dlv!r} {late!r}")
            return
        c(group, dlv >= due, f"{mid!r}: delivered_at {dlv} before due_at {due}")
        c(group, late >= 0, f"{mid!r}: lateness {late} ms < 0")
        # lateness is delivered_at - due_at; Node's Date cuts delivered_at to whole ms
        c(group, abs((dlv - due) - late) <= 1.5, f"{mid!r}: lateness {late} ms vs delivered_at - due_at {dlv - due} ms")
        if timing:
            c(
                group,
                abs((due - pub) - want["delay_ms"]) <= 50,
                f"{mid!r}: due_at - published_at = {due - pub} ms, want {want['delay_ms']}",
            )
            c(group, late < 1000, f"{mid!r}: lateness {late} ms")

    def the_one(
        self, group: str, c: str, mine: List[Dict[str, Any]], want: Dict[str, Any], queue: str, attempt: int
    ) -> Optional[Dict[str, Any]]:
        """Checks that consumer c got `want` and nothing else from `queue`, intact, as attempt
        `attempt`; returns that delivery (None when c did not get exactly it)."""
        ids = [r.get("id") for r in mine]
        if not self.checks.check(group, ids == [want["id"]], f"{c} got {ids}"):
            return None
        self.check_delivery(group, want, mine[0], queue, attempt=attempt, timing=False)
        return mine[0]

    def next_and_third(self) -> Tuple[Dict[str, str], Dict[str, str]]:
        """For each language, the next one (in ORDER, wrapping around) and the one after that."""
        langs = self.langs
        nxt = {lang: langs[(i + 1) % len(langs)] for i, lang in enumerate(langs)}
        return nxt, {lang: nxt[nxt[lang]] for lang in langs}

    # -- 1. the matrix ----------------------------------------------------------------------

    def matrix_spec(self, producer: str) -> List[Dict[str, Any]]:
        big = self.rng.randbytes(1 << 20) if hasattr(self.rng, "randbytes") else os.urandom(1 << 20)
        unicode_headers = {"clé-✓": "välue ☃ 日本", "emoji-😀": "🚀 ünïcødé", "empty": "", "from": producer}
        return [
            {"id": "empty-body", "body": b"", "headers": {}, "delay_ms": DELAY_MS, "max_attempts": 5},
            {
                "id": "binary-ÿ-✓-日本",
                "body": bytes(range(256)),
                "headers": unicode_headers,
                "delay_ms": DELAY_MS,
                "max_attempts": 7,
            },
            {
                "id": "big-1MiB",
                "body": big,
                "headers": {"size": str(len(big)), "Ünïcode Kéy": "値"},
                "delay_ms": DELAY_MS,
                "max_attempts": 3,
            },
            {
                "id": "text-utf8",
                "body": "héllo wörld ☃ 日本語 🚀\n".encode(),
                "headers": {"content-type": "text/plain; charset=utf-8", "ключ": "значение"},
                "delay_ms": DELAY_MS,
                "max_attempts": 10,
            },
        ]

    def matrix(self) -> None:
        langs = self.langs
        q = {(p, c): self.queue("m", p, "to", c) for p in langs for c in langs}
        group_of = {q[k]: f"{k[0]} -> {k[1]}" for k in q}
        specs = {p: self.matrix_spec(p) for p in langs}
        files = {p: self.write_spec(f"spec-{p}.json", specs[p]) for p in langs}
        n = len(specs[langs[0]])

        consumer = {k: k[1] for k in q}
        self.consume_for("matrix", q, consumer, n)
        ready = self.wait_ready(self._pending)
        for c, err in ready.items():
            if err:
                for p in langs:
                    self.checks.check(group_of[q[(p, c)]], False, f"{c} consumer: {err}")
        self.publish_all({p: ([q[(p, c)] for c in langs], files[p], specs[p]) for p in langs}, group_of)
        for (p, c), _, mine in self.delivered("matrix", q, consumer, {k: group_of[q[k]] for k in q}):
            group = group_of[q[(p, c)]]
            by_id: Dict[str, List[Dict[str, Any]]] = {}
            for r in mine:
                by_id.setdefault(r.get("id"), []).append(r)
            for m in specs[p]:
                got = by_id.pop(m["id"], [])
                if not self.checks.check(group, len(got) == 1, f"{m['id']!r} delivered {len(got)} times"):
                    continue
                self.check_delivery(group, m, got[0], q[(p, c)], attempt=1, timing=True)
            self.checks.check(group, not by_id, f"unexpected ids {sorted(by_id)}")
        for p in langs:
            for c in langs:
                self.checks.report(group_of[q[(p, c)]], group_of[q[(p, c)]])

    # -- 2 and 3. nack and dead letters ---------------------------------------------------

    def peek(self, group: str, queue: str, mid: str) -> Dict[str, str]:
        code, out = self.cli_run("peek", queue, mid)
        self.checks.check(group, code == 0, f"redelay peek {mid!r} exited {code}: {short(out, 200)}")
        fields: Dict[str, str] = {}
        for line in out.splitlines():
            k, sep, v = line.partition(":")
            if sep:
                fields.setdefault(k.strip(), v.strip())
        return fields

    def nack_and_dead(self) -> None:
        langs = self.langs
        nxt, third = self.next_and_third()
        q = {lang: self.queue("x", lang) for lang in langs}
        g_nack = {lang: f"{lang} nack -> {nxt[lang]} (attempt 2)" for lang in langs}
        g_dead = {lang: f"{lang} dead letter -> cli respawn -> {third[lang]}" for lang in langs}
        reason = {lang: f"nacked by {lang}: ✗ échec 失敗" for lang in langs}
        specs: Dict[str, List[Dict[str, Any]]] = {}
        for lang in langs:
            specs[lang] = [
                {
                    "id": f"nack-{lang}-✓",
                    "body": b"retry me \x00\xff" + lang.encode(),
                    "headers": {"stage": "nack", "clé": "välue ☃"},
                    "delay_ms": 0,
                    "max_attempts": 3,
                },
                {
                    "id": f"dead-{lang}-☠",
                    "body": bytes(range(255, -1, -1)),
                    "headers": {"stage": "dead", "日本": "語"},
                    "delay_ms": 0,
                    "max_attempts": 1,
                },
            ]
        group_of = {q[lang]: g_nack[lang] for lang in langs}
        self.publish_all(
            {lang: ([q[lang]], self.write_spec(f"spec-x-{lang}.json", specs[lang]), specs[lang]) for lang in langs},
            group_of,
        )

        # L nacks both: the first is retried (attempt 1 of 3), the second dies (1 of 1).
        self.consume({lang: ([q[lang]], 2, ["--nack", reason[lang]]) for lang in langs}, "nack")
        for lang, (err, records) in self.collect("nack").items():
            for g in (g_nack[lang], g_dead[lang]):
                if err:
                    self.checks.check(g, False, err)
            ids = sorted(r.get("id") for r in records)
            self.checks.check(
                g_nack[lang], ids == sorted(m["id"] for m in specs[lang]), f"{lang} first consume got {ids}"
            )
            for r in records:
                want = next((m for m in specs[lang] if m["id"] == r.get("id")), None)
                g = g_nack[lang] if want is specs[lang][0] else g_dead[lang]
                if want is not None:
                    self.check_delivery(g, want, r, q[lang], attempt=1, timing=False)

        for lang in langs:
            nack_id, dead_id = specs[lang][0]["id"], specs[lang][1]["id"]
            f = self.peek(g_nack[lang], q[lang], nack_id)
            self.checks.check(
                g_nack[lang], f.get("state") in ("scheduled", "ready"), f"peek {nack_id!r}: state {f.get('state')!r}"
            )
            self.checks.check(
                g_nack[lang], f.get("attempts") == "1 of 3", f"peek {nack_id!r}: attempts {f.get('attempts')!r}"
            )
            self.checks.check(
                g_nack[lang],
                f.get("last error") == reason[lang],
                f"peek {nack_id!r}: last error {f.get('last error')!r}",
            )
            f = self.peek(g_dead[lang], q[lang], dead_id)
            self.checks.check(g_dead[lang], f.get("state") == "dead", f"peek {dead_id!r}: state {f.get('state')!r}")
            self.checks.check(
                g_dead[lang],
                f.get("last error") == reason[lang],
                f"peek {dead_id!r}: last error {f.get('last error')!r}",
            )

        # The next language gets the nacked message again: attempt 2, with the reason.
        self.consume_for("redeliver", q, nxt, 1)
        for lang, c, mine in self.delivered("redeliver", q, nxt, g_nack):
            got = self.the_one(g_nack[lang], c, mine, specs[lang][0], q[lang], attempt=2)
            if got is not None:
                last = got.get("last_error")
                self.checks.check(g_nack[lang], last == reason[lang], f"last_error {last!r}")

        # The dead letter, respawned with the CLI, goes to a third language.
        for lang in langs:
            dead_id = specs[lang][1]["id"]
            code, out = self.cli_run("dead", "respawn", q[lang], dead_id)
            self.checks.check(
                g_dead[lang],
                code == 0 and out.strip() == "respawned 1",
                f"redelay dead respawn: {code} {short(out, 200)}",
            )
        self.consume_for("respawned", q, third, 1)
        for lang, c, mine in self.delivered("respawned", q, third, g_dead):
            self.the_one(g_dead[lang], c, mine, specs[lang][1], q[lang], attempt=1)

        for lang in langs:
            self.checks.report(g_nack[lang], g_nack[lang])
        for lang in langs:
            self.checks.report(g_dead[lang], g_dead[lang])

    # -- 4. expiry, pause, search and bulk across languages ---------------------------------

    def admin(self, group: str, lang: str, queue: str, op: str, arg: Dict[str, Any]) -> Dict[str, Any]:
        """Runs `AGENT admin` (pause, resume, search, bulk) and returns the JSON it printed."""
        log = f"admin-{op}-{lang}-{queue[-12:]}.log"
        p = self.start(lang, ["admin", self.url, queue, op, json.dumps(arg, ensure_ascii=False)], log)
        code, out, err = self.finish(p, log)
        if not self.checks.check(group, code == 0, f"{lang} admin {op} exited {code}: {err}"):
            return {}
        try:
            v = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            v = None
        self.checks.check(group, isinstance(v, dict), f"{lang} admin {op} printed no JSON object: {short(out)}")
        return v if isinstance(v, dict) else {}

    def stats(self, group: str, queue: str) -> Dict[str, Any]:
        code, out = self.cli_run("stats", "--json", queue)
        rows: List[Dict[str, Any]] = []
        if self.checks.check(group, code == 0, f"redelay stats exited {code}: {short(out, 200)}"):
            rows = stats_rows(out)
        return rows[0] if rows else {}

    def features(self) -> None:
        """L publishes messages with an expiry to a queue that M paused; N consumes. While paused
        nothing is leased; M's search finds L's messages by a Unicode header; M resumes; L's bulk
        deliver_now sends the delayed ones to N; the expired ones are never handed to N (a dead
        letter "expired", or gone with drop_on_expiry), and the kept expiry reads back right."""
        langs = self.langs
        nxt, third = self.next_and_third()
        q = {lang: self.queue("f", lang) for lang in langs}
        g = {lang: f"{lang} expiry + bulk, {nxt[lang]} pause + search + resume -> {third[lang]}" for lang in langs}
        tenant = {lang: f"ténant ☂ {lang}" for lang in langs}
        specs: Dict[str, List[Dict[str, Any]]] = {}
        for lang in langs:
            base = {"delay_ms": 0, "max_attempts": 3}
            specs[lang] = [
                {**base, "id": f"expire-{lang}", "body": b"too late", "headers": {}, "expires_in_ms": 200},
                {
                    **base,
                    "id": f"drop-{lang}",
                    "body": b"too late, drop",
                    "headers": {},
                    "expires_in_ms": 200,
                    "drop_on_expiry": True,
                },
                {**base, "id": f"held-{lang}", "body": b"held while paused", "headers": {}},
            ] + [
                {
                    "id": f"later-{lang}-{i}",
                    "body": f"later {i} ✓".encode(),
                    "headers": {"tenant": tenant[lang]},
                    "delay_ms": 3_600_000,
                    "max_attempts": 3,
                    "expires_in_ms": 7_200_000,
                }
                for i in (1, 2)
            ]
        for lang in langs:
            r = self.admin(g[lang], nxt[lang], q[lang], "pause", {})
            self.checks.check(g[lang], r.get("changed") is True, f"{nxt[lang]} pause printed {r}")
        self.publish_all(
            {lang: ([q[lang]], self.write_spec(f"spec-f-{lang}.json", specs[lang]), specs[lang]) for lang in langs},
            {q[lang]: g[lang] for lang in langs},
        )
        # Each consumer runs while its queue is paused: the expiries (200 ms) pass meanwhile.
        self.consume_for("features", q, third, 3)
        for c, err in self.wait_ready(self._pending).items():
            for lang in [lang for lang in langs if third[lang] == c]:
                self.checks.check(g[lang], err is None, f"{c} consumer: {err}")
        time.sleep(1.5)
        for lang in langs:
            st = self.stats(g[lang], q[lang])
            self.checks.check(g[lang], st.get("paused") is True, f"stats while paused: {st}")
            self.checks.check(g[lang], st.get("leased") == 0, f"leased while paused: {st}")
            self.checks.check(g[lang], st.get("total") == 5, f"total while paused: {st}")
            peeked = self.peek(g[lang], q[lang], f"later-{lang}-1")
            self.checks.check(g[lang], "expires" in peeked, f"peek of a message with an expiry: {peeked}")
            want = sorted(m["id"] for m in specs[lang][3:])
            r = self.admin(g[lang], nxt[lang], q[lang], "search", {"header": ["tenant", tenant[lang]]})
            self.checks.check(g[lang], sorted(r.get("ids") or []) == want, f"{nxt[lang]} search found {r}")
            r = self.admin(g[lang], nxt[lang], q[lang], "resume", {})
            self.checks.check(g[lang], r.get("changed") is True, f"{nxt[lang]} resume printed {r}")
            r = self.admin(
                g[lang], lang, q[lang], "bulk", {"action": "deliver_now", "header": ["tenant", tenant[lang]]}
            )
            self.checks.check(g[lang], r == {"matched": 2, "done": 2}, f"{lang} bulk deliver_now printed {r}")

        for lang, c, mine in self.delivered("features", q, third, g):
            got = sorted(r.get("id") for r in mine)
            want = sorted(m["id"] for m in specs[lang][2:])
            self.checks.check(g[lang], got == want, f"{c} got {got}, want {want}")
            for r in mine:
                m = next((m for m in specs[lang] if m["id"] == r.get("id")), None)
                if m is not None:
                    self.check_delivery(g[lang], m, r, q[lang], attempt=1, timing=False)

        for lang in langs:
            f = self.peek(g[lang], q[lang], f"expire-{lang}")
            self.checks.check(g[lang], f.get("state") == "dead", f"expired message: state {f.get('state')!r}")
            self.checks.check(
                g[lang], (f.get("last error") or "").startswith("expired:"), f"expired: {f.get('last error')!r}"
            )
            code, out = self.cli_run("peek", q[lang], f"drop-{lang}")
            self.checks.check(g[lang], code == 1, f"dropped message still there: {code} {short(out, 200)}")
            code, out = self.cli_run("dead", "purge", q[lang], "--all", "--yes")
            self.checks.check(g[lang], code == 0, f"redelay dead purge: {code} {short(out, 200)}")
            self.checks.report(g[lang], g[lang])

    # -- 5. a lease that lapsed ---------------------------------------------------------------

    def lapsed(self) -> None:
        """L publishes a message with a 300 ms lease; the next language fetches it and exits
        without settling it; once the lease has passed, every language's stats count it as
        leased and lapsed (the same numbers everywhere); a third language then takes it back:
        attempt 2, with the core's "lease expired" reason as last error."""
        langs = self.langs
        nxt, third = self.next_and_third()
        q = {lang: self.queue("l", lang) for lang in langs}
        g = {
            lang: f"{lang} ttr 300 ms, {nxt[lang]} leaves it leased, lapsed everywhere -> {third[lang]}"
            for lang in langs
        }
        specs = {
            lang: [
                {
                    "id": f"lapse-{lang}",
                    "body": f"left leased by {nxt[lang]} ✓".encode(),
                    "headers": {"from": lang},
                    "delay_ms": 0,
                    "max_attempts": 3,
                    "ttr_ms": 300,
                }
            ]
            for lang in langs
        }
        self.publish_all(
            {lang: ([q[lang]], self.write_spec(f"spec-l-{lang}.json", specs[lang]), specs[lang]) for lang in langs},
            {q[lang]: g[lang] for lang in langs},
        )
        self.consume_for("leave", q, nxt, 1, ["--leave"])
        for lang, c, mine in self.delivered("leave", q, nxt, g):
            self.the_one(g[lang], c, mine, specs[lang][0], q[lang], attempt=1)

        # The leases end 300 ms after the fetches (Redis clock): wait until the CLI sees all
        # four lapsed (at most 20 s on a busy machine), then ask every language.
        queues = [q[lang] for lang in langs]
        deadline = time.monotonic() + 20
        while True:
            _, out = self.cli_run("stats", "--json", *queues)
            rows = stats_rows(out)
            if sum(r.get("lapsed", 0) for r in rows) == len(queues) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        want = {"total": 1, "scheduled": 0, "ready": 0, "leased": 1, "lapsed": 1, "dead": 0}
        for asker in langs:
            seen = self.admin(g[langs[0]], asker, ",".join(queues), "stats", {})
            for lang in langs:
                got = seen.get(q[lang])
                self.checks.check(g[lang], got == want, f"{asker} stats: {got}, want {want}")

        self.consume_for("lapsed", q, third, 1)
        for lang, c, mine in self.delivered("lapsed", q, third, g):
            got = self.the_one(g[lang], c, mine, specs[lang][0], q[lang], attempt=2)
            if got is not None:
                last = got.get("last_error") or ""
                self.checks.check(g[lang], last.startswith("lease expired"), f"{c} last_error {last!r}")
        for lang in langs:
            self.checks.report(g[lang], g[lang])

    # -- 6. nothing left ------------------------------------------------------------------

    def all_empty(self) -> None:
        langs = self.langs
        queues = [self.queue("m", p, "to", c) for p in langs for c in langs] + [self.queue("x", lang) for lang in langs]
        queues += [self.queue("f", lang) for lang in langs] + [self.queue("l", lang) for lang in langs]
        group = "every queue empty at the end"
        code, out = self.cli_run("stats", "--json", *queues)
        if self.checks.check(group, code == 0, f"redelay stats exited {code}: {short(out, 200)}"):
            rows = stats_rows(out)
            left = {r["queue"]: r["total"] for r in rows if r.get("total")}
            self.checks.check(group, len(rows) == len(queues), f"stats listed {len(rows)} of {len(queues)} queues")
            self.checks.check(group, not left, f"messages left: {left}")
        self.checks.report(group, group)


def stats_rows(out: str) -> List[Dict[str, Any]]:
    """The rows of `redelay stats --json` (`{"queues": [{"queue", "stats"}]}`), each a queue's
    counts with its name as `queue`; none when it printed no such JSON."""
    try:
        queues = json.loads(out)["queues"]
    except (ValueError, KeyError, TypeError):
        return []
    return [{"queue": r["queue"], **r["stats"]} for r in queues]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("REDIS_URL"))
    ap.add_argument("--cli", required=True, help="the redelay CLI binary")
    ap.add_argument("--work", required=True, help="a directory for specs, outputs and logs")
    ap.add_argument("--agent", action="append", default=[], help="NAME=COMMAND (shell words)")
    ap.add_argument("--failed", action="append", default=[], help="LANG: WHY, a language that failed to build")
    args = ap.parse_args()
    if not args.url:
        ap.error("--url or REDIS_URL is required")
    run = Run(args)
    for f in args.failed:
        lang, _, why = f.partition(":")
        run.checks.check(f"{lang} agent", False, why.strip())
        run.checks.report(f"{lang} agent", f"{lang} agent")
    if not run.langs:
        print("interop: no language agent available")
        print(f"interop: {run.checks.passed} passed, {run.checks.failed + 1} failed")
        return 1
    os.makedirs(run.work, exist_ok=True)
    started = time.monotonic()
    print(f"interop: languages {', '.join(run.langs)}; queues interop-{run.run_id}-*", flush=True)
    c = run.checks
    try:
        run.matrix()
        run.nack_and_dead()
        run.features()
        run.lapsed()
        run.all_empty()
    except Exception:  # a bug of the orchestrator still ends with the summary line
        traceback.print_exc(file=sys.stdout)
        c.check("matrix.py", False, "crashed")
    where = f" (specs, outputs and agent logs in {run.work})" if c.failed else ""
    print(f"interop: done in {time.monotonic() - started:.1f} s{where}", flush=True)
    print(f"interop: {c.passed} passed, {c.failed} failed", flush=True)
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
