"""The conformance table (tests/conformance/cases.json) through the Python API: every case,
with the error kind and words it must raise; an operation the binding lacks fails the run."""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Mapping, Optional

import redelay

from conftest import run as run_async

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "conformance", "cases.json")


def ms(a: Dict[str, Any], k: str) -> Optional[timedelta]:
    return None if k not in a else timedelta(milliseconds=a[k])


def spelled(word: str) -> str:
    """A word of the table as Python's messages spell it: no unit (``at``, not ``at_ms``),
    ``start`` for the keyword ``from``, and a value given in seconds (``base (5 s)``, not
    ``base (5000 ms)``; the core's ``Spelling::Python``)."""
    word = re.sub(r"\((\d+) ms\)", lambda m: f"({int(m[1]) / 1000:g} s)", word)
    return "start" if word == "from" else word.replace("_ms", "")


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
        more = [a["max"]] if "max" in a else []  # else the default
        return len(q.fetch(*more, wait=ms(a, "wait_ms") or 0))
    if op == "messages":
        # The stream first (its options are checked before anything is published), then the
        # message it is to hand out.
        with q.messages(batch=a.get("batch"), wait=ms(a, "wait_ms"), ttr=ms(a, "ttr_ms")) as stream:
            q.publish(a["body"])
            got = next(stream)
            got.ack()
            return got.body.decode()
    if op == "fetch_first":
        more = [a["max"]] if "max" in a else []  # else the default
        return len(client.fetch(a["queues"], *more, wait=ms(a, "wait_ms") or 0, ttr=ms(a, "ttr_ms")))
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
        return {f: getattr(s, f) for f in ("total", "scheduled", "ready", "leased", "lapsed", "dead")}
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
        page = q.list(a["state"], **{k: a[k] for k in ("offset", "limit") if k in a})  # else the defaults
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
                words = [spelled(w) for w in expect["message"]]
                ok = got[0] == "error" and got[1] == expect["error"] and all(w in got[2] for w in words)
            else:
                ok = got == ("result", expect["result"])
            if not ok:
                failures.append(f"case {i} {op} {a}: got {got}, expected {expect}")
            q.destroy()
    for op in table["operations"]:
        assert any(c["op"] == op for c in cases), f"no case for {op}"
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)


#: Table fields (cases.json "results") that Python names otherwise, by kind: none. A duration
#: (ttr, lateness, lateness_sum) is a ``timedelta`` and a time (published_at ...) an aware
#: ``datetime``, named as the table names them (without ``_ms``); ``settled`` is a property of
#: the same name. Add an entry {"kind": {"table_field": "python_name"}} only for a name that
#: differs by design.
ALIASES: Dict[str, Dict[str, str]] = {}


def missing_fields(results: Mapping[str, Any], kind: str, value: Any) -> List[str]:
    """The fields the table lists for ``kind`` that ``value`` lacks (an attribute that is None
    is present: only its absence counts)."""
    names = ALIASES.get(kind, {})
    return [f for f in results[kind] if not hasattr(value, names.get(f, f))]


def check_fields(results: Mapping[str, Any], values: Mapping[str, Any]) -> List[str]:
    """One line per kind of ``values`` that lacks some of its table fields."""
    out = []
    for kind, value in values.items():
        lacking = missing_fields(results, kind, value)
        if lacking:
            out.append(f"{kind} ({type(value).__name__}) lacks {', '.join(lacking)}")
    return out


def test_every_value_has_the_fields_of_the_table(url: str, prefix: str) -> None:
    """Each kind of value the API returns, obtained from a real queue, has every field the
    table's "results" lists for it (Python may add derived ones: ok, duplicate); a delivery's
    expiry is the one ``peek`` shows. Both delivery types are checked: the blocking
    ``SyncMessage`` and the asyncio ``Message``."""
    with open(TABLE) as f:
        results = {k: v for k, v in json.load(f)["results"].items() if k != "about"}
    name = f"fields-{uuid.uuid4().hex[:8]}"
    values: Dict[str, Any] = {}
    with redelay.Client(url, prefix=prefix) as client:
        q = client.queue(name)
        values["published"] = q.publish(b"x", id="a", expires_in=600)
        values["stats"] = q.stats()
        info = q.peek("a")
        assert info is not None
        values["message_info"] = info
        values["verify_report"] = q.verify()
        values["history_point"] = q.history_totals()
        values["list_page"] = q.list(redelay.State.READY, limit=10)
        values["search_page"] = q.search(id_prefix="a")
        values["bulk_report"] = q.bulk("cancel", ["none"])
        [sync_delivery] = q.fetch(1)
        assert isinstance(sync_delivery, redelay.SyncMessage)
        failures = check_fields(results, {**values, "delivery": sync_delivery})
        sync_expiry = (sync_delivery.expires_at, info.expires_at)
        sync_delivery.ack()
        # Subscribed after the ack: the queue is empty, the handler never runs.
        with q.subscribe(lambda m: None) as sub:
            pass
        failures += check_fields(results, {"counters": sub.counters()})

        async def delivered() -> Any:
            ac = await redelay.AsyncClient.connect(url, prefix=prefix)
            try:
                aq = ac.queue(name)
                await aq.publish(b"y", id="b", expires_in=600)
                peeked = await aq.peek("b")
                assert peeked is not None
                [m] = await aq.fetch(1)
                assert isinstance(m, redelay.Message)
                lacking = check_fields(results, {"delivery": m})
                expiry = (m.expires_at, peeked.expires_at)
                await m.ack()
                return lacking, expiry
            finally:
                await ac.close()

        async_failures, async_expiry = run_async(delivered)
        failures += async_failures
        q.destroy()
    assert set(results) == {*values, "counters", "delivery"}, "the table's kinds and those this test obtains differ"
    assert not failures, "values lacking fields of the table:\n" + "\n".join(failures)
    assert sync_expiry[0] is not None and sync_expiry[0] == sync_expiry[1], f"SyncMessage expires_at {sync_expiry}"
    assert async_expiry[0] is not None and async_expiry[0] == async_expiry[1], f"Message expires_at {async_expiry}"
