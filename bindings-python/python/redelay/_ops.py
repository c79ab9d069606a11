# mypy: disable-error-code="no-any-return"
"""The calls of a client and of a queue, written once for both APIs.

Each method is an :class:`op`: on the asyncio classes (:class:`Async`) it returns an awaitable,
on the blocking ones (:class:`Sync`) it blocks (GIL released) and returns the value. The
native module does the switch: every call takes ``blocking``. Arguments and results cross in
the core's wire form (:mod:`redelay._results`).
"""

from __future__ import annotations

import json
import types
from datetime import datetime
from functools import partial, update_wrapper
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    ClassVar,
    Dict,
    Generic,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from . import _native, _runtime, _types
from ._errors import RedelayError, _WrongType
from ._native import DEFAULT_PAGE_LIMIT, NativeClient, NativeQueue, NativeSubscription
from ._results import (
    BulkReport,
    Counters,
    HistoryPoint,
    ListPage,
    MessageInfo,
    Published,
    SearchPage,
    State,
    Stats,
    VerifyReport,
    _same,
    checked,
    dumps,
    many,
    of,
    text,
    time,
    wire,
)
from ._types import Body, PublishItem, Queues, SearchQuery, Seconds

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec, Unpack

    from ._types import PublishOptions

    P = ParamSpec("P")
else:
    P = TypeVar("P")  # a ParamSpec for the type checker only (Python 3.9 has none)
T = TypeVar("T")


async def _then(fut: Awaitable[str], conv: Callable[[Any], T]) -> T:
    return conv(json.loads(await fut))


def _answer(raw: Any, blocking: bool, conv: Callable[[Any], Any]) -> Any:
    """A native call's result (JSON text, or an awaitable of it) through ``conv``."""
    return conv(json.loads(raw)) if blocking else _then(raw, conv)


def connect_args(url: str, options: Mapping[str, Any]) -> Tuple[str, str]:
    """The native ``connect`` call's arguments: the URL, and the options as JSON, each checked as
    it is converted."""
    return _str(url, "url"), dumps(_types.options(options, _types.ClientOptions))


def queue_args(name: str, shards: int) -> Tuple[str, str]:
    """The native ``queue`` call's arguments: the name, and ``{"shards"}`` as JSON, each checked
    as it is converted (a lone surrogate or a NaN names its field)."""
    return _str(name, "queue name"), dumps(checked({"shards": shards}))


def _str(v: Any, field: str) -> str:
    """A str argument, checked as :func:`value` checks one; another type (None too) is refused
    naming ``field``."""
    if not isinstance(v, str):
        raise _WrongType(f"{field}: invalid type: {type(v).__name__}, expected a str")
    return text(v, field)


