"""Type aliases shared by the asyncio and sync APIs."""

from __future__ import annotations

import functools
import inspect
from datetime import datetime, timedelta
from typing import Any, Dict, Mapping, Optional, Tuple, TypedDict, Union

__all__ = ["Body", "Seconds", "PublishItem", "is_async_callable"]

#: A message body: ``bytes``, ``bytearray``, ``memoryview`` or ``str`` (stored as UTF-8).
Body = Union[bytes, bytearray, memoryview, str]

#: A duration: seconds as ``int``/``float``, or a ``timedelta``.
Seconds = Union[int, float, timedelta]


class _PublishItemRequired(TypedDict):
    body: Body


class PublishItem(_PublishItemRequired, total=False):
    """One message of ``publish_batch`` given as a dict; the keys are ``publish``'s arguments.

    A plain body (``bytes``, ``str`` ...) is accepted in its place too.
    """

    delay: Seconds
    at: datetime
    id: str
    headers: Mapping[str, str]
    max_attempts: int
    ttr: Seconds
    backoff: Tuple[Seconds, Seconds]
    replace: bool


def body(b: Body) -> Union[bytes, bytearray]:
    """A body as the native module takes it (str as UTF-8)."""
    return b.encode() if isinstance(b, str) else bytes(b) if isinstance(b, memoryview) else b


def options(**kwargs: Any) -> Optional[Dict[str, Any]]:
    """``publish``'s keyword arguments as the native module takes them (those given)."""
    unknown = sorted(set(kwargs) - set(PublishItem.__annotations__))
    if unknown:
        raise TypeError(f"unknown key {unknown[0]!r}; expected some of {', '.join(PublishItem.__annotations__)}")
    given = {k: v for k, v in kwargs.items() if v is not None and k != "replace"}
    if "headers" in given:
        given["headers"] = dict(given["headers"])  # any mapping
    replace = bool(kwargs.get("replace"))
    return {**given, "replace": replace} if given or replace else None


def item(m: Union[Body, PublishItem]) -> Tuple[Any, Optional[Dict[str, Any]]]:
    """One message of ``publish_batch``: a body, or a dict of ``publish``'s arguments."""
    if not isinstance(m, Mapping):
        return body(m), None
    d: Dict[str, Any] = dict(m)
    if "body" not in d:
        raise TypeError('missing key "body"')
    return body(d.pop("body")), options(**d)


def is_async_callable(fn: Any) -> bool:
    """True for ``async def`` functions, partials of them, and objects with an ``async def
    __call__``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 (the method itself is inspected, not callability)
    return call is not None and inspect.iscoroutinefunction(call)
