"""What handlers may do, in both styles: fail with any exception (whatever its text), use
asyncio's task APIs from their first line, stop the program (KeyboardInterrupt, SystemExit), and
what ``wait()`` waits for. On a real Redis."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
import warnings
from typing import Any, Callable, List, NoReturn, Tuple

import pytest

import redelay

from conftest import run


class Unreadable(Exception):
    """An exception whose text cannot be read: its ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def surrogate() -> NoReturn:
    # A file name with a byte that is not UTF-8, as os.fsdecode gives it (a lone surrogate).
    raise ValueError(os.fsdecode(b"cannot open \xff.txt"))


def unreadable() -> NoReturn:
    raise Unreadable()


def retry_surrogate() -> NoReturn:
    raise redelay.RetryLater(3600, os.fsdecode(b"wait for \xfe"))


def retry_not_a_str() -> NoReturn:
    e = redelay.RetryLater(3600, "set below")
    e.reason = 123  # type: ignore[assignment]  # past the constructor's check
    raise e


#: (raise it, the reason stored)
FAILURES = {
    "surrogate": (surrogate, "ValueError: cannot open \ufffd.txt"),
    "unreadable": (unreadable, "Unreadable: (its message could not be read: str() raised RuntimeError)"),
    "retry-surrogate": (retry_surrogate, "wait for \ufffd"),
    "retry-not-a-str": (retry_not_a_str, "123"),
}


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


@pytest.mark.parametrize("style", ["async", "sync"])
@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_a_failure_whose_text_is_not_utf8_is_nacked_and_the_others_of_its_batch_settle(
    url: str, prefix: str, style: str, kind: str
) -> None:
    fail, stored = FAILURES[kind]
    client = redelay.Client(url, prefix=prefix)
    q = client.queue("bad-text")
    # One batch: the bad one first, then two good ones.
    q.publish_batch(
        [{"body": b"bad", "id": "bad", "ttr": 30}, {"body": b"ok", "id": "ok1"}, {"body": b"ok", "id": "ok2"}]
    )
    handled: List[str] = []

    def sync_handler(msg: redelay.SyncMessage) -> None:
        handled.append(msg.id)
        if msg.id == "bad":
            fail()

    async def async_handler(msg: redelay.Message) -> None:
        sync_handler(msg)  # type: ignore[arg-type]

    async def body() -> None:
        ac = await redelay.AsyncClient.connect(url, prefix=prefix)
        async with ac.queue("bad-text").subscribe(async_handler, concurrency=3) as sub:
            await until(lambda: sub.counters().nacked == 1 and sub.counters().acked == 2, timeout=5)
        await ac.close()

    try:
        if style == "async":
            run(body)
        else:
            with q.subscribe(sync_handler, concurrency=3) as sub:
                wait_for(lambda: sub.counters().nacked == 1 and sub.counters().acked == 2, timeout=5)
        assert sorted(handled) == ["bad", "ok1", "ok2"]
        info = q.peek("bad")
        assert info is not None
        assert (info.state, info.attempts, info.last_error) == ("scheduled", 1, stored)
        assert q.stats().total == 1  # the good ones were acked
    finally:
        client.close()


def test_retry_later_takes_a_str_reason_only() -> None:
    with pytest.raises(TypeError, match="reason: expected a str, got int"):
        redelay.RetryLater(1, 123)  # type: ignore[arg-type]
    assert redelay.RetryLater(2).reason == "retry in 2 s"
    assert redelay.RetryLater(2, "busy").reason == "busy"


def test_a_handler_that_returns_an_awaitable_unawaited_is_nacked_saying_so(url: str, prefix: str) -> None:
    """``return work(msg)`` where ``return await work(msg)`` was meant: the work never ran, so
    the message is not acked as done; it is nacked, with a reason that says what happened (a
    plain ``def`` handler's likewise)."""
    ran: List[str] = []

    async def work(msg: redelay.Message) -> None:
        ran.append(msg.id)

    async def handler(msg: redelay.Message) -> object:
        return work(msg)

    def sync_handler(msg: redelay.SyncMessage) -> object:
        return work(msg)  # type: ignore[arg-type]

    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        cases: List[Tuple[str, Any, str]] = [
            ("async", handler, "handler returned an awaitable without awaiting it"),
            ("sync", sync_handler, "handler returned an awaitable: declare it `async def`"),
        ]
        for name, h, reason in cases:
            q = c.queue(f"returns-awaitable-{name}")
            await q.publish(b"", id=name, max_attempts=1)
            async with q.subscribe(h) as sub:
                await until(lambda: sub.counters().handled == 1)
            assert sub.counters().nacked == 1, name
            [dead] = await q.dead_letters()
            assert dead.last_error is not None and dead.last_error.startswith(reason), (name, dead.last_error)
        assert ran == []
        await c.close()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "coroutine was never awaited"
        run(body)


