"""What handlers may do, in both styles: fail with any exception (whatever its text), use
asyncio's task APIs from their first line, stop the program (KeyboardInterrupt, SystemExit), and
what ``wait()`` waits for. On a real Redis."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Callable, List

import redelay

from conftest import run


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


async def until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_sync_wait_returns_once_the_subscription_has_drained(url: str, prefix: str) -> None:
    client = redelay.Client(url, prefix=prefix)
    q = client.queue("wait-sync")
    started: List[float] = []
    finished: List[float] = []

    def handler(msg: redelay.SyncMessage) -> None:
        started.append(time.monotonic())
        time.sleep(0.5)
        finished.append(time.monotonic())

    sub = q.subscribe(handler, concurrency=2)
    q.publish_batch([b"1", b"2"])
    wait_for(lambda: len(started) == 2)
    assert not sub.wait(0.01)
    closer = threading.Thread(target=client.close)  # another caller closes: the subscription drains
    closer.start()
    wait_for(lambda: sub.closed)
    assert not sub.wait(0.05)  # closing, not closed: its handlers still run
    assert sub.wait(10)
    assert len(finished) == 2
    closer.join()
    assert sub.wait(0)


def test_async_wait_returns_once_the_subscription_has_drained(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        q = c.queue("wait-async")
        started: List[int] = []
        finished: List[int] = []

        async def handler(msg: redelay.Message) -> None:
            started.append(1)
            await asyncio.sleep(0.5)
            finished.append(1)

        sub = await q.subscribe(handler, concurrency=2)
        await q.publish_batch([b"1", b"2"])
        await until(lambda: len(started) == 2)
        closing = asyncio.ensure_future(c.close())  # another caller closes: the subscription drains
        await until(lambda: sub.closed)
        waiting = asyncio.ensure_future(sub.wait())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # closing, not closed: its handlers still run
        await waiting
        assert len(finished) == 2
        await closing

        # close(timeout) returns before the drain is over: wait() returns with it.
        c2 = await redelay.AsyncClient.connect(url, prefix=prefix)
        sub2 = await c2.queue("wait-async").subscribe(handler)
        await c2.queue("wait-async").publish(b"3")
        await until(lambda: len(started) == 3)
        t0 = time.monotonic()
        await sub2.close(timeout=0.05)
        await sub2.wait()
        assert time.monotonic() - t0 < 0.4
        await c2.close()

    run(body)
