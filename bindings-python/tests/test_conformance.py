"""The conformance table (tests/conformance/cases.json) through the Python API: every case,
with the error kind and words it must raise; an operation the binding lacks fails the run."""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional

import redelay

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "conformance", "cases.json")


def ms(a: Dict[str, Any], k: str) -> Optional[timedelta]:
    return None if k not in a else timedelta(milliseconds=a[k])


def time(a: Dict[str, Any], k: str) -> Optional[datetime]:
    return None if k not in a else datetime.fromtimestamp(a[k] / 1000, timezone.utc)


def at(a: Dict[str, Any]) -> Optional[datetime]:
    return time(a, "at_ms")


def search(s: Dict[str, Any]) -> Any:
    """A wire-form search as the keyword arguments of ``search``/``bulk``."""
    return {k: tuple(v) if k == "header" else v for k, v in s.items()}


def publish_kwargs(a: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "delay": ms(a, "delay_ms"),
        "at": at(a),
        "id": a.get("id"),
        "headers": a.get("headers"),
        "max_attempts": a.get("max_attempts"),
        "ttr": ms(a, "ttr_ms"),
        "expires_in": ms(a, "expires_in_ms"),
        "expires_at": time(a, "expires_at_ms"),
        "drop_on_expiry": a.get("drop_on_expiry", False),
        "backoff": backoff(a, "backoff"),
    }


def backoff(a: Dict[str, Any], field: str) -> Any:
    """``field``'s pair (base, max) in seconds from its two wire fields, or None."""
    return (ms(a, f"{field}_base_ms"), ms(a, f"{field}_max_ms")) if f"{field}_base_ms" in a else None


def run(op: str, a: Dict[str, Any], client: redelay.Client, q: redelay.Queue, url: str) -> Any:
    if op == "connect":
        c = redelay.Client(
            a["url"].replace("$REDIS_URL", url),
            prefix=a.get("prefix"),
            max_body_bytes=a.get("max_body_bytes"),
            default_max_attempts=a.get("default_max_attempts"),
            default_ttr=ms(a, "default_ttr_ms"),
            connect_timeout=ms(a, "connect_timeout_ms"),
            default_backoff=backoff(a, "default_backoff"),
        )
        c.close()
        return None
    if op == "queue":
        client.queue(a["name"], shards=a.get("shards", 1))
        return None
    if op == "publish":
        return q.publish("x", **publish_kwargs(a)).status
    if op == "publish_batch":
        items: Any = [{"body": m["body"], **publish_kwargs(m)} for m in a["messages"]]
        return [p.status for p in q.publish_batch(items)]
    if op == "fetch":
        return len(q.fetch(a.get("max", 1), wait=ms(a, "wait_ms") or 0))
    if op == "ack":
        return q.ack(a["id"], a["token"])
    if op == "nack":
        return q.nack(a["id"], a["token"], retry_in=ms(a, "retry_in_ms"), reason=a["reason"])
    if op == "release":
        return q.release(a["id"], a["token"])
    if op == "extend":
        return q.extend(a["id"], a["token"], ms(a, "ttr_ms") or 0)
    if op == "cancel":
        return q.cancel(a["id"])
    if op == "reschedule":
        q.reschedule(a["id"], delay=ms(a, "delay_ms"), at=at(a))
        return None
    if op == "peek":
        m = q.peek(a["id"])
        return None if m is None else m.id
    if op == "stats":
        s = q.stats()
        return {"total": s.total, "scheduled": s.scheduled, "ready": s.ready, "leased": s.leased, "dead": s.dead}
    if op == "verify":
        return {"problems": len(q.verify().problems)}
    if op == "dead_letters":
        return len(q.dead_letters(a.get("limit")))
    if op == "respawn":
        expires_in = ms(a, "expires_in_ms")
        return q.respawn(
            a.get("ids"),
            oldest=a.get("oldest"),
            all=a.get("all", False),
            expires_in=expires_in,
            clear_expiry=a.get("clear_expiry", False),
        )
    if op == "purge_dead":
        return q.purge_dead(a.get("ids"), oldest=a.get("oldest"), all=a.get("all", False))
    if op == "subscribe":
        with q.subscribe(
            lambda m: None,
            concurrency=a.get("concurrency"),
            prefetch=a.get("prefetch"),
            ttr=ms(a, "ttr_ms"),
            max_idle=ms(a, "max_idle_ms"),
        ):
            return "subscribed"
    if op == "destroy":
        return q.destroy()
    if op == "subscribe_many":
        qs = a["queues"] if "weights" not in a else dict(zip(a["queues"], a["weights"]))
        with client.subscribe(qs, lambda m: None, concurrency=a.get("concurrency")):
            return "subscribed"
    if op in ("pause", "resume"):
        return getattr(q, op)()
    if op == "set_history":
        return q.set_history(a["on"])
    if op == "history":
        since = datetime.fromtimestamp(a["since_ms"] / 1000, timezone.utc)
        return len(q.history(since, time(a, "until_ms"), a["step"]))
    if op == "upcoming":
        return len(q.upcoming(ms(a, "width_ms") or 0, a["buckets"], start=time(a, "from_ms")))
    if op == "list":
        page = q.list(a["state"], offset=a.get("offset", 0), limit=a["limit"])
        return {"total": page.total, "items": len(page.items)}
    if op == "search":
        found = q.search(cursor=a.get("cursor"), **search(a["search"]))
        return {"items": len(found.items), "done": found.cursor is None}
    if op == "bulk":
        where = search(a.get("search", {}))
        r = q.bulk(a["action"], a.get("ids"), delay=ms(a, "delay_ms"), at=time(a, "at_ms"), **where)
        return {"matched": r.matched, "done": r.done}
    raise AssertionError(f"the Python API has no operation {op!r} of the conformance table")


def test_every_case_of_the_conformance_table(url: str, prefix: str) -> None:
    with open(TABLE) as f:
        table = json.load(f)
    cases = table["cases"]
    failures = []
    with redelay.Client(url, prefix=prefix) as client:
        for i, case in enumerate(cases):
            op, a, expect = case["op"], case["args"], case["expect"]
            q = client.queue(f"c{i}-{uuid.uuid4().hex[:8]}")
            try:
                got: Any = ("result", run(op, a, client, q, url))
            except redelay.RedelayError as e:
                got = ("error", e.kind, str(e))
            if "error" in expect:
                ok = got[0] == "error" and got[1] == expect["error"] and all(w in got[2] for w in expect["message"])
            else:
                ok = got == ("result", expect["result"])
            if not ok:
                failures.append(f"case {i} {op} {a}: got {got}, expected {expect}")
            q.destroy()
    for op in table["operations"]:
        assert any(c["op"] == op for c in cases), f"no case for {op}"
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)
