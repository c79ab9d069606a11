"""The asyncio API: AsyncClient, AsyncQueue, Subscription."""

from __future__ import annotations

import asyncio
from datetime import datetime
from types import TracebackType
from typing import Any, Awaitable, Callable, Generator, Iterable, List, Mapping, Optional, Tuple, Type, Union

from . import _runtime, _types
from ._native import (
    Counters,
    Message,
    MessageInfo,
    NativeClient,
    NativeQueue,
    NativeSubscription,
    Published,
    Stats,
    SyncMessage,
    VerifyReport,
)
from ._types import Body, PublishItem, Seconds, is_async_callable

__all__ = ["AsyncClient", "AsyncQueue", "Subscription", "SubscribeCall", "AsyncHandler", "SyncHandler"]

#: An ``async def handler(msg: Message)``: runs on the event loop that called ``subscribe``.
AsyncHandler = Callable[[Message], Awaitable[Any]]
#: A plain ``def handler(msg: SyncMessage)``: runs in a thread pool, never on the event loop.
SyncHandler = Callable[[SyncMessage], Any]


class AsyncClient:
    """A connection to one Redis, for asyncio code. Create it with :meth:`AsyncClient.connect`.

    One client is meant to be shared by the whole program: it multiplexes every call on one
    connection that reconnects by itself.
    """

    __slots__ = ("__weakref__", "_native")

    def __init__(self, native: NativeClient) -> None:
        """Wraps a native client; use :meth:`connect` instead."""
        self._native = native
        _runtime.clients.add(self)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        prefix: Optional[str] = None,
        max_body_bytes: Optional[int] = None,
        connect_timeout: Optional[Seconds] = None,
        response_timeout: Optional[Seconds] = None,
        default_max_attempts: Optional[int] = None,
        default_ttr: Optional[Seconds] = None,
        default_backoff: Optional[Tuple[Seconds, Seconds]] = None,
        wait_for_replicas: Optional[Tuple[int, Seconds]] = None,
    ) -> AsyncClient:
        """Connects to ``url`` (``redis://[user:password@]host[:port][/db]``, ``rediss://`` for
        TLS, ``unix:///path/redis.sock``).

        ``prefix`` namespaces every key (default ``"redelay"``); ``max_body_bytes`` is the
        largest body ``publish`` accepts (default 8 MiB); the ``default_*`` options apply to
        messages that do not set their own. ``wait_for_replicas=(n, timeout)`` makes every
        publish wait until ``n`` replicas have it (Redis ``WAIT``) and raise
        :class:`RedisError` when they do not confirm within ``timeout`` (the message is then
        stored on the master only: publish it again, with its id). Raises
        :class:`InvalidArgumentError` for a bad URL or option and :class:`ConnectionError` when
        Redis cannot be reached.
        """
        _runtime.read_log_level()
        native = await NativeClient.connect(
            url,
            False,
            prefix,
            max_body_bytes,
            connect_timeout,
            response_timeout,
            default_max_attempts,
            default_ttr,
            default_backoff,
            wait_for_replicas,
        )
        return cls(native)

    def queue(self, name: str) -> AsyncQueue:
        """A handle to the queue ``name`` (1 to 128 bytes of ``A-Z a-z 0-9 _ - . :``)."""
        return AsyncQueue(self._native.queue(name))

    @property
    def prefix(self) -> str:
        """The key prefix of this client's queues."""
        return self._native.prefix

    async def queues(self) -> List[str]:
        """Names of the queues published to under this prefix (a best-effort registry)."""
        result: List[str] = await self._native.queues(False)
        return result

    async def ping(self) -> None:
        """One round trip to Redis; raises if it is unreachable."""
        await self._native.ping(False)

    async def close(self) -> None:
        """Closes every subscription made through this client (each stops fetching and drains:
        running handlers get their drain timeout), then the connections. Later calls raise
        :class:`ConnectionError` "client is closed". Calling it again waits for the same close."""
        await self._native.close(False)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<redelay.AsyncClient prefix={self.prefix!r}>"


