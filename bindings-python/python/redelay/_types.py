"""Type aliases shared by the asyncio and sync APIs."""

from __future__ import annotations

import functools
import inspect
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional, Tuple, TypedDict, Union

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


def seconds(value: Optional[Seconds]) -> Optional[float]:
    """A duration as float seconds (None stays None)."""
    if value is None:
        return None
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def is_async_callable(fn: Any) -> bool:
    """True for ``async def`` functions, partials of them, and objects with an ``async def
    __call__``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 (the method itself is inspected, not callability)
    return call is not None and inspect.iscoroutinefunction(call)
