"""Issue 15 through Python: expiry, pause/resume, several queues in one subscription, history,
upcoming, list, search — each against the real Redis, in the sync API and (where the path
differs) the asyncio one."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Set, Tuple

import pytest

import redelay

from conftest import run


def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def test_a_message_past_its_expiry_is_never_delivered(client: redelay.Client) -> None:
    q = client.queue("exp")
    kept = q.publish(b"late", expires_in=0.05).id
    dropped = q.publish(b"gone", expires_in=timedelta(milliseconds=50), drop_on_expiry=True).id
    at = datetime.now(timezone.utc) + timedelta(hours=1)
    info = q.peek(q.publish(b"ok", expires_at=at).id)
    assert info is not None and info.expires_at is not None and abs(info.expires_at - at) < timedelta(seconds=1)
    time.sleep(0.2)
    got = q.fetch(10)
    assert [m.body for m in got] == [b"ok"]
    assert got[0].expires_at == info.expires_at  # a delivery knows its expiry too
    q.publish(b"forever", id="no-expiry")
    assert q.fetch(1, wait=2)[0].expires_at is None
    dead = q.dead_letters()
    assert [d.id for d in dead] == [kept] and "expired" in (dead[0].last_error or "")
    assert q.peek(dropped) is None


def test_expiry_rules_are_the_cores(client: redelay.Client) -> None:
    q = client.queue("exp-bad")
    with pytest.raises(redelay.InvalidArgumentError, match="expires_in/expires_at"):
        q.publish(b"x", expires_in=5, expires_at=datetime.now(timezone.utc))
    with pytest.raises(redelay.InvalidArgumentError, match="expir"):
        q.publish(b"x", delay=60, expires_in=5)  # expires before it is due
    with pytest.raises(redelay.InvalidArgumentError, match="expires_at: naive"):
        q.publish(b"x", expires_at=datetime.now())


def test_pause_stops_consumers_and_resume_restarts_them(client: redelay.Client) -> None:
    q = client.queue("pause")
    assert q.pause() is True and q.pause() is False
    assert q.stats().paused
    got: List[bytes] = []
    with q.subscribe(lambda m: got.append(m.body)):
        q.publish(b"held")
        time.sleep(0.5)
        assert got == [] and q.stats().ready + q.stats().scheduled == 1
        assert q.resume() is True and q.resume() is False
        assert wait_for(lambda: got == [b"held"])
    assert not q.stats().paused


def test_one_subscription_for_several_queues_in_priority_order(client: redelay.Client) -> None:
    urgent, default = client.queue("urgent"), client.queue("default")
    default.publish_batch([b"d%d" % i for i in range(5)])
    urgent.publish_batch([b"u%d" % i for i in range(5)])
    seen: List[str] = []
    lock = threading.Lock()

    def handler(m: redelay.SyncMessage) -> None:
        with lock:
            seen.append(m.queue)

    with client.subscribe(["urgent", "default"], handler, concurrency=1, prefetch=0) as sub:
        assert wait_for(lambda: len(seen) == 10)
        assert sub.queues == ["urgent", "default"]
    assert seen == ["urgent"] * 5 + ["default"] * 5
    assert sub.counters().acked == 10 and urgent.stats().total + default.stats().total == 0


def test_bad_input_of_a_subscription_of_several_queues(client: redelay.Client) -> None:
    with pytest.raises(redelay.InvalidArgumentError, match="weight"):
        client.subscribe({"wa": 0}, lambda m: None)
    # Refused as given: not clamped, truncated or converted.
    with pytest.raises(redelay.InvalidArgumentError, match=r'weight of queue "wb": must be 1 to 1000, got -1$'):
        client.subscribe({"wa": 1, "wb": -1}, lambda m: None)
    # Beyond 64 bits too (no raw OverflowError).
    with pytest.raises(
        redelay.InvalidArgumentError, match=r'weight of queue "wb": must be 1 to 1000, got 18446744073709551616$'
    ):
        client.subscribe({"wa": 1, "wb": 2**64}, lambda m: None)
    with pytest.raises(TypeError, match=r'weight of queue "wa": expected an int, got float$'):
        client.subscribe({"wa": 1.5}, lambda m: None)  # type: ignore[dict-item]
    with pytest.raises(redelay.InvalidArgumentError, match="queue name"):
        client.subscribe(["wa", "bad name"], lambda m: None)
    with pytest.raises(redelay.InvalidArgumentError, match="twice"):
        client.subscribe(["wa", "wa"], lambda m: None)


def test_weighted_subscription(client: redelay.Client) -> None:
    a, b = client.queue("wa"), client.queue("wb")
    a.publish_batch([b"a"] * 6)
    b.publish_batch([b"b"] * 2)
    seen: Set[str] = set()
    with client.subscribe({"wa": 5, "wb": 1}, lambda m: seen.add(m.queue)):
        assert wait_for(lambda: a.stats().total + b.stats().total == 0)
    assert seen == {"wa", "wb"}


def test_a_pull_from_several_queues_takes_the_first_with_due_messages(client: redelay.Client) -> None:
    high, low = client.queue("high", shards=4), client.queue("low")
    low.publish_batch([{"body": b"l", "id": f"l{i}"} for i in range(2)])
    high.publish_batch([{"body": b"h", "id": f"h{i}"} for i in range(3)])
    queues = ["high", "low"]  # by name: "high" is opened with the 4 shards Redis holds for it
    got: List[redelay.SyncMessage] = []
    while len(got) < 3:  # the high queue's first, each call from one queue
        batch = client.fetch(queues, max=10)
        assert batch and all(isinstance(m, redelay.SyncMessage) and m.queue == "high" for m in batch), batch
        got += batch
    assert sorted(m.id for m in got) == ["h0", "h1", "h2"]
    rest = client.fetch(queues, max=10)  # then the low one's
    assert sorted((m.id, m.queue) for m in rest) == [("l0", "low"), ("l1", "low")]
    for m in got + rest:
        m.ack()
    assert client.fetch(queues, max=10) == []
    # ttr: leased for that long instead of each message's own.
    high.publish(b"t", id="t1", ttr=60)
    low.publish(b"t", id="t2", ttr=60)
    [own] = client.fetch(queues)
    assert own.id == "t1" and abs(own.lease_deadline - own.delivered_at - timedelta(seconds=60)) < timedelta(seconds=1)
    [leased] = client.fetch(queues, ttr=5)
    assert leased.id == "t2" and abs(leased.lease_deadline - leased.delivered_at - timedelta(seconds=5)) < timedelta(
        seconds=1
    )
    own.ack()
    leased.ack()
    # One name as a str is one queue, as for subscribe.
    low.publish(b"one", id="one")
    [one] = client.fetch("low")
    assert (one.id, one.queue) == ("one", "low") and client.fetch("low") == []
    one.ack()
    # wait: a message published meanwhile, to any of the queues, ends the wait.
    publisher = threading.Timer(0.3, lambda: low.publish(b"late", id="late"))
    publisher.start()
    try:
        late = client.fetch(("high", "low"), max=10, wait=30)
    finally:
        publisher.join()
    assert [(m.id, m.queue) for m in late] == [("late", "low")]
    late[0].ack()
    assert high.stats().total + low.stats().total == 0


def test_bad_input_of_a_pull_from_several_queues_names_the_field(client: redelay.Client) -> None:
    cases: List[Tuple[Any, Dict[str, Any], str]] = [
        ([], {}, "queues: give 1 to"),
        (["pa", "pa"], {}, '"pa" is given twice'),
        (["pa", "bad name"], {}, "queue name"),
        (["pa", "pb"], {"max": 0}, "max: must be 1 to 1000, got 0"),
        (["pa"], {"max": 1001}, "max: must be 1 to 1000"),
        (["pa"], {"wait": -1}, "wait: must be a finite number of seconds"),
        (["pa"], {"ttr": float("inf")}, "ttr: must be a finite number of seconds"),
        (["pa"], {"ttr": 0.01}, "ttr"),
    ]
    for queues, kw, words in cases:
        with pytest.raises(redelay.InvalidArgumentError, match=words):
            client.fetch(queues, **kw)
    with pytest.raises(TypeError, match="queues: expected queue names in priority order, got dict"):
        client.fetch({"pa": 1})
    with pytest.raises(TypeError, match="queues: expected queue names"):
        client.fetch(["pa", 1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="wait"):
        client.fetch(["pa"], wait="soon")  # type: ignore[arg-type]


def test_a_pull_from_several_queues_in_asyncio(url: str, prefix: str) -> None:
    async def main() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        try:
            high, low = c.queue("a-high", shards=4), c.queue("a-low")
            await low.publish(b"l", id="l", ttr=60)
            await high.publish_batch([{"body": b"h", "id": f"h{i}"} for i in range(2)])
            queues = ["a-high", "a-low"]
            got: List[redelay.Message] = []
            while len(got) < 2:
                batch = await c.fetch(queues, 10)
                assert batch and all(isinstance(m, redelay.Message) and m.queue == "a-high" for m in batch), batch
                got += batch
            assert sorted(m.id for m in got) == ["h0", "h1"]
            [m] = await c.fetch(queues, 10, ttr=timedelta(seconds=5))
            assert (m.id, m.queue) == ("l", "a-low")
            assert abs(m.lease_deadline - m.delivered_at - timedelta(seconds=5)) < timedelta(seconds=1)
            for x in [*got, m]:
                await x.ack()
            # wait: the pull is still waiting when the message is published, then gets it.
            task = asyncio.ensure_future(c.fetch(queues, wait=30))
            await asyncio.sleep(0.2)
            assert not task.done()
            await high.publish(b"late", id="late")
            [late] = await task
            assert (late.id, late.queue) == ("late", "a-high")
            await late.ack()
            with pytest.raises(redelay.InvalidArgumentError, match="max: must be 1 to 1000"):
                await c.fetch(queues, 0)
            with pytest.raises(redelay.InvalidArgumentError, match="wait: must be a finite number"):
                await c.fetch(queues, wait=-1)
            with pytest.raises(redelay.InvalidArgumentError, match="queues: give 1 to"):
                await c.fetch([])
            assert (await high.stats()).total + (await low.stats()).total == 0
        finally:
            await c.close()

    run(main)


def test_history_counts_what_the_scripts_did(client: redelay.Client) -> None:
    q = client.queue("hist")
    since = datetime.now(timezone.utc) - timedelta(minutes=2)
    q.publish_batch([b"1", b"2"])
    for m in q.fetch(2):
        m.ack()
    points = q.history(since)
    assert sum(p.published for p in points) == 2 and sum(p.acked for p in points) == 2
    assert sum(sum(p.lateness) for p in points) == 2
    assert all(isinstance(p.at, datetime) and isinstance(p.lateness_sum, timedelta) for p in points)
    assert q.history_totals().delivered == 2
    assert len(q.history(since, step="hour")) >= 1
    days = q.history(since - timedelta(days=2), step="day")  # UTC days, each the sum of its hours
    assert len(days) == 3 and sum(p.published for p in days) == 2
    assert all(p.at.timestamp() % 86400 == 0 for p in days)
    with pytest.raises(redelay.InvalidArgumentError, match="until"):
        q.history(since, since - timedelta(minutes=5))
    assert q.set_history(False) is True and q.set_history(False) is False
    q.publish(b"3")
    assert q.history_totals().published == 2
    assert q.set_history(True) is True


def test_upcoming_list_and_search(client: redelay.Client) -> None:
    q = client.queue("look")
    # Buckets from a second before the publishes: "other" (due at once) and order-1 fall in the
    # first, order-2 (70 s) in the second, whatever the time between publish and upcoming.
    start = datetime.now(timezone.utc) - timedelta(seconds=1)
    q.publish(b"soon", id="order-1", delay=10, headers={"tenant": "a"})
    q.publish(b"later body", id="order-2", delay=70)
    q.publish(b"now", id="other")
    assert [n for _, n in q.upcoming(60, 3, start=start)] == [2, 1, 0]
    page = q.list("scheduled", limit=1)
    assert page.total == 2 and [m.id for m in page.items] == ["order-1"]
    assert page.items[0].state == "scheduled"  # a str enum
    assert page.items[0].state is redelay.State.SCHEDULED
    assert [m.id for m in q.list(redelay.State.READY).items] == ["other"]
    assert [m.id for m in q.list("scheduled", offset=1).items] == ["order-2"]

    def search(**what: Any) -> Set[str]:
        found: Set[str] = set()
        cursor = None
        while True:
            page = q.search(cursor=cursor, **what)
            found |= {m.id for m in page.items}
            cursor = page.cursor
            if cursor is None:
                return found

    assert search(id_prefix="order-") == {"order-1", "order-2"}
    assert search(header=("tenant", "a")) == {"order-1"}
    assert search(body="body") == {"order-2"} == search(body=b"body")
    with pytest.raises(redelay.InvalidArgumentError, match="search"):
        q.search()
    with pytest.raises(redelay.InvalidArgumentError, match="buckets"):
        q.upcoming(60, 0)


def test_the_asyncio_api_has_them_too(url: str, prefix: str) -> None:
    async def body() -> None:
        async with await redelay.AsyncClient.connect(url, prefix=prefix) as c:
            q = c.queue("async-features")
            assert await q.pause() is True
            assert (await q.stats()).paused
            await q.publish(b"x", id="a-1", expires_in=60)
            got: List[str] = []

            async def handler(m: redelay.Message) -> None:
                got.append(m.queue)

            async with c.subscribe(["async-features", "async-other"], handler):
                assert await q.resume() is True
                for _ in range(500):
                    if got:
                        break
                    await asyncio.sleep(0.02)
            assert got == ["async-features"]
            assert (await q.history_totals()).acked == 1
            assert (await q.list("dead")).total == 0
            assert (await q.search(id_prefix="a-")).scanned >= 0
            assert len(await q.upcoming(1, 5)) == 5

    run(body)


def test_a_sharded_queue_spreads_messages_and_one_subscription_gets_them_all(client: redelay.Client) -> None:
    q = client.queue("orders", shards=4)
    published = q.publish_batch([b"m%d" % i for i in range(20)])
    assert q.stats().total == 20, "stats sum the shards"
    seen: Set[str] = set()
    lock = threading.Lock()

    def handler(m: redelay.SyncMessage) -> None:
        with lock:
            seen.add(m.id)

    with q.subscribe(handler):
        assert wait_for(lambda: len(seen) == 20)
    assert seen == {p.id for p in published}
    assert wait_for(lambda: q.stats().total == 0)
    # By name, a client subscription opens the queue with the count stored in Redis.
    q.publish(b"by name")
    by_name: List[bytes] = []
    with client.subscribe(["orders"], lambda m: by_name.append(m.body)):
        assert wait_for(lambda: by_name == [b"by name"])
    with pytest.raises(redelay.InvalidArgumentError, match="shards"):
        client.queue("orders", shards=0)
    with pytest.raises(redelay.InvalidArgumentError, match="4 shards"):
        client.queue("orders", shards=8).stats()


def test_a_sharded_queue_in_asyncio(url: str, prefix: str) -> None:
    async def main() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        try:
            q = c.queue("a-orders", shards=3)
            await q.publish_batch([b"x", b"y", b"z"])
            got: List[redelay.Message] = []
            for _ in range(50):  # one fetch leases from one shard: a few calls take all three
                got += await q.fetch(10, wait=0.2)
                if len(got) == 3:
                    break
            assert sorted(m.body for m in got) == [b"x", b"y", b"z"]
            for m in got:
                await m.ack()
            assert (await q.stats()).total == 0
        finally:
            await c.close()

    asyncio.run(main())