class AsyncQueue:
    """A handle to one queue, for asyncio code. Get it from :meth:`AsyncClient.queue`."""

    __slots__ = ("_native",)

    def __init__(self, native: NativeQueue) -> None:
        self._native = native

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._native.name

    async def publish(
        self,
        body: Body,
        *,
        delay: Optional[Seconds] = None,
        at: Optional[datetime] = None,
        id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        max_attempts: Optional[int] = None,
        ttr: Optional[Seconds] = None,
        backoff: Optional[Tuple[Seconds, Seconds]] = None,
        replace: bool = False,
    ) -> Published:
        """Publishes one message, due after ``delay`` (seconds or ``timedelta``) or at ``at``
        (an aware ``datetime``; a naive one raises :class:`InvalidArgumentError`), or now.

        ``body`` is ``bytes``/``bytearray``/``memoryview`` or ``str`` (sent as UTF-8). ``id``
        makes the publish idempotent: an existing id is reported as a duplicate and changes
        nothing, unless ``replace=True``. ``headers`` are string pairs carried along;
        ``max_attempts``, ``ttr`` (lease length) and ``backoff`` ``(base, max)`` override the
        client's defaults. Times are by the Redis clock.
        """
        opts = _types.options(
            delay=delay,
            at=at,
            id=id,
            headers=headers,
            max_attempts=max_attempts,
            ttr=ttr,
            backoff=backoff,
            replace=replace,
        )
        result: Published = await self._native.publish(_types.body(body), opts, False)
        return result

    async def publish_batch(self, messages: Iterable[Union[Body, PublishItem]]) -> List[Published]:
        """Publishes many messages in one round trip (up to 100,000). Each item is a body or a
        dict with ``publish``'s arguments as keys (``{"body": b"..", "delay": 5}``). One bad
        message refuses the whole batch and nothing is written."""
        result: List[Published] = await self._native.publish_batch([_types.item(m) for m in messages], False)
        return result

    async def fetch(self, max: int = 1, *, wait: Seconds = 0, ttr: Optional[Seconds] = None) -> List[Message]:
        """Pulls up to ``max`` due messages, waiting up to ``wait`` for the first one. Each is
        leased for its ttr (or ``ttr``): ``ack``, ``nack`` or ``extend`` it before then, or it
        is delivered again."""
        result: List[Message] = await self._native.fetch(max, wait, ttr, False)
        return result

    async def ack(self, id: str, token: str) -> None:
        """Acknowledges a leased message by id and lease token (see :meth:`Message.ack`)."""
        await self._native.ack(id, token, False)

    async def nack(self, id: str, token: str, *, retry_in: Optional[Seconds] = None, reason: str = "") -> bool:
        """Nacks a leased message by id and lease token; True when it went to the dead letters."""
        result: bool = await self._native.nack(id, token, retry_in, reason, False)
        return result

    async def extend(self, id: str, token: str, ttr: Seconds) -> None:
        """Extends a lease by id and lease token to ``ttr`` from now."""
        await self._native.extend(id, token, ttr, False)

    async def cancel(self, id: str) -> bool:
        """Deletes a message wherever it is; False when there was no such id."""
        result: bool = await self._native.cancel(id, False)
        return result

    async def reschedule(self, id: str, *, delay: Optional[Seconds] = None, at: Optional[datetime] = None) -> datetime:
        """Gives a scheduled or ready message a new due time; returns it. Raises
        :class:`NotFoundError` for an unknown id and :class:`InvalidArgumentError` for a leased
        or dead message."""
        result: datetime = await self._native.reschedule(id, delay, at, False)
        return result

    async def peek(self, id: str) -> Optional[MessageInfo]:
        """Looks at a message without changing it; None when there is no such id."""
        result: Optional[MessageInfo] = await self._native.peek(id, False)
        return result

    async def stats(self) -> Stats:
        """Counts of the queue (scheduled, ready, leased, dead ...)."""
        result: Stats = await self._native.stats(False)
        return result

    async def dead_letters(self, limit: Optional[int] = None, *, offset: Optional[int] = None) -> List[MessageInfo]:
        """Dead letters, the oldest death first: ``limit`` (default 100, at most 1000) from
        ``offset`` (default 0)."""
        result: List[MessageInfo] = await self._native.dead_letters(limit, offset, False)
        return result

    async def respawn(
        self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False
    ) -> int:
        """Brings dead letters back (attempts reset, due now): the given ``ids``, the
        ``oldest`` N, or ``all=True``. Returns how many."""
        result: int = await self._native.respawn(None if ids is None else list(ids), oldest, all, False)
        return result

    async def purge_dead(
        self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False
    ) -> int:
        """Deletes dead letters for good: the given ``ids``, the ``oldest`` N, or ``all=True``.
        Returns how many."""
        result: int = await self._native.purge_dead(None if ids is None else list(ids), oldest, all, False)
        return result

    async def destroy(self) -> None:
        """Deletes the queue: every message in every state, and its name from the registry."""
        await self._native.destroy(False)

    async def verify(self) -> VerifyReport:
        """Checks the queue's invariant atomically (O(n): for tests and maintenance)."""
        result: VerifyReport = await self._native.verify(False)
        return result

    def subscribe(
        self,
        handler: Union[AsyncHandler, SyncHandler],
        *,
        concurrency: Optional[int] = None,
        prefetch: Optional[int] = None,
        ttr: Optional[Seconds] = None,
        drain_timeout: Optional[Seconds] = None,
        max_idle: Optional[Seconds] = None,
    ) -> SubscribeCall:
        """Starts consuming: ``handler`` runs for every due message, up to ``concurrency`` at a
        time. Use as ``sub = await queue.subscribe(fn)`` or ``async with queue.subscribe(fn) as sub``.

        An ``async def`` handler runs on the calling event loop; a plain ``def`` handler runs in
        a thread pool (never on the loop) and receives a :class:`SyncMessage`. Returning acks
        the message; raising nacks it with the exception's text as reason and retries it after
        its backoff (raise :class:`RetryLater` to choose the delay). ``prefetch`` messages are
        leased ahead (default: ``concurrency``); ``ttr`` overrides each message's lease length;
        ``drain_timeout`` bounds how long ``close`` waits for running handlers (default 30 s).
        The subscription runs until closed.
        """
        return SubscribeCall(lambda: self._subscribe(handler, concurrency, prefetch, ttr, drain_timeout, max_idle))

    async def _subscribe(
        self,
        handler: Union[AsyncHandler, SyncHandler],
        concurrency: Optional[int],
        prefetch: Optional[int],
        ttr: Optional[Seconds],
        drain_timeout: Optional[Seconds],
        max_idle: Optional[Seconds],
    ) -> Subscription:
        if not callable(handler):
            raise TypeError(f"handler: expected a callable, got {type(handler).__name__}")
        loop = asyncio.get_running_loop()
        runner = _runtime.LoopRunner(handler, loop) if is_async_callable(handler) else None
        wake = None if runner is None else runner.wake
        native = await self._native.subscribe(wake, concurrency, prefetch, ttr, drain_timeout, max_idle, False)
        if runner is None:
            return Subscription(native, self.name, loop, _runtime.ThreadRunner(handler, native, self.name))
        runner.sub = native
        return Subscription(native, self.name, loop, runner)

    def __repr__(self) -> str:
        return f"<redelay.AsyncQueue {self.name!r}>"