def _ids(ids: Optional[Iterable[str]]) -> Optional[List[str]]:
    """Ids as a list; a single str is refused (it would be read as one id per character)."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"ids: expected a list of ids, got {type(ids).__name__} {ids!r}")
    return None if ids is None else [*ids]


def names(queues: Union[str, Iterable[str]]) -> List[str]:
    """Queue names in priority order, as a list; a single str is one queue (as ``subscribe``
    takes it). A mapping is refused: weights have no meaning here."""
    if isinstance(queues, str):
        return [text(queues, "queues")]
    if isinstance(queues, (bytes, Mapping)):
        raise TypeError(f"queues: expected queue names in priority order, got {type(queues).__name__}")
    out = [*queues]
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"queues: expected queue names (str), got {type(n).__name__} {n!r}")
        text(n, "queues")
    return out


def fetch_args(max: int, wait: Seconds, ttr: Optional[Seconds]) -> str:
    """A fetch's arguments in the core's wire form (``max``, ``wait_ms``, ``ttr_ms``), as JSON."""
    return dumps(wire({"max": max, "wait": wait, "ttr": ttr}))


def messages_args(batch: Optional[int], wait: Optional[Seconds], ttr: Optional[Seconds]) -> str:
    """A message stream's options in the core's wire form (``batch``, ``wait_ms``, ``ttr_ms``;
    None: the core's default), as JSON."""
    return dumps(wire({"batch": batch, "wait": wait, "ttr": ttr}))


def _select(ids: Optional[Iterable[str]], oldest: Optional[int], all: bool) -> Dict[str, Any]:
    return checked({"ids": _ids(ids), "oldest": oldest, "all": all})


def _expiry(expires_in: Optional[Seconds], clear_expiry: bool) -> Dict[str, Any]:
    """A respawn's expiry in wire form (neither: each message keeps its own)."""
    return wire({"expires_in": expires_in, "clear_expiry": clear_expiry or None})


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
    ``Callable[P, T]`` on :class:`Sync` ones. It reads as the function it wraps (name, doc,
    ``__wrapped__``), so ``help()`` and ``inspect.signature`` show its parameters, and
    ``Queue.ack(q, id, token)`` calls it as a plain method would."""

    def __init__(self, fn: Callable[Concatenate[Any, P], T]) -> None:
        self.fn = fn
        update_wrapper(self, fn)

    def __call__(self, obj: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        return self.__get__(obj, type(obj))(*args, **kwargs)

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
        return self._call("queues")

    @op
    def ping(self) -> None:
        """One round trip to Redis; raises if it is unreachable."""
        return self._call("ping")

    def _call(self, op: str) -> Any:
        """The core's client call ``op``; its result in wire form."""
        return _answer(self._native.call(op, self._blocking), self._blocking, _same)

    def _fetch(self, queues: Union[str, Iterable[str]], max: int, wait: Seconds, ttr: Optional[Seconds]) -> Any:
        """The core's pull from the first of several queues with due messages: the deliveries,
        or an awaitable of them."""
        return self._native.fetch(names(queues), fetch_args(max, wait, ttr), self._blocking)

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

    def _call(self, op: str, args: Any, conv: Callable[[Any], Any] = _same, bodies: List[bytes] = []) -> Any:  # noqa: B006
        """The core's call ``op`` with ``args`` in wire form (from ``wire`` or ``checked``); its
        result through ``conv``."""
        return _answer(self._native.call(op, dumps(args), bodies, self._blocking), self._blocking, conv)

    def _fetch(self, max: int, wait: Seconds, ttr: Optional[Seconds]) -> Any:
        """The core's fetch: the deliveries, or an awaitable of them."""
        return self._native.fetch(fetch_args(max, wait, ttr), self._blocking)

    @op
    def publish(self, body: Body, **opts: Unpack[PublishOptions]) -> Published:
        """Publishes one message, due after ``delay`` (seconds or ``timedelta``) or at ``at``
        (an aware ``datetime``; a naive one raises :class:`InvalidArgumentError`), or now.

        ``body`` is ``bytes``/``bytearray``/``memoryview`` or ``str`` (sent as UTF-8). ``id``
        makes the publish idempotent: an existing id is reported as a duplicate and changes
        nothing, unless ``replace=True``. ``headers`` are string pairs carried along;
        ``max_attempts``, ``ttr`` (lease length) and ``backoff`` ``(base, max)`` override the
        client's defaults. ``expires_in`` (a duration) or ``expires_at`` (a time): a message not
        delivered by then never is; it becomes a dead letter with the reason "expired", or is
        deleted with ``drop_on_expiry=True``. Times are by the Redis clock.
        """
        return self._call("publish", _types.options(opts), partial(of, Published), [_types.body(body)])

    @op
    def publish_batch(self, messages: Iterable[Union[Body, PublishItem]]) -> List[Published]:
        """Publishes many messages in one round trip (up to 100,000). Each item is a body or a
        dict with ``publish``'s arguments as keys (``{"body": b"..", "delay": 5}``). One bad
        message refuses the whole batch and nothing is written. A single body (``str``,
        ``bytes`` ...) or a single dict is refused: it would be read as one message per
        character, byte or key."""
        if isinstance(messages, (str, bytes, bytearray, memoryview, Mapping)):  # a list of one is one message
            raise TypeError(f"messages: expected a list of messages, got {type(messages).__name__}")
        items = [_types.item(i, m) for i, m in enumerate(messages)]
        return self._call("publish_batch", [o for _, o in items], many(Published), [b for b, _ in items])

    @op
    def ack(self, id: str, token: str) -> None:
        """Acknowledges a leased message by id and lease token (see :meth:`Message.ack`)."""
        return self._call("ack", checked({"id": id, "token": token}))

    @op
    def nack(self, id: str, token: str, *, retry_in: Optional[Seconds] = None, reason: str = "") -> bool:
        """Nacks a leased message by id and lease token; True when it went to the dead letters."""
        retry_in = None if retry_in is None else _native.retry_delay(retry_in)  # the core's rule
        return self._call("nack", wire({"id": id, "token": token, "retry_in": retry_in, "reason": reason}))

    @op
    def release(self, id: str, token: str) -> None:
        """Hands a leased message back unprocessed by id and lease token: due now, no attempt
        counted (see :meth:`Message.release`)."""
        return self._call("release", checked({"id": id, "token": token}))

    @op
    def extend(self, id: str, token: str, ttr: Seconds) -> None:
        """Extends a lease by id and lease token to ``ttr`` from now."""
        return self._call("extend", wire({"id": id, "token": token, "ttr": ttr}))

    @op
    def cancel(self, id: str) -> bool:
        """Deletes a message wherever it is; False when there was no such id."""
        return self._call("cancel", checked({"id": id}))

    @op
    def reschedule(self, id: str, *, delay: Optional[Seconds] = None, at: Optional[datetime] = None) -> datetime:
        """Gives a scheduled or ready message a new due time (``delay`` or ``at``, one of them;
        ``delay=0`` is now); returns it. Raises
        :class:`NotFoundError` for an unknown id and :class:`InvalidArgumentError` for a leased
        or dead message."""
        return self._call("reschedule", wire({"id": id, "delay": delay, "at": at}), time)

    @op
    def peek(self, id: str) -> Optional[MessageInfo]:
        """Looks at a message without changing it; None when there is no such id."""
        return self._call("peek", checked({"id": id}), lambda v: v and of(MessageInfo, v))

    @op
    def stats(self) -> Stats:
        """Counts of the queue (scheduled, ready, leased, dead, paused ...)."""
        return self._call("stats", {}, partial(of, Stats))

    @op
    def dead_letters(self, limit: Optional[int] = None, *, offset: Optional[int] = None) -> List[MessageInfo]:
        """Dead letters, the oldest death first: ``limit`` (default 100, at most 1000) from
        ``offset`` (default 0). A page ends early once it holds about 1 MiB of bodies: page on
        until one comes back empty, not until one is short."""
        return self._call("dead_letters", wire({"limit": limit, "offset": offset}), many(MessageInfo))

    @op
    def respawn(
        self,
        ids: Optional[Iterable[str]] = None,
        *,
        oldest: Optional[int] = None,
        all: bool = False,
        expires_in: Optional[Seconds] = None,
        clear_expiry: bool = False,
    ) -> int:
        """Brings dead letters back (attempts reset, due now): the given ``ids``, the
        ``oldest`` N, or ``all=True``; each keeps its own expiry, or with ``expires_in``
        expires that long after the respawn, or with ``clear_expiry=True`` never expires.
        Returns how many."""
        return self._call("respawn", {**_select(ids, oldest, all), **_expiry(expires_in, clear_expiry)})

    @op
    def purge_dead(
        self, ids: Optional[Iterable[str]] = None, *, oldest: Optional[int] = None, all: bool = False
    ) -> int:
        """Deletes dead letters for good: the given ``ids``, the ``oldest`` N, or ``all=True``.
        Returns how many."""
        return self._call("purge_dead", _select(ids, oldest, all))

    @op
    def destroy(self) -> None:
        """Deletes the queue: every message in every state, and its name from the registry."""
        return self._call("destroy", {})

    @op
    def verify(self) -> VerifyReport:
        """Checks the queue's invariant atomically (O(n): for tests and maintenance)."""
        return self._call("verify", {}, partial(of, VerifyReport))

    @op
    def pause(self) -> bool:
        """Pauses the queue: consumers receive nothing (leases already held finish as usual),
        publishes go on. Kept in Redis: it holds for every consumer and survives restarts.
        False when it was already paused."""
        return self._call("pause", {})

    @op
    def resume(self) -> bool:
        """Resumes a paused queue; idle consumers are woken at once. False when it was not paused."""
        return self._call("resume", {})

    @op
    def set_history(self, on: bool) -> bool:
        """Turns the queue's history counters on (the default) or off, for every client. False
        when it already was so."""
        return self._call("set_history", checked({"on": on}))

    @op
    def history(
        self, since: datetime, until: Optional[datetime] = None, step: Literal["minute", "hour", "day"] = "minute"
    ) -> List[HistoryPoint]:
        """The queue's history from ``since`` to ``until`` (default now), one point per
        ``step`` (at most 1440 points, 91 by day): published, delivered, acked, retried, dead,
        expired and the lateness of the deliveries. Minutes are kept 2 days, hours 90 days; a
        day (UTC) is the sum of its hours."""
        return self._call("history", wire({"since": since, "until": until, "step": step}), many(HistoryPoint))

    @op
    def history_totals(self) -> HistoryPoint:
        """The history counters' totals since the queue began (monotonic)."""
        return self._call("history_totals", {}, partial(of, HistoryPoint))

    @op
    def upcoming(self, width: Seconds, buckets: int, *, start: Optional[datetime] = None) -> List[Tuple[datetime, int]]:
        """How many waiting messages fall due in each of ``buckets`` (1 to 1000) spans of
        ``width`` from ``start`` (default now), ending within 3650 days of it: the load ahead, as
        (start of span, count)."""
        args = wire({"start": start, "width": width, "buckets": buckets})  # the core's default: now
        return self._call("upcoming", args, lambda v: [(time(b["at_ms"]), b["count"]) for b in v])

    @op
    def list(self, state: Union[State, str], *, offset: int = 0, limit: int = DEFAULT_PAGE_LIMIT) -> ListPage:
        """A page of the messages in ``state``, in its order (due time, lease deadline or time
        of death): ``limit`` (1 to 1000, default 100) from ``offset`` (default 0). A page ends
        early once it holds about 1 MiB of bodies: ``total`` says how many there are."""
        args = checked({"state": str(state), "offset": offset, "limit": limit})
        return self._call("list", args, partial(of, ListPage))

    @op
    def search(self, *, cursor: Optional[str] = None, **what: Unpack[SearchQuery]) -> SearchPage:
        """One bounded step of a search over every message (about 500 records looked at per
        call) for one :class:`SearchQuery` (``id_prefix=``, ``header=(name, value)``, ``body=``
        or ``error=``). Call again with the page's ``cursor`` until it is None."""
        args = {"search": _types.search(what), **checked({"cursor": cursor})}
        return self._call("search", args, partial(of, SearchPage))

    @op
    def bulk(
        self,
        action: Literal["cancel", "reschedule", "deliver_now", "respawn", "purge"],
        ids: Optional[Iterable[str]] = None,
        *,
        delay: Optional[Seconds] = None,
        at: Optional[datetime] = None,
        expires_in: Optional[Seconds] = None,
        clear_expiry: bool = False,
        **where: Unpack[SearchQuery],
    ) -> BulkReport:
        """Applies ``action`` to the messages ``ids`` (up to 10,000), or to every message a
        :class:`SearchQuery` finds (``where``, in bounded steps): cancel, reschedule (with
        ``delay`` or ``at``), deliver_now, respawn or purge (dead letters). Reports how many
        matched and how many were done (ids in another state are skipped). A respawn takes
        ``expires_in`` or ``clear_expiry`` as :meth:`respawn` does."""
        args = wire({"action": action, "ids": _ids(ids), "delay": delay, "at": at})
        args.update(_expiry(expires_in, clear_expiry))
        return self._call("bulk", {**args, "search": _types.search(where)}, partial(of, BulkReport))

    def __repr__(self) -> str:
        return f"<redelay.{type(self).__name__} {self.name!r}>"


#: The queues of a subscription: (name, shard count or None for the one stored in Redis), and
#: the weights (None: strict priority in this order).
Sources = Tuple[List[Tuple[str, Optional[int]]], Optional[List[int]]]


def sources(queues: Queues) -> Sources:
    """The queues of a client's subscription: names in priority order, or names with weights."""
    if isinstance(queues, Mapping):
        return [(n, None) for n in names([*queues])], [_weight(n, w) for n, w in queues.items()]
    return [(n, None) for n in names(queues)], None


def _weight(name: str, w: Any) -> int:
    """A queue's weight as it is: an int (the core checks its range)."""
    if isinstance(w, bool) or not isinstance(w, int):
        raise TypeError(f'weight of queue "{name}": expected an int, got {type(w).__name__}')
    return w


def start(client: NativeClient, src: Sources, wake: Any, closed: Any, opts: Any, blocking: bool) -> Any:
    """Starts a subscription on the core's bridge (see ``NativeClient.subscribe``)."""
    return client.subscribe(*src, wake, closed, dumps(_types.options(opts, _types.SubscribeOptions)), blocking)


class SubscriptionBase:
    """What both APIs' subscriptions share."""

    def __init__(self, native: NativeSubscription) -> None:
        self._native = native
        _runtime.subscriptions.add(native)

    @property
    def queues(self) -> List[str]:
        """The names of the queues consumed, in priority order (or as their weights were given)."""
        return self._native.queues

    @property
    def closed(self) -> bool:
        """True once close was called."""
        return self._native.closed

    @property
    def last_error(self) -> Optional[RedelayError]:
        """The latest error of a fetch or settle call (the subscription retries by itself;
        counted in ``counters().errors``), kept after it recovered; None when there was none."""
        return self._native.last_error

    def counters(self) -> Counters:
        """Counts so far: delivered, handled, acked, nacked, lease_lost, errors."""
        return Counters(*self._native.counters())

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<redelay.{type(self).__name__} queues={self.queues!r} {state}>"
