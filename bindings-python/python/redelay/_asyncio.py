"""The asyncio API: AsyncClient, AsyncQueue, Subscription."""

from __future__ import annotations

import asyncio
import functools
import warnings
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generator, Iterable, List, Optional, Union

from . import _runtime
from ._native import DEFAULT_FETCH_MAX, Message, NativeClient, NativeMessages, NativeSubscription, SyncMessage
from ._ops import (
    Async,
    ClientOps,
    QueueOps,
    Sources,
    SubscriptionBase,
    connect_args,
    messages_args,
    queue_args,
    sources,
    start,
)
from ._types import ClientOptions, Queues, Seconds, SubscribeOptions, is_async_handler

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AsyncClient", "AsyncQueue", "MessageStream", "Subscription", "SubscribeCall", "AsyncHandler", "SyncHandler"]

#: An ``async def handler(msg: Message)``: runs on the event loop that called ``subscribe``.
AsyncHandler = Callable[[Message], Awaitable[Any]]
#: A plain ``def handler(msg: SyncMessage)``: runs in a thread pool, never on the event loop.
SyncHandler = Callable[[SyncMessage], Any]


class AsyncClient(ClientOps, Async):
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
    async def connect(cls, url: str, **options: Unpack[ClientOptions]) -> AsyncClient:
        """Connects to ``url`` (``redis://[user:password@]host[:port][/db]``, ``rediss://`` for
        TLS, ``unix:///path/redis.sock``) with the :class:`ClientOptions` given. Raises
        :class:`InvalidArgumentError` for a bad URL or option and :class:`ConnectionError` when
        Redis cannot be reached.
        """
        _runtime.read_log_level()
        return cls(await NativeClient.connect(*connect_args(url, options), False))

    def queue(self, name: str, *, shards: int = 1) -> AsyncQueue:
        """A handle to the queue ``name`` (1 to 128 bytes of ``A-Z a-z 0-9 _ - . :``), spread
        over ``shards`` hash tags (1 to 256; with more than 1, one queue uses many Redis Cluster
        masters; every client must open it with the same count)."""
        return AsyncQueue(self._native.queue(*queue_args(name, shards)))

    def subscribe(
        self, queues: Queues, handler: Union[AsyncHandler, SyncHandler], **options: Unpack[SubscribeOptions]
    ) -> SubscribeCall:
        """One subscription for several queues: ``["urgent", "default"]`` in strict priority
        order (always the first queue with a due message), or weights ``{"a": 5, "b": 1}`` (each
        picked in proportion among those with a due message). One ``concurrency`` for all; each
        message's ``queue`` says where it came from. Otherwise as :meth:`AsyncQueue.subscribe`."""
        return SubscribeCall(lambda: _subscribe(self._native, sources(queues), handler, options))

    async def fetch(
        self,
        queues: Union[str, Iterable[str]],
        max: int = DEFAULT_FETCH_MAX,
        *,
        wait: Seconds = 0,
        ttr: Optional[Seconds] = None,
    ) -> List[Message]:
        """Pulls up to ``max`` due messages from the first of ``queues`` that has any: names in
        priority order (a single ``str`` is one queue), each opened with the shard count stored
        in Redis. Waits up to ``wait`` for the first one, woken by a publish to any of them. All
        messages of one call come from one queue; each one's ``queue`` names it. Each is leased
        for its ttr (or ``ttr``), as by :meth:`AsyncQueue.fetch`; cancelling the call leaves
        nothing leased."""
        result: List[Message] = await self._fetch(queues, max, wait, ttr)
        return result

    async def close(self) -> None:
        """Closes every subscription made through this client (each stops fetching and drains:
        running handlers get their drain timeout), then the connections. Later calls raise
        :class:`ConnectionError` "client is closed". Calling it again waits for the same close."""
        await self._native.close(False)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncQueue(QueueOps, Async):
    """A handle to one queue, for asyncio code. Get it from :meth:`AsyncClient.queue`."""

    __slots__ = ()

    async def fetch(
        self, max: int = DEFAULT_FETCH_MAX, *, wait: Seconds = 0, ttr: Optional[Seconds] = None
    ) -> List[Message]:
        """Pulls up to ``max`` due messages, waiting up to ``wait`` for the first one. Each is
        leased for its ttr (or ``ttr``): ``ack``, ``nack`` or ``extend`` it before then, or it
        is delivered again. Cancelling the call (a timeout, ``asyncio.wait_for``) leaves nothing
        leased: what Redis leased for it is released, no attempt counted."""
        result: List[Message] = await self._fetch(max, wait, ttr)
        return result

    def messages(
        self, *, batch: Optional[int] = None, wait: Optional[Seconds] = None, ttr: Optional[Seconds] = None
    ) -> MessageStream:
        """The queue's messages, one at a time: ``async for msg in queue.messages(batch=10):``.
        Each fetch leases up to ``batch`` (1 to 1000; default 1) due messages, waiting up to
        ``wait`` (10 ms or more; default 1 s) for a first one and fetching again while nothing
        is due, so the iteration waits as long as the queue is empty. Each message is leased for
        its ttr (or ``ttr``): settle every one (``ack``, ``nack``). :meth:`MessageStream.aclose`,
        the end of ``async with`` (however the block ends) or Python freeing a stream nobody
        holds (the loop's own, at ``break``) hands back the fetched messages not yet given out:
        due now, no attempt counted; a stream kept in a variable stays open after ``break``
        until it is closed. Bad options raise :class:`InvalidArgumentError` here."""
        return MessageStream(self._native.messages(messages_args(batch, wait, ttr)))

    def subscribe(
        self, handler: Union[AsyncHandler, SyncHandler], **options: Unpack[SubscribeOptions]
    ) -> SubscribeCall:
        """Starts consuming: ``handler`` runs for every due message, up to ``concurrency`` at a
        time. Use as ``sub = await queue.subscribe(fn)`` or ``async with queue.subscribe(fn) as sub``.

        An ``async def`` handler runs on the calling event loop; a plain ``def`` handler runs in
        a thread pool (never on the loop) and receives a :class:`SyncMessage`; each ``async def``
        one runs as its own asyncio task. Returning acks the message; raising nacks it with
        ``"ExcType: text"`` as reason and retries it after its backoff (raise :class:`RetryLater`
        to choose the delay). ``KeyboardInterrupt`` and ``SystemExit`` give the message back (no
        attempt counted), close the subscription and go on out of the event loop. The options
        are :class:`SubscribeOptions`. The subscription runs until closed.
        """
        return SubscribeCall(
            lambda: _subscribe(self._native.client, ([(self.name, self._native.shards)], None), handler, options)
        )


