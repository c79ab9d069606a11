"""Behaviour the core owns, seen from Python (issue 13): close drains, MessageInfo's fields,
destroy, error codes."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
from datetime import datetime

import pytest

import redelay
from redelay import _native

from conftest import run


def test_client_close_drains_a_running_handler_then_refuses_calls(url: str, prefix: str) -> None:
    c = redelay.Client(url, prefix=prefix)
    q = c.queue("drain")
    q.publish(b"x")
    started, finished = threading.Event(), threading.Event()

    def handler(msg: redelay.SyncMessage) -> None:
        started.set()
        time.sleep(0.3)
        finished.set()

    sub = q.subscribe(handler)
    assert started.wait(10)
    c.close()  # waits for the running handler, then closes the connections
    assert finished.is_set()
    assert sub.closed and sub.wait(5)
    assert sub.counters().acked == 1
    with pytest.raises(redelay.ConnectionError, match="client is closed"):
        c.queue("drain")
    c.close()  # idempotent
    with redelay.Client(url, prefix=prefix) as other:
        assert other.queue("drain").stats().total == 0


def test_async_client_close_drains_a_running_async_handler(url: str, prefix: str) -> None:
    async def body() -> None:
        async with await redelay.AsyncClient.connect(url, prefix=prefix) as c:
            q = c.queue("drain-async")
            await q.publish(b"x")
            started, finished = asyncio.Event(), asyncio.Event()

            async def handler(msg: redelay.Message) -> None:
                started.set()
                await asyncio.sleep(0.3)
                finished.set()

            sub = await q.subscribe(handler)
            await asyncio.wait_for(started.wait(), 10)
            await c.close()
            assert finished.is_set()
            assert sub.counters().acked == 1
            await asyncio.wait_for(sub.wait(), 5)  # a subscription closed by its client ends wait()

    run(body)


def test_message_info_lease_deadline_and_died_at(client: redelay.Client) -> None:
    q = client.queue("info")
    q.publish(b"x", id="m1", max_attempts=1)
    info = q.peek("m1")
    assert info is not None and info.state == "ready"
    assert info.lease_deadline is None and info.died_at is None
    [m] = q.fetch(1, ttr=30)
    leased = q.peek("m1")
    assert leased is not None and leased.state == "leased"
    assert isinstance(leased.lease_deadline, datetime) and leased.died_at is None
    assert leased.lease_deadline == m.lease_deadline
    assert m.nack(reason="boom") is True  # its only attempt: dead
    dead = q.peek("m1")
    assert dead is not None and dead.state == "dead"
    assert dead.lease_deadline is None and isinstance(dead.died_at, datetime)
    assert dead.died_at >= dead.published_at
    assert [d.died_at for d in q.dead_letters()] == [dead.died_at]


def test_destroy_deletes_every_message_sync_and_async(url: str, client: redelay.Client) -> None:
    q = client.queue("gone")
    q.publish_batch([b"a", b"b", {"body": b"c", "delay": 60}])
    q.fetch(1)
    q.destroy()
    assert q.stats().total == 0
    assert "gone" not in client.queues()

    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=client.prefix)
        aq = c.queue("gone-async")
        await aq.publish(b"x")
        await aq.destroy()
        assert (await aq.stats()).total == 0
        await c.close()

    run(body)


def test_every_error_kind_has_the_cores_code(client: redelay.Client) -> None:
    kinds = dict(_native.ERROR_CODES)
    classes = {c.kind: c for c in redelay.RedelayError.__subclasses__()}
    assert set(kinds) == set(classes)
    for kind, code in kinds.items():
        assert classes[kind].code == code and code.startswith("ERR_REDELAY_")
    with pytest.raises(redelay.LeaseLostError) as ei:
        client.queue("codes").ack("missing", "0123456789abcdef")
    assert (ei.value.kind, ei.value.code) == ("LeaseLost", "ERR_REDELAY_LEASE_LOST")
    with pytest.raises(redelay.InvalidArgumentError) as ii:
        client.queue("codes").publish(b"x", delay=1, at=datetime.now().astimezone())
    assert ii.value.code == "ERR_REDELAY_INVALID_ARGUMENT" and "not both" in str(ii.value)


def test_core_log_records_reach_python_logging(url: str, prefix: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="redelay")
    try:
        with redelay.Client(url, prefix=prefix) as c:  # the core's level is read at connect
            c.queue("log").subscribe(lambda m: None).close()
        closed = [r for r in caplog.records if r.name.startswith("redelay.") and "closed" in r.getMessage()]
        assert closed and closed[0].levelno == logging.DEBUG
    finally:
        logging.getLogger("redelay").setLevel(logging.NOTSET)
        redelay._runtime.read_log_level()  # back to WARNING for the other tests


def test_async_wait_returns_when_the_client_closes_the_subscription(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        sub = await c.queue("w").subscribe(lambda m: None)
        waiter = asyncio.ensure_future(sub.wait())
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await c.close()  # the core reports the close: wait() returns, no polling
        await asyncio.wait_for(waiter, 10)
        assert sub.closed

    run(body)


def test_the_defaults_python_shows_are_the_cores() -> None:
    # fetch's max and list's limit default to the core's numbers (redelay::limits), not Python's own.
    assert (_native.DEFAULT_FETCH_MAX, _native.DEFAULT_PAGE_LIMIT) == (1, 100)
    for cls in (redelay.Queue, redelay.AsyncQueue):
        assert inspect.signature(cls.fetch).parameters["max"].default == _native.DEFAULT_FETCH_MAX
        assert inspect.signature(cls.list.fn).parameters["limit"].default == _native.DEFAULT_PAGE_LIMIT
    for c in (redelay.Client, redelay.AsyncClient):
        assert inspect.signature(c.fetch).parameters["max"].default == _native.DEFAULT_FETCH_MAX