class SubscribeCall:
    """What :meth:`AsyncQueue.subscribe` returns: await it for a :class:`Subscription`, or use it
    as ``async with`` to close the subscription when the block ends."""

    __slots__ = ("_start", "_sub")

    def __init__(self, start: Callable[[], Awaitable[Subscription]]) -> None:
        self._start = start
        self._sub: Optional[Subscription] = None

    def __await__(self) -> Generator[Any, None, Subscription]:
        return self._start().__await__()

    async def __aenter__(self) -> Subscription:
        self._sub = await self._start()
        return self._sub

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._sub is not None:
            await self._sub.close()


class Subscription:
    """A running subscription. Stop it with ``await sub.close()`` or by leaving ``async with``.

    Closing stops fetching, hands back prefetched messages that did not start, and waits for
    running handlers (up to the drain timeout); what did not finish is delivered again after its
    lease runs out. Cancelling a task that awaits :meth:`wait` (or that is inside
    ``async with``) closes the subscription, and so does the end of ``asyncio.run``.
    """

    def __init__(
        self,
        native: NativeSubscription,
        queue: str,
        loop: asyncio.AbstractEventLoop,
        runner: Union[_runtime.LoopRunner, _runtime.ThreadRunner],
    ) -> None:
        self._native = native
        self._queue = queue
        self._runner = runner
        self._done = asyncio.Event()
        self._closing: Optional[asyncio.Future[None]] = None
        # Closes the subscription when the loop shuts down (asyncio.run cancels leftover tasks).
        self._guard = loop.create_task(self._guard_loop(), name=f"redelay-subscription-{queue}")

    @property
    def queue(self) -> str:
        """The name of the queue consumed."""
        return self._queue

    @property
    def closed(self) -> bool:
        """True once close was called."""
        return self._native.closed

    def counters(self) -> Counters:
        """Counts so far: delivered, acked, nacked, lease_lost, errors."""
        return self._native.counters()

    async def _guard_loop(self) -> None:
        try:
            await self._done.wait()
        except asyncio.CancelledError:
            await self._do_close(None)
            raise

    async def _do_close(self, timeout: Optional[Seconds]) -> None:
        try:
            await self._native.close(False, timeout)
        finally:
            if isinstance(self._runner, _runtime.LoopRunner):
                self._runner.cancel_running()
            self._done.set()

    async def close(self, timeout: Optional[Seconds] = None) -> None:
        """Stops fetching and waits for running handlers (up to the drain timeout, or
        ``timeout``). Calling it again waits for the same close."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._do_close(timeout))
        await asyncio.shield(self._closing)

    async def wait(self) -> None:
        """Waits until the subscription is closed. Cancelling the task that waits closes it."""
        try:
            while not self._done.is_set() and not self.closed:  # closed here or by the client
                try:
                    await asyncio.wait_for(self._done.wait(), 0.25)
                except asyncio.TimeoutError:
                    pass
        except asyncio.CancelledError:
            await self.close()
            raise

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<redelay.Subscription queue={self._queue!r} {state}>"