class MessageStream:
    """The messages of :meth:`AsyncQueue.messages`: an async iterator of :class:`Message`,
    usable as ``async with`` too (the block's end closes it). It never ends by itself."""

    __slots__ = ("_native",)

    def __init__(self, native: NativeMessages) -> None:
        self._native = native

    def __aiter__(self) -> MessageStream:
        return self

    async def __anext__(self) -> Message:
        """The next message: one fetched earlier and not given out yet, or the first of the
        next fetch that leases any. Cancelling the call leaves nothing leased to nobody."""
        got: List[Message] = await self._native.next(False)
        if not got:  # closed (by aclose, also from another task while this one waited)
            raise StopAsyncIteration
        return got[0]

    async def aclose(self) -> None:
        """Ends the stream, also from another task while the loop waits (its iteration then
        ends): the messages fetched and not given out are handed back (due now, no
        attempt counted) before it returns. Iterating then ends at once; calling it again does
        nothing. A stream dropped unclosed (``break``) hands them back in the background."""
        await self._native.close(False)

    async def __aenter__(self) -> MessageStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _subscribe(
    client: NativeClient, src: Sources, handler: Union[AsyncHandler, SyncHandler], options: Any
) -> Subscription:
    loop = asyncio.get_running_loop()
    runner = _runtime.LoopRunner(handler, loop) if is_async_handler(handler) else None
    closing = asyncio.Event()  # set when the core reports that the subscription is closing
    native = await start(
        client, src, runner and runner.wake, functools.partial(loop.call_soon_threadsafe, closing.set), options, False
    )
    if runner is not None:
        runner.sub = native
    return Subscription(native, loop, runner or _runtime.ThreadRunner(handler, native), closing)


