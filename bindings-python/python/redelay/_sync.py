"""The blocking API: Client, Queue, SyncSubscription (for Django, Flask, scripts).

Every call releases the GIL while it waits on Redis, so other Python threads keep running.
"""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple, Type, Union

from . import _runtime, _types
from ._native import (
    Counters,
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

__all__ = ["Client", "Queue", "SyncSubscription"]


class Client:
    """A blocking connection to one Redis: ``client = redelay.Client("redis://localhost:6379")``.

    Safe to share between threads. Options are those of :meth:`AsyncClient.connect`.
    """

    __slots__ = ("__weakref__", "_native")

    def __init__(
        self,
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
    ) -> None:
        """Connects to ``url`` (``redis://``, ``rediss://`` or ``unix://``); the options are
        those of :meth:`AsyncClient.connect` (``wait_for_replicas=(n, timeout)`` for publishes
        that survive a failover). Raises :class:`InvalidArgumentError` for a bad URL or option
        and :class:`ConnectionError` when Redis cannot be reached."""
        _runtime.read_log_level()
        self._native: NativeClient = NativeClient.connect(
            url,
            True,
            prefix,
            max_body_bytes,
            connect_timeout,
            response_timeout,
            default_max_attempts,
            default_ttr,
            default_backoff,
            wait_for_replicas,
        )
        _runtime.clients.add(self)

    def queue(self, name: str) -> Queue:
        """A handle to the queue ``name`` (1 to 128 bytes of ``A-Z a-z 0-9 _ - . :``)."""
        return Queue(self._native.queue(name))

    @property
    def prefix(self) -> str:
        """The key prefix of this client's queues."""
        return self._native.prefix

    def queues(self) -> List[str]:
        """Names of the queues published to under this prefix (a best-effort registry)."""
        result: List[str] = self._native.queues(True)
        return result

    def ping(self) -> None:
        """One round trip to Redis; raises if it is unreachable."""
        self._native.ping(True)

    def close(self) -> None:
        """Closes every subscription made through this client (they drain), then the
        connections; see :meth:`AsyncClient.close`."""
        self._native.close(True)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<redelay.Client prefix={self.prefix!r}>"


class Queue:
    """A blocking handle to one queue. Get it from :meth:`Client.queue`. The methods are those
    of :class:`AsyncQueue`, without ``await``."""

    __slots__ = ("_native",)

    def __init__(self, native: NativeQueue) -> None:
        self._native = native

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._native.name

    def publish(
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
        (an aware ``datetime``), or now. See :meth:`AsyncQueue.publish`."""
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
        result: Published = self._native.publish(_types.body(body), opts, True)
        return result

    def publish_batch(self, messages: Iterable[Union[Body, PublishItem]]) -> List[Published]:
        """Publishes many messages in one round trip; see :meth:`AsyncQueue.publish_batch`."""
        result: List[Published] = self._native.publish_batch([_types.item(m) for m in messages], True)
        return result

    def fetch(self, max: int = 1, *, wait: Seconds = 0, ttr: Optional[Seconds] = None) -> List[SyncMessage]:
        """Pulls up to ``max`` due messages, waiting up to ``wait`` for the first one."""
        result: List[SyncMessage] = self._native.fetch(max, wait, ttr, True)
        return result

    def ack(self, id: str, token: str) -> None:
        """Acknowledges a leased message by id and lease token."""
        self._native.ack(id, token, True)

    def nack(self, id: str, token: str, *, retry_in: Optional[Seconds] = None, reason: str = "") -> bool:
        """Nacks a leased message by id and lease token; True when it went to the dead letters."""
        result: bool = self._native.nack(id, token, retry_in, reason, True)
        return result

    def extend(self, id: str, token: str, ttr: Seconds) -> None:
        """Extends a lease by id and lease token to ``ttr`` from now."""
        self._native.extend(id, token, ttr, True)

    def cancel(self, id: str) -> bool:
        """Deletes a message wherever it is; False when there was no such id."""
        result: bool = self._native.cancel(id, True)
        return result

    def reschedule(self, id: str, *, delay: Optional[Seconds] = None, at: Optional[datetime] = None) -> datetime:
        """Gives a scheduled or ready message a new due time; returns it."""
        result: datetime = self._native.reschedule(id, delay, at, True)
        return result

    def peek(self, id: str) -> Optional[MessageInfo]:
        """Looks at a message without changing it; None when there is no such id."""
        result: Optional[MessageInfo] = self._native.peek(id, True)
        return result

    def stats(self) -> Stats:
        """Counts of the queue."""
        result: Stats = self._native.stats(True)
        return result

    def dead_letters(self, limit: Optional[int] = None, *, offset: Optional[int] = None) -> List[MessageInfo]:
        """Dead letters, the oldest death first."""
        result: List[MessageInfo] = self._native.dead_letters(limit, offset, True)
        return result

    def respawn(self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False) -> int:
        """Brings dead letters back: ``ids``, the ``oldest`` N, or ``all=True``. Returns how many."""
        result: int = self._native.respawn(None if ids is None else list(ids), oldest, all, True)
        return result

    def purge_dead(
        self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False
    ) -> int:
        """Deletes dead letters: ``ids``, the ``oldest`` N, or ``all=True``. Returns how many."""
        result: int = self._native.purge_dead(None if ids is None else list(ids), oldest, all, True)
        return result

    def destroy(self) -> None:
        """Deletes the queue: every message in every state, and its name from the registry."""
        self._native.destroy(True)

    def verify(self) -> VerifyReport:
        """Checks the queue's invariant atomically (O(n): for tests and maintenance)."""
        result: VerifyReport = self._native.verify(True)
        return result

    def subscribe(
        self,
        handler: Callable[[SyncMessage], Any],
        *,
        concurrency: Optional[int] = None,
        prefetch: Optional[int] = None,
        ttr: Optional[Seconds] = None,
        drain_timeout: Optional[Seconds] = None,
        max_idle: Optional[Seconds] = None,
    ) -> SyncSubscription:
        """Starts consuming in the background: ``handler`` (a plain ``def``) runs in a thread
        pool for every due message, up to ``concurrency`` at a time. Returning acks; raising
        nacks (see :meth:`AsyncQueue.subscribe`). For ``async def`` handlers use
        :class:`AsyncClient`. The subscription runs until closed."""
        if not callable(handler):
            raise TypeError(f"handler: expected a callable, got {type(handler).__name__}")
        if is_async_callable(handler):
            raise TypeError("handler: an async def handler needs an event loop; subscribe with redelay.AsyncClient")
        native = self._native.subscribe(None, concurrency, prefetch, ttr, drain_timeout, max_idle, True)
        return SyncSubscription(native, self.name, _runtime.ThreadRunner(handler, native, self.name))

    def __repr__(self) -> str:
        return f"<redelay.Queue {self.name!r}>"


class SyncSubscription:
    """A running subscription of the blocking API. Stop it with :meth:`close` or by leaving
    ``with``."""

    def __init__(self, native: NativeSubscription, queue: str, runner: _runtime.ThreadRunner) -> None:
        self._native = native
        self._queue = queue
        self._done = runner.stopped

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

    def close(self, timeout: Optional[Seconds] = None) -> None:
        """Stops fetching and waits for running handlers (up to the drain timeout, or
        ``timeout``)."""
        self._native.close(True, timeout)
        self._done.wait(5)  # the feeder thread sees the close at once

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the subscription is closed (by another thread, or its client) or ``timeout`` passes;
        returns True when closed. Ctrl-C raises KeyboardInterrupt here; ``with`` then closes."""
        return self._done.wait(timeout)

    def __enter__(self) -> SyncSubscription:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<redelay.SyncSubscription queue={self._queue!r} {state}>"