def test_async_handlers_run_in_a_task_from_their_first_step(url: str, prefix: str) -> None:
    results: dict[str, str] = {}

    async def handler(msg: redelay.Message) -> None:
        kind = msg.id
        try:
            if kind == "current-task":
                assert asyncio.current_task() is not None, "no current task"
            elif kind == "wait-for":
                await asyncio.wait_for(asyncio.sleep(0.01), 5)
            elif kind == "timeout" and sys.version_info >= (3, 11):
                async with asyncio.timeout(5):
                    await asyncio.sleep(0.01)
            elif kind == "task-group" and sys.version_info >= (3, 11):
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(asyncio.sleep(0.01))
            elif kind == "never-awaits":
                pass
            results[kind] = "ok"
        except BaseException as e:
            results[kind] = f"{type(e).__name__}: {e}"
            raise

    kinds = ["current-task", "wait-for", "timeout", "task-group", "never-awaits"]

    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        q = c.queue("first-step")
        await q.publish_batch([{"body": b"", "id": k, "max_attempts": 1} for k in kinds])
        async with q.subscribe(handler, concurrency=len(kinds)) as sub:
            await until(lambda: sub.counters().handled == len(kinds))
        assert results == {k: "ok" for k in kinds}
        assert sub.counters().acked == len(kinds)
        assert await q.dead_letters() == []
        await c.close()

    run(body)


