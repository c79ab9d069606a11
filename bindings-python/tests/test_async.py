"""The asyncio API: AsyncClient, AsyncQueue, Subscription, both handler styles."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
import weakref
from typing import Any, Awaitable, Callable, List

import pytest

import redelay

from conftest import run


async def connect(url: str, prefix: str) -> redelay.AsyncClient:
    return await redelay.AsyncClient.connect(url, prefix=prefix)


async def wait_until(cond, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_async_handler_runs_on_the_callers_loop(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("async-h")
        loop = asyncio.get_running_loop()
        main = threading.get_ident()
        seen: List[tuple] = []  # type: ignore[type-arg]

        async def handler(msg: redelay.Message) -> None:
            assert isinstance(msg, redelay.Message)
            seen.append((asyncio.get_running_loop() is loop, threading.get_ident() == main, msg.body))
            await asyncio.sleep(0.001)

        await q.publish_batch([b"a", b"b", b"c"])
        async with q.subscribe(handler, concurrency=2) as sub:
            await wait_until(lambda: len(seen) == 3)
        assert sorted(seen) == [(True, True, b"a"), (True, True, b"b"), (True, True, b"c")]
        assert sub.closed
        await wait_until(lambda: sub.counters().acked == 3)
        assert (await q.stats()).total == 0

    run(body)


def test_sync_handler_runs_in_a_thread_never_on_the_loop(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("sync-h")
        main = threading.get_ident()
        seen: List[tuple] = []  # type: ignore[type-arg]
        ticks = 0

        def handler(msg: redelay.SyncMessage) -> None:
            assert isinstance(msg, redelay.SyncMessage)
            try:
                asyncio.get_running_loop()
                on_loop = True
            except RuntimeError:
                on_loop = False
            time.sleep(0.2)  # blocking: must not stall the event loop
            seen.append((on_loop, threading.get_ident() == main, msg.body))

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.ensure_future(ticker())
        await q.publish(b"x")
        sub = await q.subscribe(handler)
        await wait_until(lambda: len(seen) == 1)
        await sub.close()
        t.cancel()
        assert seen == [(False, False, b"x")]
        assert ticks >= 10  # the loop kept running while the handler blocked

    run(body)


def test_failing_handler_is_nacked_with_its_text_and_the_worker_goes_on(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("fails")
        ok: List[bytes] = []

        async def handler(msg: redelay.Message) -> None:
            if msg.body == b"boom":
                raise RuntimeError("kaboom 42")
            ok.append(msg.body)

        await q.publish(b"boom", id="boom-1", max_attempts=3)
        await q.publish_batch([b"n%d" % i for i in range(10)])
        sub = await q.subscribe(handler, concurrency=3)
        await wait_until(lambda: len(ok) == 10)
        await wait_until(lambda: sub.counters().nacked >= 1)
        await sub.close()
        info = await q.peek("boom-1")
        assert info is not None
        assert info.last_error == "RuntimeError: kaboom 42"
        assert info.attempts == 1 and info.state == "scheduled"  # retried after backoff

    run(body)


def test_manual_settle_inside_the_handler(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("manual")
        results: List[str] = []

        async def handler(msg: redelay.Message) -> None:
            await msg.extend(10)
            dead = await msg.nack(reason="no thanks")
            results.append(f"dead={dead}")

        await q.publish(b"x", id="m-1", max_attempts=1)
        async with q.subscribe(handler) as sub:
            await wait_until(lambda: len(results) == 1)
        assert results == ["dead=True"]
        dead = await q.dead_letters(10)
        assert [(d.id, d.last_error) for d in dead] == [("m-1", "no thanks")]
        assert sub.counters().acked == 0

    run(body)


def test_async_fetch_ack_nack_and_lease_lost(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("pull")
        await q.publish_batch([b"1", b"2"])
        msgs = await q.fetch(5, wait=1)
        assert sorted(m.body for m in msgs) == [b"1", b"2"]
        await msgs[0].ack()
        with pytest.raises(redelay.LeaseLostError):
            await msgs[0].ack()
        assert await msgs[1].nack(retry_in=0, reason="later") is False
        again = await q.fetch(1, wait=2)
        assert again[0].attempt == 2 and again[0].last_error == "later"
        await again[0].release()
        again = await q.fetch(1, wait=2)
        assert again[0].attempt == 2, "a release counts no attempt"
        await q.ack(again[0].id, again[0].token)
        assert (await q.stats()).total == 0
        assert (await q.verify()).ok

    run(body)


async def _cancelled_after_redis_leased(q: Any, fetch: Callable[[], Awaitable[List[Any]]]) -> None:
    """Cancels ``fetch()`` while the loop is blocked and the core leases a message of ``q`` for
    it, so that its result cannot be set before the caller gives up; the message must come back
    due now, no attempt counted, and ``fetch()`` then gets it as attempt 1."""
    await q.publish(b"x", id="c-1", ttr=60)
    task = asyncio.ensure_future(fetch())
    await asyncio.sleep(0)  # the task starts the native call, then awaits it
    time.sleep(0.5)  # noqa: ASYNC251 (blocking the loop is the point)
    task.cancel()
    state = None
    for _ in range(200):  # up to 10 s
        info = await q.peek("c-1")
        assert info is not None and info.attempts == 0
        state = info.state
        if state == "ready":
            break
        await asyncio.sleep(0.05)
    assert state == "ready", "given back, not leased to nobody for 60 s"
    got = await fetch()
    assert (got[0].id, got[0].queue, got[0].attempt) == ("c-1", q.name, 1)
    await got[0].ack()


def test_a_fetch_cancelled_after_redis_leased_gives_the_message_back(url: str, prefix: str) -> None:
    async def body() -> None:
        q = (await connect(url, prefix)).queue("cancel-late")
        await _cancelled_after_redis_leased(q, lambda: q.fetch(1))

    run(body)


def test_a_pull_from_several_queues_cancelled_after_redis_leased_gives_the_message_back(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("cancel-late-many")
        await _cancelled_after_redis_leased(q, lambda: c.fetch(["cancel-other", "cancel-late-many"]))

    run(body)


def test_a_subscribe_never_awaited_warns_and_consumes_nothing(url: str, prefix: str) -> None:
    """``q.subscribe(handler)`` without ``await`` (or ``async with``) starts nothing; as for a
    coroutine never awaited, Python is told so with a RuntimeWarning when it is dropped."""

    async def handle(msg: redelay.Message) -> None:
        raise AssertionError("never runs")

    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("subscribe-never-awaited")
        await q.publish(b"x", id="a")
        with pytest.warns(RuntimeWarning, match="subscribe\\(\\) was never awaited"):
            q.subscribe(handle)  # dropped at once
            c.subscribe(["subscribe-never-awaited"], handle)
        started = q.subscribe(handle)
        async with started:  # started: no warning when it is dropped
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            del started
        stats = await q.stats()
        assert (stats.ready, stats.leased) == (1, 0)
        await c.close()

    run(body)


def test_a_closed_subscription_and_its_client_are_freed(url: str, prefix: str) -> None:
    """An ``async def`` handler's runner and the native subscription refer to each other through
    Rust (its wake), which Python's collector cannot see: once the subscription is closed that
    link is let go of, so they are freed (they once stayed, with the client's connection)."""
    refs: List[Any] = []

    async def handle(msg: redelay.Message) -> None:
        await msg.ack()

    async def body() -> None:
        c = await connect(url, prefix)
        sub = await c.queue("freed").subscribe(handle)
        refs.extend([weakref.ref(sub), weakref.ref(sub._runner), weakref.ref(c)])
        await sub.close()
        await c.close()

    run(body)
    deadline = time.monotonic() + 10
    while any(r() is not None for r in refs) and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert [r() for r in refs] == [None, None, None]


def test_a_fetch_never_awaited_leases_nothing(url: str, prefix: str) -> None:
    """``q.fetch()`` and ``client.fetch()`` are coroutines: one made and dropped unawaited never
    runs, so no message is leased to nobody (an attempt counted, held until its ttr)."""

    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("never-awaited")
        await q.publish(b"x", id="a")
        unawaited = [q.fetch(1), c.fetch(["never-awaited"])]
        await asyncio.sleep(0.3)
        for co in unawaited:
            co.close()  # what dropping it does, without the "never awaited" warning
        stats = await q.stats()
        assert (stats.ready, stats.leased) == (1, 0)
        got = await q.fetch(1)
        assert [m.id for m in got] == ["a"] and got[0].attempt == 1

    run(body)


def test_a_settle_whose_caller_is_cancelled_still_reaches_redis(url: str, prefix: str) -> None:
    """A settle is sent when called: cancelling the task that awaits it loses only the answer
    (as in Kotlin: one rule in the core)."""

    async def body() -> None:
        q = (await connect(url, prefix)).queue("cancel-settle")
        await q.publish_batch([{"body": b"x", "id": f"m{i}"} for i in range(20)])
        got = await q.fetch(20, wait=5)
        assert len(got) == 20
        for i, m in enumerate(got):
            settle = m.ack() if i % 2 else m.nack(retry_in=3600, reason="cancelled caller")
            task = asyncio.ensure_future(settle)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        stats = await q.stats()
        for _ in range(500):  # up to 5 s
            if stats.scheduled == 10 and stats.total == 10:
                break
            await asyncio.sleep(0.01)
            stats = await q.stats()
        assert (stats.total, stats.scheduled, stats.leased) == (10, 10, 0)

    run(body)


def test_cancelling_the_task_waiting_on_a_subscription_closes_it(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("cancel-wait")

        async def handler(msg: redelay.Message) -> None:
            pass

        sub = await q.subscribe(handler)
        task = asyncio.ensure_future(sub.wait())
        await asyncio.sleep(0.05)
        assert not sub.closed
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert sub.closed

        started = asyncio.Event()

        async def consumer() -> None:
            async with q.subscribe(handler) as s2:
                holder.append(s2)
                started.set()
                await asyncio.sleep(3600)

        holder: List[redelay.Subscription] = []
        t2 = asyncio.ensure_future(consumer())
        await started.wait()
        t2.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t2
        assert holder[0].closed

    run(body)


def test_close_waits_for_running_handlers(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("drain")
        finished: List[bytes] = []
        started = asyncio.Event()

        async def handler(msg: redelay.Message) -> None:
            started.set()
            await asyncio.sleep(0.3)
            finished.append(msg.body)

        await q.publish(b"slow")
        sub = await q.subscribe(handler)
        await started.wait()
        await sub.close()
        assert finished == [b"slow"]
        assert (await q.stats()).total == 0
        await sub.close()  # again: a no-op

    run(body)


def test_end_of_asyncio_run_closes_a_live_subscription(url: str, prefix: str) -> None:
    subs: List[redelay.Subscription] = []

    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("leftover")

        async def handler(msg: redelay.Message) -> None:
            pass

        subs.append(await q.subscribe(handler))

    asyncio.run(body())
    assert subs[0].closed


def test_threads_publish_with_the_sync_client_while_an_async_subscription_runs(url: str, prefix: str) -> None:
    n_threads, per_thread = 4, 150
    sync_client = redelay.Client(url, prefix=prefix)
    sq = sync_client.queue("mixed")

    def producer(k: int) -> None:
        for i in range(per_thread):
            if i % 50 == 0:
                sq.publish_batch([f"t{k}-b{i}-{j}" for j in range(5)])
            sq.publish(f"t{k}-{i}", delay=0.001 * (i % 3))

    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("mixed")
        got: List[str] = []

        async def handler(msg: redelay.Message) -> None:
            got.append(msg.body.decode())

        expected = n_threads * per_thread + n_threads * 3 * 5
        async with q.subscribe(handler, concurrency=16):
            threads = [threading.Thread(target=producer, args=(k,)) for k in range(n_threads)]
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):  # noqa: ASYNC110 (threads: polled, not awaited)
                await asyncio.sleep(0.01)
            for t in threads:
                t.join()
            await wait_until(lambda: len(got) >= expected, timeout=20)
        assert len(got) == expected
        assert len(set(got)) == expected
        await wait_until(lambda: True)
        stats = await q.stats()
        assert stats.total == 0, stats

    run(body, timeout=60)


def test_subscribe_validates_in_the_core(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("validate")

        async def handler(msg: redelay.Message) -> None:
            pass

        with pytest.raises(redelay.InvalidArgumentError, match="concurrency"):
            await q.subscribe(handler, concurrency=0)
        with pytest.raises(redelay.InvalidArgumentError, match="ttr"):
            await q.subscribe(handler, ttr=0.001)
        with pytest.raises(TypeError):
            await q.subscribe("not callable")  # type: ignore[arg-type]

    run(body)


def test_handler_still_running_after_the_drain_timeout_is_cancelled(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("drain-timeout")
        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def handler(msg: redelay.Message) -> None:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        await q.publish(b"stuck", ttr=5)
        sub = await q.subscribe(handler, drain_timeout=0.2)
        await started.wait()
        t0 = time.monotonic()
        await sub.close()
        assert time.monotonic() - t0 < 2
        await asyncio.wait_for(cancelled.wait(), 5)
        info = await q.stats()
        assert info.total == 1  # not acked: delivered again after its lease

    run(body)


def test_async_handlers_see_the_subscribers_context_variables(url: str, prefix: str) -> None:
    import contextvars

    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")

    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("ctxvars")
        seen: List[str] = []

        async def handler(msg: redelay.Message) -> None:
            seen.append(request_id.get())
            request_id.set("changed by a handler")  # must not leak into the next one

        request_id.set("from-subscriber")
        await q.publish_batch([b"1", b"2"])
        async with q.subscribe(handler, concurrency=1):
            await wait_until(lambda: len(seen) == 2)
        assert seen == ["from-subscriber", "from-subscriber"]

    run(body)


def test_handler_returning_a_future_or_failing_synchronously(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await connect(url, prefix)
        q = c.queue("awaitables")
        seen: List[bytes] = []

        class Handler:
            async def __call__(self, msg: redelay.Message) -> None:  # detected as async
                seen.append(msg.body)

        def returns_future(msg: redelay.SyncMessage) -> Awaitable[None]:
            seen.append(msg.body)
            return asyncio.sleep(0)

        await q.publish(b"callable-object")
        async with q.subscribe(Handler()):
            await wait_until(lambda: seen == [b"callable-object"])
        # A plain def is a sync handler (run in a thread): returning an awaitable is a failure.
        await q.publish(b"future", id="fut-1", max_attempts=1)
        async with q.subscribe(returns_future):
            await wait_until(lambda: len(seen) == 2)
        dead = await q.dead_letters(10)
        assert [d.id for d in dead] == ["fut-1"]
        assert "awaitable" in (dead[0].last_error or "")

    run(body)


def test_async_messages_in_order_and_a_break_gives_back_the_rest(url: str, prefix: str) -> None:
    async def body() -> None:
        q = (await connect(url, prefix)).queue("stream")
        await q.publish_batch([{"body": b"x", "id": f"s{i}", "ttr": 60} for i in range(4)])
        got: List[redelay.Message] = []
        async for m in q.messages(batch=3):
            assert isinstance(m, redelay.Message) and m.attempt == 1
            got.append(m)
            if len(got) == 2:
                break  # s2 was fetched with them and not given out: handed back
        assert [m.id for m in got] == ["s0", "s1"]
        for m in got:
            await m.ack()

        async def s2_back() -> bool:
            info = await q.peek("s2")
            assert info is not None and info.attempts == 0
            return info.state == "ready"

        deadline = time.monotonic() + 10
        while not await s2_back():
            assert time.monotonic() < deadline, "s2 given back, not leased to nobody for 60 s"
            await asyncio.sleep(0.02)
        async with q.messages(batch=2, wait=0.2) as stream:
            rest = [await stream.__anext__(), await stream.__anext__()]
        assert [(m.id, m.attempt) for m in rest] == [("s2", 1), ("s3", 1)]
        assert [m async for m in stream] == [], "closed: it ends"
        for m in rest:
            await m.ack()
        with pytest.raises(redelay.InvalidArgumentError, match=r"^batch: must be 1 to 1000, got 1001$"):
            q.messages(batch=1001)

    run(body)


def test_async_messages_cancelled_after_redis_leased_gives_the_message_back(url: str, prefix: str) -> None:
    async def body() -> None:
        q = (await connect(url, prefix)).queue("stream-cancel-late")
        stream = q.messages(wait=10)

        async def one() -> List[redelay.Message]:
            return [await stream.__anext__()]

        await _cancelled_after_redis_leased(q, one)
        await stream.aclose()

    run(body)


def test_async_messages_closed_from_another_task_ends_the_waiting_loop(url: str, prefix: str) -> None:
    async def body() -> None:
        q = (await connect(url, prefix)).queue("stream-close-waiting")
        stream = q.messages(wait=120)  # one fetch would wait two minutes
        got: List[redelay.Message] = []

        async def consume() -> None:
            async for m in stream:
                got.append(m)

        task = asyncio.get_running_loop().create_task(consume())
        await asyncio.sleep(0.3)
        assert not task.done(), "nothing is due: the loop waits"
        # Bounded only so that a close that does not reach the waiting loop fails, not hangs.
        await asyncio.wait_for(stream.aclose(), 30)
        await asyncio.wait_for(task, 30)
        assert got == []
        await q.publish(b"x", id="after")
        assert (await q.stats()).leased == 0, "the closed stream takes nothing"

    run(body)
