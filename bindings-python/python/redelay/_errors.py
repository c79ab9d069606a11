"""The exceptions of redelay: one base class, one subclass per kind of error of the core. The
one place where a core error becomes a Python exception (the native module calls
:func:`from_core`); ``code`` comes from the core (``ErrorKind::code()``)."""

from __future__ import annotations

import builtins
from datetime import timedelta
from typing import Any, ClassVar, Dict, List, Optional, Tuple, Type, Union

from . import _native

__all__ = ["RedelayError", "InvalidArgumentError", "ConnectionError", "TimeoutError", "LeaseLostError"]
__all__ += ["NotFoundError", "RedisError", "HandlerError", "RetryLater"]


class RedelayError(Exception):
    """Base class of every error raised by redelay.

    ``kind`` names the core's error kind (``"InvalidArgument"``, ``"Connection"``, ...), ``code``
    is its stable code (``"ERR_REDELAY_INVALID_ARGUMENT"`` ...), and ``message`` carries the
    core's message (also ``str(error)``). ``so_far``: when the error stopped a long run part way
    (a bulk action, a respawn or purge of dead letters), what it had done, which stays done, by
    the core's wire names (``{"count": 1000}``, or ``{"matched": …, "done": …, "scanned": …}``);
    None for every other error.
    """

    kind: ClassVar[str] = ""
    code: ClassVar[str] = ""
    message: str
    so_far: Optional[Dict[str, int]]

    def __init__(self, message: str, so_far: Optional[Dict[str, int]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.so_far = so_far

    def __reduce__(self) -> Tuple[Any, Tuple[str, Optional[Dict[str, int]]]]:
        """Pickled with ``so_far`` (for multiprocessing, concurrent.futures, celery)."""
        return type(self), (self.message, self.so_far)


class InvalidArgumentError(RedelayError, ValueError):
    """Bad input, refused before anything was written; the message names the field and the limit."""

    kind: ClassVar[str] = "InvalidArgument"


class ConnectionError(RedelayError, builtins.ConnectionError):
    """Redis could not be reached, the connection broke, or Redis cannot serve for now (a failover,
    a server loading its data): try again later (also a builtin ``ConnectionError``)."""

    kind: ClassVar[str] = "Connection"


class TimeoutError(RedelayError, builtins.TimeoutError):
    """Redis did not answer in time (also a builtin ``TimeoutError``)."""

    kind: ClassVar[str] = "Timeout"


class LeaseLostError(RedelayError):
    """The lease token is no longer the message's current lease (it expired and the message was
    delivered again, or it was settled, cancelled or replaced). Nothing was changed."""

    kind: ClassVar[str] = "LeaseLost"


class NotFoundError(RedelayError, LookupError):
    """No message with that id (also a ``LookupError``)."""

    kind: ClassVar[str] = "NotFound"


class RedisError(RedelayError):
    """Redis answered with an error (ACL refusal, out of memory, a script error ...)."""

    kind: ClassVar[str] = "Redis"


class HandlerError(RedelayError):
    """A message handler failed."""

    kind: ClassVar[str] = "Handler"


_BY_KIND: Dict[str, Type[RedelayError]] = {c.kind: c for c in RedelayError.__subclasses__()}
for _kind, _code in _native.ERROR_CODES:
    _BY_KIND[_kind].code = _code


class _WrongType(InvalidArgumentError, TypeError):
    """An argument of the wrong type (also a ``TypeError``), e.g. a header value that is no str.
    Shown as ``redelay.InvalidArgumentError``: the class is an implementation detail."""

    __module__ = "redelay"

    def __reduce__(self) -> Tuple[Any, Tuple[str, Optional[Dict[str, int]]]]:
        # By a function: pickle would look the class up by its shown name, and find
        # InvalidArgumentError itself.
        return _wrong_type, (self.message, self.so_far)


def _wrong_type(message: str, so_far: Optional[Dict[str, int]]) -> _WrongType:
    return _WrongType(message, so_far)


_WrongType.__name__ = _WrongType.__qualname__ = "InvalidArgumentError"


def from_core(kind: str, message: str, so_far: Optional[List[Tuple[str, int]]] = None) -> RedelayError:
    """The exception for the core's error ``kind`` (its name, e.g. ``"LeaseLost"``), with the
    totals of the long run it stopped (``so_far``: the core's, by wire name), if any."""
    cls = _WrongType if "invalid type: " in message else _BY_KIND[kind]
    return cls(message, None if so_far is None else dict(so_far))


class RetryLater(Exception):
    """Raise from a handler to retry the message after ``retry_in`` (seconds or ``timedelta``)
    instead of its exponential backoff. The attempt still counts towards ``max_attempts``.
    ``reason`` (a ``str``, else a TypeError here) is stored as the message's ``last_error``.
    ``retry_in`` follows the rule of ``nack(retry_in=…)``, the core's in every language: 0 to
    3650 days, else :class:`InvalidArgumentError` here (a ``TypeError`` for another type).

    >>> raise RetryLater(30, "rate limited")
    """

    retry_in: float
    reason: str

    def __init__(self, retry_in: Union[float, timedelta], reason: Optional[str] = None) -> None:
        if reason is not None and not isinstance(reason, str):
            raise TypeError(f"reason: expected a str, got {type(reason).__name__}")
        seconds = _native.retry_delay(retry_in)
        self.retry_in = seconds
        self.reason = reason if reason is not None else f"retry in {seconds:g} s"
        super().__init__(self.reason)
