# mypy: disable-error-code="no-any-return"
"""The calls of a client and of a queue, written once for both APIs.

Each method is an :class:`op`: on the asyncio classes (:class:`Async`) it returns an awaitable,
on the blocking ones (:class:`Sync`) it blocks (GIL released) and returns the value. The
native module does the switch: every call takes ``blocking``.
"""

from __future__ import annotations

import types
from datetime import datetime
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    ClassVar,
    Generic,
    Iterable,
    List,
    Optional,
    TypeVar,
    Union,
    overload,
)

from . import _types
from ._native import (
    Counters,
    MessageInfo,
    NativeClient,
    NativeQueue,
    NativeSubscription,
    Published,
    Stats,
    VerifyReport,
)
from ._types import Body, PublishItem, Seconds

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec, Unpack

    from ._types import PublishOptions

    P = ParamSpec("P")
else:
    P = TypeVar("P")  # a ParamSpec for the type checker only (Python 3.9 has none)
T = TypeVar("T")


class Async:
    """Marks the asyncio API's classes: their :class:`op` methods return awaitables."""

    __slots__ = ()
    _blocking: ClassVar[bool] = False


class Sync:
    """Marks the blocking API's classes: their :class:`op` methods block."""

    __slots__ = ()
    _blocking: ClassVar[bool] = True


class op(Generic[P, T]):
    """A method of both APIs: ``Callable[P, Awaitable[T]]`` on :class:`Async` classes,
    ``Callable[P, T]`` on :class:`Sync` ones."""

    def __init__(self, fn: Callable[Concatenate[Any, P], T]) -> None:
        self.fn, self.__doc__ = fn, fn.__doc__

    @overload
    def __get__(self, obj: None, owner: Any) -> op[P, T]: ...
    @overload
    def __get__(self, obj: Async, owner: Any) -> Callable[P, Awaitable[T]]: ...
    @overload
    def __get__(self, obj: Sync, owner: Any) -> Callable[P, T]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else types.MethodType(self.fn, obj)


class ClientOps:
    """The calls of :class:`AsyncClient` and :class:`Client`."""

    __slots__ = ()
    _native: NativeClient
    _blocking: ClassVar[bool]

    @property
    def prefix(self) -> str:
        """The key prefix of this client's queues."""
        return self._native.prefix

    @op
    def queues(self) -> List[str]:
        """Names of the queues published to under this prefix (a best-effort registry)."""
        return self._native.queues(self._blocking)

    @op
    def ping(self) -> None:
        """One round trip to Redis; raises if it is unreachable."""
        return self._native.ping(self._blocking)

    def __repr__(self) -> str:
        return f"<redelay.{type(self).__name__} prefix={self.prefix!r}>"


class QueueOps:
    """The calls of :class:`AsyncQueue` and :class:`Queue` (``fetch`` and ``subscribe`` are each
    API's own)."""

    __slots__ = ("_native",)
    _blocking: ClassVar[bool]

    def __init__(self, native: NativeQueue) -> None:
        self._native = native

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._native.name

    @op
    def publish(self, body: Body, **opts: Unpack[PublishOptions]) -> Published:
        """Publishes one message, due after ``delay`` (seconds or ``timedelta``) or at ``at``
        (an aware ``datetime``; a naive one raises :class:`InvalidArgumentError`), or now.

        ``body`` is ``bytes``/``bytearray``/``memoryview`` or ``str`` (sent as UTF-8). ``id``
        makes the publish idempotent: an existing id is reported as a duplicate and changes
        nothing, unless ``replace=True``. ``headers`` are string pairs carried along;
        ``max_attempts``, ``ttr`` (lease length) and ``backoff`` ``(base, max)`` override the
        client's defaults. Times are by the Redis clock.
        """
        return self._native.publish(_types.body(body), _types.options(**opts), self._blocking)

    @op
    def publish_batch(self, messages: Iterable[Union[Body, PublishItem]]) -> List[Published]:
        """Publishes many messages in one round trip (up to 100,000). Each item is a body or a
        dict with ``publish``'s arguments as keys (``{"body": b"..", "delay": 5}``). One bad
        message refuses the whole batch and nothing is written."""
        return self._native.publish_batch([_types.item(m) for m in messages], self._blocking)

    @op
    def ack(self, id: str, token: str) -> None:
        """Acknowledges a leased message by id and lease token (see :meth:`Message.ack`)."""
        return self._native.ack(id, token, self._blocking)

    @op
    def nack(self, id: str, token: str, *, retry_in: Optional[Seconds] = None, reason: str = "") -> bool:
        """Nacks a leased message by id and lease token; True when it went to the dead letters."""
        return self._native.nack(id, token, retry_in, reason, self._blocking)

    @op
    def extend(self, id: str, token: str, ttr: Seconds) -> None:
        """Extends a lease by id and lease token to ``ttr`` from now."""
        return self._native.extend(id, token, ttr, self._blocking)

    @op
    def cancel(self, id: str) -> bool:
        """Deletes a message wherever it is; False when there was no such id."""
        return self._native.cancel(id, self._blocking)

    @op
    def reschedule(self, id: str, *, delay: Optional[Seconds] = None, at: Optional[datetime] = None) -> datetime:
        """Gives a scheduled or ready message a new due time; returns it. Raises
        :class:`NotFoundError` for an unknown id and :class:`InvalidArgumentError` for a leased
        or dead message."""
        return self._native.reschedule(id, delay, at, self._blocking)

    @op
    def peek(self, id: str) -> Optional[MessageInfo]:
        """Looks at a message without changing it; None when there is no such id."""
        return self._native.peek(id, self._blocking)

    @op
    def stats(self) -> Stats:
        """Counts of the queue (scheduled, ready, leased, dead ...)."""
        return self._native.stats(self._blocking)

    @op
    def dead_letters(self, limit: Optional[int] = None, *, offset: Optional[int] = None) -> List[MessageInfo]:
        """Dead letters, the oldest death first: ``limit`` (default 100, at most 1000) from
        ``offset`` (default 0)."""
        return self._native.dead_letters(limit, offset, self._blocking)

    @op
    def respawn(self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False) -> int:
        """Brings dead letters back (attempts reset, due now): the given ``ids``, the
        ``oldest`` N, or ``all=True``. Returns how many."""
        return self._native.respawn(None if ids is None else list(ids), oldest, all, self._blocking)

    @op
    def purge_dead(
        self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False
    ) -> int:
        """Deletes dead letters for good: the given ``ids``, the ``oldest`` N, or ``all=True``.
        Returns how many."""
        return self._native.purge_dead(None if ids is None else list(ids), oldest, all, self._blocking)

    @op
    def destroy(self) -> None:
        """Deletes the queue: every message in every state, and its name from the registry."""
        return self._native.destroy(self._blocking)

    @op
    def verify(self) -> VerifyReport:
        """Checks the queue's invariant atomically (O(n): for tests and maintenance)."""
        return self._native.verify(self._blocking)

    def __repr__(self) -> str:
        return f"<redelay.{type(self).__name__} {self.name!r}>"


class SubscriptionBase:
    """What both APIs' subscriptions share."""

    def __init__(self, native: NativeSubscription, queue: str) -> None:
        self._native, self._queue = native, queue

    @property
    def queue(self) -> str:
        """The name of the queue consumed (the first one, for several queues)."""
        return self._queue

    @property
    def closed(self) -> bool:
        """True once close was called."""
        return self._native.closed

    def counters(self) -> Counters:
        """Counts so far: delivered, acked, nacked, lease_lost, errors."""
        return self._native.counters()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<redelay.{type(self).__name__} queue={self._queue!r} {state}>"
