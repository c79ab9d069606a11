"""Type aliases shared by the asyncio and sync APIs."""

from __future__ import annotations

import functools
import inspect
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Tuple, TypedDict, Union

from ._errors import InvalidArgumentError, RedelayError, _WrongType
from ._results import surrogate, value, wire

if TYPE_CHECKING:
    from typing_extensions import Required

__all__ = [
    "Body",
    "Seconds",
    "PublishItem",
    "PublishOptions",
    "ClientOptions",
    "SubscribeOptions",
    "Queues",
    "SearchQuery",
]

#: A message body: ``bytes``, ``bytearray``, ``memoryview`` or ``str`` (stored as UTF-8).
Body = Union[bytes, bytearray, memoryview, str]

#: The queues of one subscription: names in priority order, or names with weights (1 to 1000).
Queues = Union[Sequence[str], Mapping[str, int]]

#: A duration: seconds as ``int``/``float``, or a ``timedelta``.
Seconds = Union[int, float, timedelta]


class PublishOptions(TypedDict, total=False):
    """``publish``'s keyword arguments (see :meth:`AsyncQueue.publish`)."""

    delay: Optional[Seconds]
    at: Optional[datetime]
    id: Optional[str]
    headers: Optional[Mapping[str, str]]
    max_attempts: Optional[int]
    ttr: Optional[Seconds]
    backoff: Optional[Tuple[Seconds, Seconds]]
    replace: bool
    expires_in: Optional[Seconds]
    expires_at: Optional[datetime]
    drop_on_expiry: bool


class PublishItem(PublishOptions, total=False):
    """One message of ``publish_batch`` given as a dict: ``body`` and ``publish``'s arguments.

    A plain body (``bytes``, ``str`` ...) is accepted in its place too.
    """

    body: Required[Body]


class ClientOptions(TypedDict, total=False):
    """The options of :meth:`AsyncClient.connect` and :class:`Client`.

    ``prefix`` namespaces every key (default ``"redelay"``); ``max_body_bytes`` is the largest
    body ``publish`` accepts (default 8 MiB); the ``default_*`` options apply to messages that do
    not set their own. ``wait_for_replicas=(n, timeout)`` makes every publish wait until ``n``
    replicas have it (Redis ``WAIT``) and raise :class:`RedisError` when they do not confirm
    within ``timeout`` (the message is then stored on the master only: publish it again, with
    its id).
    """

    prefix: Optional[str]
    max_body_bytes: Optional[int]
    connect_timeout: Optional[Seconds]
    response_timeout: Optional[Seconds]
    default_max_attempts: Optional[int]
    default_ttr: Optional[Seconds]
    default_backoff: Optional[Tuple[Seconds, Seconds]]
    wait_for_replicas: Optional[Tuple[int, Seconds]]


class SubscribeOptions(TypedDict, total=False):
    """The options of ``subscribe``: ``concurrency`` handlers at a time (default 10);
    ``prefetch`` messages leased ahead (default: ``concurrency``, at most 1000); ``ttr`` overrides each
    message's lease length; ``drain_timeout`` bounds how long ``close`` waits for running
    handlers (default 30 s); ``max_idle`` is the longest sleep between fetches (default 1 s)."""

    concurrency: Optional[int]
    prefetch: Optional[int]
    ttr: Optional[Seconds]
    drain_timeout: Optional[Seconds]
    max_idle: Optional[Seconds]


class SearchQuery(TypedDict, total=False):
    """What ``search`` and ``bulk`` look for (exactly one): ids starting with ``id_prefix``, a
    ``header`` ``(name, value)``, bodies containing ``body``, last errors containing ``error``."""

    id_prefix: str
    header: Tuple[str, str]
    body: Body
    error: str


def body(b: Body) -> bytes:
    """A body as the native module takes it (str as UTF-8; one with a lone surrogate has none)."""
    if not isinstance(b, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"body: expected bytes, bytearray, memoryview or str, got {type(b).__name__}")
    if not isinstance(b, str):
        return bytes(b)
    try:
        return b.encode()
    except UnicodeEncodeError:
        raise surrogate("body") from None


def options(kwargs: Mapping[str, Any], spec: Any = PublishOptions) -> Dict[str, Any]:
    """Keyword arguments of the options ``spec`` (``publish``'s by default) in the core's wire
    form; one that is not there (a typo, or a wire name such as ``ttr_ms``) is a TypeError."""
    unknown = sorted(set(kwargs) - set(spec.__annotations__))
    if unknown:
        raise TypeError(f"unknown key {unknown[0]!r}; expected some of {', '.join(spec.__annotations__)}")
    return wire(kwargs)


def search(what: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """A :class:`SearchQuery` in the core's wire form (None when empty: the core refuses it)."""
    return {k: [*body(v)] if k == "body" else value(v, f"search.{k}") for k, v in what.items() if v is not None} or None


def item(i: int, m: Union[Body, PublishItem]) -> Tuple[bytes, Dict[str, Any]]:
    """Message ``i`` of ``publish_batch``: a body, or a dict of ``publish``'s arguments; an error
    names the message."""
    try:
        if not isinstance(m, Mapping):
            return body(m), {}
        d: Dict[str, Any] = dict(m)
        if "body" not in d:
            raise TypeError('missing key "body"')
        return body(d.pop("body")), options(d)
    except (TypeError, ValueError) as e:
        if type(e) in (TypeError, ValueError) or isinstance(e, RedelayError):
            raise type(e)(f"message {i}: {e}") from None
        # Another class's constructor may take other arguments (UnicodeEncodeError's takes
        # five): redelay's own error of the same kind (a TypeError or a ValueError), chained.
        wrong = _WrongType if isinstance(e, TypeError) else InvalidArgumentError
        raise wrong(f"message {i}: {type(e).__name__}: {e}") from e


def is_async_handler(fn: Any) -> bool:
    """True for ``async def`` functions, partials of them, and objects with an ``async def
    __call__``; a TypeError for what is not callable."""
    if not callable(fn):
        raise TypeError(f"handler: expected a callable, got {type(fn).__name__}")
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 (the method itself is inspected, not callability)
    return call is not None and inspect.iscoroutinefunction(call)