@pytest.mark.parametrize("where", ["first-step", "after-await"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_or_system_exit_in_an_async_handler_gives_the_message_back_and_propagates(
    url: str, prefix: str, exc: type, where: str
) -> None:
    calls: List[int] = []
    others: List[str] = []

    async def handler(msg: redelay.Message) -> None:
        if msg.id != "stop":
            await asyncio.sleep(0.2)
            others.append(msg.id)
            return
        calls.append(msg.attempt)
        if where == "after-await":
            await asyncio.sleep(0.01)
        raise exc("from the handler")

    async def body() -> None:
        async with await redelay.AsyncClient.connect(url, prefix=prefix) as c:
            q = c.queue("stop")
            await q.publish_batch([{"body": b"", "id": "other"}, {"body": b"", "id": "stop", "max_attempts": 3}])
            async with q.subscribe(handler, concurrency=2):
                await asyncio.sleep(10)

    t0 = time.monotonic()
    with pytest.raises(exc, match="from the handler"):
        asyncio.run(body())
    assert time.monotonic() - t0 < 8  # it propagated: the program did not go on sleeping
    assert calls == [1]
    with redelay.Client(url, prefix=prefix) as client:
        info = client.queue("stop").peek("stop")
        assert info is not None
        # Given back: due at once, no attempt counted, no failure recorded.
        assert (info.state, info.attempts, info.last_error) == ("ready", 0, None)
        # The other one, cancelled as the program stopped, was given back too (or had finished).
        other = client.queue("stop").peek("other")
        assert other is None or (other.state, other.attempts) == ("ready", 0), (other, others)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_a_program_stop_in_an_async_handler_gives_back_the_batch_that_did_not_start(
    url: str, prefix: str, exc: type
) -> None:
    """The deliveries after the one whose handler stops the program, in the same batch: their
    tasks exist but never ran their first step (before Python 3.12 tasks start a loop round
    later), and the end of ``asyncio.run`` cancels them. Each is given back at once: the close
    does not wait out the drain timeout for them, and none is left leased."""

    async def handler(msg: redelay.Message) -> None:
        if msg.id == "stop":
            raise exc("from the handler")
        await asyncio.sleep(0)

    async def body() -> None:
        async with await redelay.AsyncClient.connect(url, prefix=prefix) as c:
            q = c.queue("stop-batch")
            await q.publish_batch([{"body": b"", "id": i} for i in ["stop", "after-1", "after-2"]])
            async with q.subscribe(handler, concurrency=3, drain_timeout=60):
                await asyncio.sleep(30)

    t0 = time.monotonic()
    with pytest.raises(exc, match="from the handler"):
        asyncio.run(body())
    assert time.monotonic() - t0 < 20  # not the 60 s drain timeout
    with redelay.Client(url, prefix=prefix) as client:
        q = client.queue("stop-batch")
        for id in ["stop", "after-1", "after-2"]:
            info = q.peek(id)
            # Given back (due now, no attempt counted), or done (3.12+ runs them eagerly).
            assert info is None or (info.state, info.attempts) == ("ready", 0), (id, info)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_or_system_exit_in_a_sync_handler_gives_the_message_back_and_closes(
    client: redelay.Client, exc: type
) -> None:
    q = client.queue("stop-sync")
    attempts: List[int] = []

    def handler(msg: redelay.SyncMessage) -> None:
        attempts.append(msg.attempt)
        if len(attempts) == 1:
            raise exc("from the handler")

    q.publish(b"", id="stop", backoff=(3600, 3600))  # a nack would retry it in an hour
    sub = q.subscribe(handler)
    # A worker thread cannot stop the program: the subscription closes, as the program would.
    assert sub.wait(5)
    assert sub.closed and attempts == [1]
    assert sub.counters().nacked == 0
    info = q.peek("stop")
    assert info is not None and (info.state, info.attempts, info.last_error) == ("ready", 0, None)
    with q.subscribe(handler) as again:
        wait_for(lambda: again.counters().acked == 1)
    assert attempts == [1, 1]  # given back: no attempt counted


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

        # close(timeout) returns before the drain is over and cancels the running handler,
        # which hands its message back: wait() returns once that is done.
        c2 = await redelay.AsyncClient.connect(url, prefix=prefix)
        sub2 = await c2.queue("wait-async").subscribe(handler)
        await c2.queue("wait-async").publish(b"3", id="three")
        await until(lambda: len(started) == 3)
        await sub2.close(timeout=0.05)
        await sub2.wait()
        assert len(finished) == 2 and sub2.counters().acked == 0
        info = await c2.queue("wait-async").peek("three")
        assert info is not None and (info.state, info.attempts) == ("ready", 0)
        await c2.close()

    run(body)


def test_sync_wait_after_a_close_that_gave_up_waits_for_the_drain(client: redelay.Client) -> None:
    """close(timeout) returns when the timeout passes; the handler still runs, and wait() waits
    for it (it did not return at once: the drain is the core's, and goes on), as a second
    close does."""
    q = client.queue("gave-up-sync")
    started, go, finished = threading.Event(), threading.Event(), threading.Event()

    def handler(msg: redelay.SyncMessage) -> None:
        started.set()
        go.wait(30)
        finished.set()

    sub = q.subscribe(handler)
    q.publish(b"x")
    assert started.wait(10)
    sub.close(timeout=0.05)
    second = threading.Thread(target=sub.close)
    second.start()
    assert not sub.wait(0.3)  # the handler still runs
    assert second.is_alive()
    go.set()
    assert sub.wait(10)
    second.join(10)
    assert not second.is_alive() and finished.is_set() and sub.counters().acked == 1


def test_async_wait_after_a_close_that_gave_up_waits_for_the_drain(url: str, prefix: str) -> None:
    """As above, for a plain ``def`` handler of the asyncio API (it runs on a thread: close
    cannot cancel it)."""

    async def body() -> None:
        async with await redelay.AsyncClient.connect(url, prefix=prefix) as c:
            q = c.queue("gave-up-async")
            started, go = threading.Event(), threading.Event()

            def handler(msg: redelay.SyncMessage) -> None:
                started.set()
                go.wait(30)

            sub = await q.subscribe(handler)
            await q.publish(b"x")
            await until(started.is_set)
            await sub.close(timeout=0.05)
            waiting = asyncio.ensure_future(sub.wait())
            # A second close waits for the drain too, as the core's (and the blocking API's,
            # Node's and Kotlin's) does; it returned at once before.
            second = asyncio.ensure_future(sub.close())
            await asyncio.sleep(0.3)
            assert not waiting.done() and not second.done()  # the handler still runs
            go.set()
            await waiting
            await second
            assert sub.counters().acked == 1

    run(body)
