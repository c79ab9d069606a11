"""The blocking API: redelay.Client and Queue."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import List, Optional

import pytest

import redelay


def test_publish_fetch_ack(client: redelay.Client) -> None:
    q = client.queue("orders")
    p = q.publish(b"close order 42", headers={"tenant": "acme"})
    assert p.status == "stored" and not p.duplicate and p.id
    msgs = q.fetch(10, wait=1)
    assert len(msgs) == 1
    m = msgs[0]
    assert isinstance(m, redelay.SyncMessage)
    assert (m.id, m.queue, m.body, m.headers, m.attempt) == (p.id, "orders", b"close order 42", {"tenant": "acme"}, 1)
    assert q.stats().leased == 1
    m.ack()
    assert m.settled
    s = q.stats()
    assert (s.total, s.leased) == (0, 0)
    assert q.verify().ok


def test_stats_count_a_lapsed_lease_until_a_fetch_takes_it_back(client: redelay.Client) -> None:
    q = client.queue("lapsed")
    q.publish(b"dies")
    (m,) = q.fetch(1, ttr=0.1)
    s = q.stats()
    while s.now <= m.lease_deadline:  # the consumer is gone: wait out its lease on Redis' clock
        time.sleep(0.02)
        s = q.stats()
    assert (s.total, s.leased, s.lapsed) == (1, 1, 1)
    (again,) = q.fetch(1, ttr=600)
    assert again.attempt == 2
    s = q.stats()
    assert (s.total, s.leased, s.lapsed) == (1, 1, 0)


def test_fetch_waits_for_a_delayed_message(client: redelay.Client) -> None:
    q = client.queue("delayed")
    q.publish(b"later", delay=0.3)
    assert q.fetch(1) == []
    t0 = time.monotonic()
    msgs = q.fetch(1, wait=30)
    waited = time.monotonic() - t0
    assert [m.body for m in msgs] == [b"later"]
    # Waited for the due time, and returned with it rather than at the end of the wait (the
    # upper bound is loose on purpose: a busy machine must not fail it).
    assert 0.1 < waited < 20
    msgs[0].ack()


def test_duplicate_and_replace(client: redelay.Client) -> None:
    q = client.queue("ids")
    assert q.publish(b"one", id="job-1", delay=60).status == "stored"
    dup = q.publish(b"two", id="job-1", delay=60)
    assert dup.duplicate and dup.status == "duplicate" and dup.id == "job-1"
    info = q.peek("job-1")
    assert info is not None and info.body == b"one"
    assert q.publish(b"three", id="job-1", delay=60, replace=True).status == "replaced"
    info = q.peek("job-1")
    assert info is not None and info.body == b"three" and info.state == "scheduled"


def test_publish_batch_mixed_items(client: redelay.Client) -> None:
    q = client.queue("batch")
    res = q.publish_batch([b"a", "b", {"body": b"c", "id": "c-1", "delay": 60, "headers": {"k": "v"}}])
    assert [r.status for r in res] == ["stored"] * 3
    assert res[2].id == "c-1"
    s = q.stats()
    assert (s.total, s.scheduled) == (3, 1)
    info = q.peek("c-1")
    assert info is not None and info.headers == {"k": "v"}


def test_publish_batch_is_all_or_nothing(client: redelay.Client) -> None:
    q = client.queue("batch-bad")
    with pytest.raises(redelay.InvalidArgumentError, match="message 2"):
        q.publish_batch([b"ok", b"ok", {"body": b"x", "max_attempts": 0}])
    with pytest.raises(TypeError, match="unknown key"):
        q.publish_batch([{"body": b"x", "dealy": 5}])  # type: ignore[list-item]  # the misspelt key is the point
    assert q.stats().total == 0


def test_an_unknown_option_is_a_type_error_naming_it_everywhere(client: redelay.Client, url: str) -> None:
    # As for publish: a typo, or a wire name such as ttr_ms, is refused, not read or ignored.
    with pytest.raises(TypeError, match=r"unknown key 'ttr_ms'; expected some of concurrency, prefetch, ttr"):
        client.queue("opts").subscribe(lambda m: None, ttr_ms=500)  # type: ignore[call-arg]  # the point
    with pytest.raises(TypeError, match=r"unknown key 'prefx'; expected some of prefix, "):
        redelay.Client(url, prefx="p")  # type: ignore[call-arg]  # the misspelt option is the point


def test_cancel_reschedule_peek(client: redelay.Client) -> None:
    q = client.queue("change")
    q.publish(b"x", id="r-1", delay=3600)
    assert q.peek("nope") is None
    new_due = q.reschedule("r-1", delay=0)
    info = q.peek("r-1")
    assert info is not None and info.due_at == new_due
    assert [m.id for m in q.fetch(1, wait=1)] == ["r-1"]
    assert q.cancel("r-1") is True
    assert q.cancel("r-1") is False
    assert q.stats().total == 0


def test_nack_retry_and_dead_letters(client: redelay.Client) -> None:
    q = client.queue("dead")
    q.publish(b"doomed", id="d-1", max_attempts=2)
    m = q.fetch(1, wait=1)[0]
    assert m.nack(retry_in=0, reason="first") is False
    m = q.fetch(1, wait=2)[0]
    assert m.attempt == 2 and m.last_error == "first"
    assert m.nack(reason="second") is True
    dead = q.dead_letters()
    assert [(d.id, d.state, d.last_error) for d in dead] == [("d-1", "dead", "second")]
    assert dead[0].died_at is not None and dead[0].lease_deadline is None
    assert q.respawn(["d-1"]) == 1
    m = q.fetch(1, wait=2)[0]
    assert m.attempt == 1
    m.nack(reason="again")
    m = q.fetch(1, wait=2)[0]
    m.nack(reason="dead again")
    assert q.stats().dead == 1
    assert q.purge_dead(all=True) == 1
    assert q.stats().total == 0
    with pytest.raises(redelay.InvalidArgumentError):
        q.respawn()


def test_release_gives_the_message_back_without_an_attempt(client: redelay.Client) -> None:
    q = client.queue("release")
    q.publish(b"x", id="r-1", max_attempts=1, ttr=60)
    m = q.fetch(1, wait=1)[0]
    m.release()
    assert m.settled
    with pytest.raises(redelay.LeaseLostError):
        m.release()
    again = q.fetch(1, wait=1)[0]
    # Due now again, and with max_attempts 1 still deliverable: no attempt was counted.
    assert (again.id, again.attempt) == ("r-1", 1)
    again.ack()
    assert q.stats().total == 0


def test_respawn_with_a_fresh_expiry(client: redelay.Client) -> None:
    q = client.queue("respawn-expiry")
    q.publish(b"x", id="e-1", max_attempts=1, expires_in=3600)
    q.fetch(1, wait=2)[0].nack(reason="boom")
    own = q.peek("e-1")
    assert own is not None and own.state == "dead" and own.expires_at is not None
    before = datetime.now(timezone.utc)
    assert q.respawn(["e-1"], expires_in=timedelta(seconds=60)) == 1
    after = datetime.now(timezone.utc)
    info = q.peek("e-1")
    # Counted from the respawn by the Redis clock (this machine's): within a second.
    assert info is not None and info.expires_at is not None
    slack = timedelta(seconds=1)
    assert before + timedelta(seconds=60) - slack <= info.expires_at <= after + timedelta(seconds=60) + slack
    with pytest.raises(redelay.InvalidArgumentError, match="expires_in"):
        q.respawn(all=True, expires_in=0)
    # Dead again: a respawn may clear the expiry, and a bulk respawn takes the same choices.
    q.fetch(1, wait=2)[0].nack(reason="boom")
    assert q.respawn(["e-1"], clear_expiry=True) == 1
    cleared = q.peek("e-1")
    assert cleared is not None and cleared.state != "dead" and cleared.expires_at is None
    q.fetch(1, wait=2)[0].nack(reason="boom")
    assert q.bulk("respawn", ["e-1"], expires_in=120).done == 1
    renewed = q.peek("e-1")
    assert renewed is not None and renewed.expires_at is not None
    assert renewed.expires_at >= before + timedelta(seconds=119)
    with pytest.raises(redelay.InvalidArgumentError, match="clear_expiry"):
        q.respawn(all=True, expires_in=60, clear_expiry=True)


def test_settle_by_id_and_token(client: redelay.Client) -> None:
    q = client.queue("by-id")
    q.publish(b"x", ttr=5)
    m = q.fetch(1, wait=1)[0]
    q.extend(m.id, m.token, timedelta(seconds=20))
    info = q.peek(m.id)
    assert info is not None and info.state == "leased" and info.lease_deadline is not None
    q.release(m.id, m.token)
    with pytest.raises(redelay.LeaseLostError):
        q.release(m.id, m.token)
    again = q.fetch(1, wait=1)[0]
    assert (again.id, again.attempt) == (m.id, 1)  # released: no attempt counted
    q.ack(again.id, again.token)
    with pytest.raises(redelay.LeaseLostError):
        q.ack(again.id, again.token)


def test_sync_subscription_handles_and_survives_failures(client: redelay.Client) -> None:
    q = client.queue("sync-sub")
    seen: list[bytes] = []
    threads: set[int] = set()
    main = threading.get_ident()

    def handler(msg: redelay.SyncMessage) -> None:
        threads.add(threading.get_ident())
        if msg.body == b"bad":
            raise ValueError("cannot handle bad")
        seen.append(msg.body)

    q.publish(b"bad", id="bad-1", max_attempts=5)
    q.publish_batch([b"m%d" % i for i in range(20)])
    with q.subscribe(handler, concurrency=4) as sub:
        deadline = time.monotonic() + 10
        while len(seen) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert sorted(seen) == sorted(b"m%d" % i for i in range(20))
    assert main not in threads
    assert sub.closed
    info = q.peek("bad-1")
    assert info is not None and info.last_error == "ValueError: cannot handle bad"
    assert info.attempts >= 1
    c = sub.counters()
    assert c.acked == 20 and c.nacked >= 1


def test_retry_later_sets_the_delay(client: redelay.Client) -> None:
    q = client.queue("retry-later")
    calls: list[float] = []

    def handler(msg: redelay.SyncMessage) -> None:
        calls.append(time.monotonic())
        if msg.attempt == 1:
            raise redelay.RetryLater(0.3, "busy")

    q.publish(b"x", backoff=(3600, 3600))  # the backoff would retry it in an hour
    with q.subscribe(handler):
        deadline = time.monotonic() + 10
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(calls) == 2
    assert calls[1] - calls[0] > 0.25


def test_retry_later_with_a_negative_delay_is_a_failure_naming_it(client: redelay.Client) -> None:
    """``RetryLater(-5)`` is refused as ``nack(retry_in=-5)`` is: the handler fails with that
    error, so the message is retried after its backoff, its reason naming the field and limit."""
    q = client.queue("retry-negative")
    seen: list[tuple[int, Optional[str]]] = []

    def handler(msg: redelay.SyncMessage) -> None:
        seen.append((msg.attempt, msg.last_error))
        if msg.attempt == 1:
            raise redelay.RetryLater(-5, "deadline passed")

    q.publish(b"x", backoff=(0.05, 0.05))
    with q.subscribe(handler):
        deadline = time.monotonic() + 10
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert seen == [(1, None), (2, "InvalidArgumentError: retry_in: must be 0 to 3650 days, got -5 s")]


def test_sync_calls_release_the_gil(client: redelay.Client) -> None:
    q = client.queue("gil")
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        before = ticks
        assert q.fetch(1, wait=0.5) == []  # blocks 0.5 s waiting on Redis
        during = ticks - before
    finally:
        stop.set()
        t.join()
    # With the GIL held the spinning thread could not run at all during the wait.
    assert during > 10_000


def test_async_handler_refused_by_sync_client(client: redelay.Client) -> None:
    async def handler(msg: redelay.Message) -> None:
        pass

    with pytest.raises(TypeError, match="AsyncClient"):
        client.queue("x").subscribe(handler)  # type: ignore[arg-type]


def test_client_info(client: redelay.Client, prefix: str) -> None:
    client.ping()
    assert client.prefix == prefix
    client.queue("listed").publish(b"x")
    assert "listed" in client.queues()


def _released(q: redelay.Queue, ids: List[str]) -> bool:
    """Each of ``ids`` waits, due now, with no attempt counted."""
    infos = [q.peek(i) for i in ids]
    assert all(i is not None and i.attempts == 0 for i in infos)
    return all(i is not None and i.state == "ready" for i in infos)


def test_messages_iterates_in_order_a_batch_at_a_time_and_a_break_gives_back_the_rest(
    client: redelay.Client,
) -> None:
    q = client.queue("stream")
    q.publish_batch([{"body": b"x", "id": f"s{i}", "ttr": 60} for i in range(5)])
    got: List[redelay.SyncMessage] = []
    for m in q.messages(batch=2):
        assert isinstance(m, redelay.SyncMessage) and m.attempt == 1
        got.append(m)
        if len(got) == 3:
            break  # s3 was fetched with s2 and not given out: handed back by the stream
    assert [m.id for m in got] == ["s0", "s1", "s2"]
    for m in got:
        m.ack()
    deadline = time.monotonic() + 10
    while not _released(q, ["s3"]):
        assert time.monotonic() < deadline, "s3 given back, not leased to nobody for 60 s"
        time.sleep(0.02)
    rest = q.fetch(2)
    assert [(m.id, m.attempt) for m in rest] == [("s3", 1), ("s4", 1)]


def test_messages_closed_gives_back_at_once_and_ends(client: redelay.Client) -> None:
    q = client.queue("stream-close")
    q.publish_batch([{"body": b"x", "id": i, "ttr": 60} for i in ["a", "b", "c"]])
    with q.messages(batch=3, wait=0.5, ttr=30) as stream:
        first = next(stream)
        assert first.id == "a"
    assert _released(q, ["b", "c"]), "handed back before close returned"
    assert list(stream) == []
    stream.close()  # again: nothing
    first.ack()


def test_messages_refuses_bad_options_naming_the_field(client: redelay.Client) -> None:
    q = client.queue("stream-bad")
    with pytest.raises(redelay.InvalidArgumentError, match=r"^batch: must be 1 to 1000, got 0$"):
        q.messages(batch=0)
    with pytest.raises(redelay.InvalidArgumentError, match=r"^wait: must be 10 ms to 3650 days"):
        q.messages(wait=0)
    with pytest.raises(redelay.InvalidArgumentError, match=r"^ttr: must be 100 ms to 24 h"):
        q.messages(ttr=0.05)


def test_messages_closed_from_another_thread_ends_the_waiting_loop(client: redelay.Client) -> None:
    q = client.queue("stream-close-waiting")
    stream = q.messages(wait=120)  # one fetch would wait two minutes
    got: List[redelay.SyncMessage] = []
    consumer = threading.Thread(target=lambda: got.extend(stream))
    consumer.start()
    time.sleep(0.3)
    assert consumer.is_alive(), "nothing is due: the loop waits"
    stream.close()
    consumer.join(30)  # bounded only so that a close that does not reach the loop fails, not hangs
    assert not consumer.is_alive() and got == []
    q.publish(b"x", id="after")
    assert q.stats().leased == 0, "the closed stream takes nothing"
