"""The blocking API: Client, Queue, SyncSubscription (for Django, Flask, scripts).

Every call releases the GIL while it waits on Redis, so other Python threads keep running.
The calls themselves are those of the asyncio API (:mod:`redelay._ops`), without ``await``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional, Union

from . import _runtime
from ._native import DEFAULT_FETCH_MAX, NativeClient, NativeMessages, NativeSubscription, SyncMessage
from ._ops import (
    ClientOps,
    QueueOps,
    Sources,
    SubscriptionBase,
    Sync,
    connect_args,
    messages_args,
    queue_args,
    sources,
    start,
)
from ._types import ClientOptions, Queues, Seconds, SubscribeOptions, is_async_handler

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Client", "Queue", "SyncMessageStream", "SyncSubscription"]


class Client(ClientOps, Sync):
    """A blocking connection to one Redis: ``client = redelay.Client("redis://localhost:6379")``.

    Safe to share between threads. Options are those of :meth:`AsyncClient.connect`.
    """

    __slots__ = ("__weakref__", "_native")

    def __init__(self, url: str, **options: Unpack[ClientOptions]) -> None:
        """Connects to ``url`` (``redis://``, ``rediss://`` or ``unix://``) with the
        :class:`ClientOptions` given. Raises :class:`InvalidArgumentError` for a bad URL or
        option and :class:`ConnectionError` when Redis cannot be reached."""
        _runtime.read_log_level()
        self._native: NativeClient = NativeClient.connect(*connect_args(url, options), True)
        _runtime.clients.add(self)

    def queue(self, name: str, *, shards: int = 1) -> Queue:
        """A handle to the queue ``name``, spread over ``shards`` hash tags; see
        :meth:`AsyncClient.queue`."""
        return Queue(self._native.queue(*queue_args(name, shards)))

    def subscribe(
        self, queues: Queues, handler: Callable[[SyncMessage], Any], **options: Unpack[SubscribeOptions]
    ) -> SyncSubscription:
        """One subscription for several queues, in priority order or by weights; see
        :meth:`AsyncClient.subscribe` and :meth:`Queue.subscribe`."""
        return _subscribe(self._native, sources(queues), handler, options)

    def fetch(
        self,
        queues: Union[str, Iterable[str]],
        max: int = DEFAULT_FETCH_MAX,
        *,
        wait: Seconds = 0,
        ttr: Optional[Seconds] = None,
    ) -> List[SyncMessage]:
        """Pulls up to ``max`` due messages from the first of ``queues`` (names in priority
        order; a single ``str`` is one queue) that has any, waiting up to ``wait`` for the first
        one; each message's ``queue`` names it. See :meth:`AsyncClient.fetch`."""
        result: List[SyncMessage] = self._fetch(queues, max, wait, ttr)
        return result

    def close(self) -> None:
        """Closes every subscription made through this client (they drain), then the
        connections; see :meth:`AsyncClient.close`."""
        self._native.close(True)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Queue(QueueOps, Sync):
    """A blocking handle to one queue. Get it from :meth:`Client.queue`. The methods are those
    of :class:`AsyncQueue`, without ``await``."""

    __slots__ = ()

    def fetch(
        self, max: int = DEFAULT_FETCH_MAX, *, wait: Seconds = 0, ttr: Optional[Seconds] = None
    ) -> List[SyncMessage]:
        """Pulls up to ``max`` due messages, waiting up to ``wait`` for the first one."""
        result: List[SyncMessage] = self._fetch(max, wait, ttr)
        return result

    def messages(
        self, *, batch: Optional[int] = None, wait: Optional[Seconds] = None, ttr: Optional[Seconds] = None
    ) -> SyncMessageStream:
        """The queue's messages, one at a time: ``for msg in queue.messages(batch=10):``, each
        fetch blocking (GIL released) as :meth:`AsyncQueue.messages` waits.
        :meth:`SyncMessageStream.close`, the end of ``with`` (however the block ends) or Python
        freeing a stream nobody holds (the loop's own, at ``break``) hands back the fetched
        messages not yet given out: due now, no attempt counted."""
        return SyncMessageStream(self._native.messages(messages_args(batch, wait, ttr)))

    def subscribe(self, handler: Callable[[SyncMessage], Any], **options: Unpack[SubscribeOptions]) -> SyncSubscription:
        """Starts consuming in the background: ``handler`` (a plain ``def``) runs in a thread
        pool for every due message, up to ``concurrency`` at a time. Returning acks; raising
        nacks (see :meth:`AsyncQueue.subscribe`). For ``async def`` handlers use
        :class:`AsyncClient`. The subscription runs until closed."""
        return _subscribe(self._native.client, ([(self.name, self._native.shards)], None), handler, options)


class SyncMessageStream:
    """The messages of :meth:`Queue.messages`: an iterator of :class:`SyncMessage`, usable as
    ``with`` too (the block's end closes it). It never ends by itself."""

    __slots__ = ("_native",)

    def __init__(self, native: NativeMessages) -> None:
        self._native = native

    def __iter__(self) -> SyncMessageStream:
        return self

    def __next__(self) -> SyncMessage:
        """The next message: one fetched earlier and not given out yet, or the first of the
        next fetch that leases any (blocking, GIL released, as long as nothing is due)."""
        got: List[SyncMessage] = self._native.next(True)
        if not got:  # closed (by close, also from another thread while this one waited)
            raise StopIteration
        return got[0]

    def close(self) -> None:
        """Ends the stream, also from another thread while the loop waits (its iteration then
        ends): the messages fetched and not given out are handed back (due now, no
        attempt counted) before it returns. Iterating then ends at once; calling it again does
        nothing. A stream dropped unclosed (``break``) hands them back in the background."""
        self._native.close(True)

    def __enter__(self) -> SyncMessageStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _subscribe(
    client: NativeClient, src: Sources, handler: Callable[[SyncMessage], Any], options: Any
) -> SyncSubscription:
    if is_async_handler(handler):
        raise TypeError("handler: an async def handler needs an event loop; subscribe with redelay.AsyncClient")
    native: NativeSubscription = start(client, src, None, None, options, True)
    return SyncSubscription(native, _runtime.ThreadRunner(handler, native))


class SyncSubscription(SubscriptionBase):
    """A running subscription of the blocking API. Stop it with :meth:`close` or by leaving
    ``with``."""

    def __init__(self, native: NativeSubscription, runner: _runtime.ThreadRunner) -> None:
        super().__init__(native)
        self._runner = runner

    def close(self, timeout: Optional[Seconds] = None) -> None:
        """Stops fetching and waits for running handlers (up to the drain timeout, or
        ``timeout``: then it returns while they run on, and :meth:`wait` waits for the drain)."""
        if self._native.close(True, timeout):
            self._runner.stopped.wait(5)  # the feeder thread sees the close at once
            self._runner.drained.set()
        # else the drain goes on: the feeder sets ``drained`` when it is over (wait() waits)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the subscription is closed (by :meth:`close` in another thread, its
        client, or the core) or ``timeout`` passes; returns True when closed: stopped and
        drained (its running handlers finished, or the drain timeout passed; also after a
        :meth:`close` whose ``timeout`` passed first). Ctrl-C raises
        KeyboardInterrupt here; ``with`` then closes."""
        return self._runner.drained.wait(timeout)

    def __enter__(self) -> SyncSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