class SubscribeCall:
    """What :meth:`AsyncQueue.subscribe` returns: await it for a :class:`Subscription`, or use it
    as ``async with`` to close the subscription when the block ends."""

    __slots__ = ("_start", "_started", "_sub")
    _sub: Subscription  # set by __aenter__

    def __init__(self, start: Callable[[], Awaitable[Subscription]]) -> None:
        self._start = start
        self._started = False

    def __await__(self) -> Generator[Any, None, Subscription]:
        self._started = True
        return self._start().__await__()

    async def __aenter__(self) -> Subscription:
        self._started = True
        self._sub = await self._start()
        return self._sub

    def __del__(self) -> None:
        # As Python warns of a coroutine never awaited: this one is no coroutine, so it would not.
        if not self._started:
            warnings.warn("subscribe() was never awaited: the subscription did not start", RuntimeWarning, 2)

    async def __aexit__(self, *exc: object) -> None:
        await self._sub.close()


class Subscription(SubscriptionBase):
    """A running subscription. Stop it with ``await sub.close()`` or by leaving ``async with``.

    Closing stops fetching, hands back prefetched messages that did not start, and waits for
    running handlers (up to the drain timeout); what did not finish is delivered again after its
    lease runs out. Cancelling a task that awaits :meth:`wait` (or that is inside
    ``async with``) closes the subscription, and so does the end of ``asyncio.run``.
    """

    def __init__(
        self,
        native: NativeSubscription,
        loop: asyncio.AbstractEventLoop,
        runner: Union[_runtime.LoopRunner, _runtime.ThreadRunner],
        closing: asyncio.Event,
    ) -> None:
        super().__init__(native)
        self._runner = runner
        self._loop = loop
        self._closing_started = closing  # set when closing starts (here, by the client or the core)
        self._closed = asyncio.Event()  # set when the close is over (drained)
        self._watching = False
        # Closes the subscription when the loop shuts down (asyncio.run cancels leftover tasks),
        # and sees its close through (see wait).
        self._guard = loop.create_task(self.wait(), name=f"redelay-subscription-{self.queues[0]}")

    async def _do_close(self, timeout: Optional[Seconds]) -> None:
        drained = True
        try:
            drained = await self._native.close(False, timeout)
        finally:
            if isinstance(self._runner, _runtime.LoopRunner):
                self._runner.cancel_running()
            self._closing_started.set()
            if drained:  # else the drain goes on (timeout passed): wait() waits for it
                self._closed.set()

    async def close(self, timeout: Optional[Seconds] = None) -> None:
        """Stops fetching and waits for running handlers (up to the drain timeout, or
        ``timeout``: then it returns, running ``async def`` handlers are cancelled and ``def``
        ones run on, and :meth:`wait` waits for the drain). Calling it again waits for the same
        drain (up to its own ``timeout``), also after a close whose ``timeout`` passed. A
        handler cancelled meanwhile (the end of ``asyncio.run`` cancels every task) hands its
        message back: due again, no attempt counted."""
        if isinstance(self._runner, _runtime.LoopRunner):
            self._runner.closing = True
        # Each call is the core's close, which waits for the one drain, as the blocking API's
        # and the other languages' do; shielded: it goes on when the caller is cancelled.
        await asyncio.shield(asyncio.ensure_future(self._do_close(timeout)))

    async def wait(self) -> None:
        """Waits until the subscription is closed, by :meth:`close`, its client, or the core:
        stopped and drained (its running handlers finished, or the drain timeout passed; also
        after a :meth:`close` whose ``timeout`` passed first). Cancelling the task that waits
        closes it."""
        try:
            await self._closing_started.wait()
            if not self._watching:
                self._watching = True
                # The core's close, called again, waits for the same drain (on the runtime).
                self._native.close_then(functools.partial(self._loop.call_soon_threadsafe, self._closed.set))
            await self._closed.wait()
        except asyncio.CancelledError:
            await self.close()
            raise

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
