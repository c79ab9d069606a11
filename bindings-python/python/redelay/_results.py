"""What the calls return, as dataclasses, and the one place where the core's wire forms cross:
:func:`wire` turns keyword arguments into the core's option form (``*_ms`` milliseconds),
checking each value as it converts it (:func:`value`), :func:`dumps` makes that JSON, and
:func:`of` turns a result's wire form into its dataclass (``*_ms`` into ``datetime`` or
``timedelta`` by the field's type)."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Type, TypeVar

from ._errors import InvalidArgumentError, _WrongType
from ._native import UNITS, ms

__all__ = ["Published", "State", "Stats", "MessageInfo", "VerifyReport", "Counters", "HistoryPoint", "ListPage"]
__all__ += ["SearchPage", "BulkReport"]

R = TypeVar("R")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class State(str, enum.Enum):
    """Where a message is in its life (compares equal to its name: ``State.DEAD == "dead"``)."""

    SCHEDULED = "scheduled"  #: waiting for its due time
    READY = "ready"  #: due, waiting for a consumer
    LEASED = "leased"  #: delivered, lease running
    DEAD = "dead"  #: out of attempts (or expired); kept until respawned or purged

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Published:
    """The outcome of publishing one message."""

    id: str  #: the message id (generated when none was given)
    status: str  #: ``"stored"``, ``"duplicate"`` (an existing id; nothing changed) or ``"replaced"``

    @property
    def duplicate(self) -> bool:
        """True when a message with this id already existed and nothing was changed."""
        return self.status == "duplicate"


@dataclass(frozen=True)
class Stats:
    """Counts of one queue, read atomically (a sharded queue's: each shard atomically, summed)."""

    now: datetime  #: Redis time of the reading (aware UTC)
    total: int  #: all stored messages (scheduled + ready + leased + dead)
    scheduled: int  #: waiting for their due time
    ready: int  #: due, waiting for a consumer
    leased: int  #: delivered and not yet settled, ``lapsed`` included
    lapsed: int  #: the leased ones past their lease deadline (consumer gone): the next fetch takes them back
    dead: int  #: dead letters
    next_due: Optional[datetime]  #: due time of the next scheduled message
    oldest_ready_due: Optional[datetime]  #: due time of the oldest message due but not picked up
    paused: bool  #: consumers receive nothing until ``resume()``


@dataclass(frozen=True)
class MessageInfo:
    """A stored message as ``peek``, ``dead_letters``, ``list`` and ``search`` show it."""

    id: str
    state: State
    body: bytes  #: byte for byte as published
    headers: Dict[str, str]
    attempts: int  #: failed or expired attempts so far
    max_attempts: int  #: deliveries allowed before the message goes to the dead letters
    ttr: timedelta  #: lease length of each delivery
    published_at: datetime  #: when Redis stored it (aware UTC)
    due_at: datetime  #: when it is (or was) due
    lease_deadline: Optional[datetime]  #: while leased: when the lease runs out
    died_at: Optional[datetime]  #: while dead: when it died
    expires_at: Optional[datetime]  #: when it expires, if it does
    last_error: Optional[str]  #: the reason of the last failure (for a dead letter: why it died)


@dataclass(frozen=True)
class VerifyReport:
    """Result of ``verify``: the queue's invariant checked atomically (a sharded queue: per shard)."""

    records: int  #: records checked
    problems: List[str]  #: what is wrong (at most 50 lines); empty when consistent

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


@dataclass(frozen=True)
class Counters:
    """Counts kept by a subscription since it started."""

    delivered: int  #: messages leased by this subscription
    handled: int  #: handler runs that finished (returned or raised)
    acked: int  #: acknowledged after the handler returned (not the handler's own ``ack()`` calls)
    nacked: int  #: nacked after the handler raised (retries and dead letters; not its own ``nack()``)
    lease_lost: int  #: settles refused because the lease had been lost
    errors: int  #: fetch or settle calls that failed (the subscription retries)


@dataclass(frozen=True)
class HistoryPoint:
    """One minute, hour or UTC day of a queue's history (or its totals since it began)."""

    at: datetime  #: start of the minute, hour or day (for totals: when they were read)
    published: int  #: stored or replaced (a duplicate id counts nothing)
    delivered: int
    acked: int
    retried: int  #: failed attempts that will be tried again (nacks and expired leases)
    dead: int  #: messages that became dead letters out of attempts (an expired one: under expired)
    expired: int  #: messages that expired before delivery (dead-lettered or dropped)
    lateness: List[int]  #: deliveries per lateness bucket: under 1 ms, 2, 4 ... 16384 ms, and above
    lateness_sum: timedelta  #: the sum of the deliveries' lateness


@dataclass(frozen=True)
class ListPage:
    """A page of ``list``: the messages of one state, in its order."""

    total: int  #: messages in that state now
    items: List[MessageInfo]


@dataclass(frozen=True)
class SearchPage:
    """One bounded step of ``search``: call again with ``cursor`` until it is None."""

    items: List[MessageInfo]  #: what matched in this step
    scanned: int  #: records looked at in this step
    cursor: Optional[str]  #: for the next step; None when the whole queue was scanned


@dataclass(frozen=True)
class BulkReport:
    """What ``bulk`` did."""

    matched: int  #: ids given, or messages the search found
    done: int  #: of those, acted on (the others were gone or in another state)
    scanned: int  #: records a search looked at


def time(ms: float) -> datetime:
    """Milliseconds since the Unix epoch as an aware UTC datetime."""
    return EPOCH + timedelta(milliseconds=ms)


_FROM: Dict[str, Callable[[Any], Any]] = {
    "datetime": time,
    "Optional[datetime]": time,
    "timedelta": lambda v: timedelta(milliseconds=v),
    "bytes": bytes,
    "State": State,
    "List[MessageInfo]": lambda v: [of(MessageInfo, x) for x in v],
}


def of(cls: Type[R], d: Mapping[str, Any]) -> R:
    """The dataclass ``cls`` from its wire form."""
    kw = {}
    for f in fields(cls):  # type: ignore[arg-type]
        v = d.get(f.name, d.get(f.name + "_ms"))
        kw[f.name] = v if v is None else _FROM.get(str(f.type), _same)(v)
    return cls(**kw)


def _same(v: Any) -> Any:
    return v


def many(cls: Type[R]) -> Callable[[List[Any]], List[R]]:
    """A list of ``cls`` from its wire form."""
    return lambda v: [of(cls, x) for x in v]


#: Durations (seconds or timedelta) and times (aware datetimes) by name: (wire name in ms, is
#: a time), as the core names them.
_UNITS = {name: (wire, is_time) for name, wire, is_time in UNITS}
#: Pairs of durations, sent as two ``*_ms`` fields.
_PAIRS = {"backoff": ("backoff_base_ms", "backoff_max_ms")}
_PAIRS["default_backoff"] = ("default_backoff_base_ms", "default_backoff_max_ms")


def epoch_ms(v: Any, field: str) -> float:
    """A time argument (an aware datetime) in milliseconds since the Unix epoch."""
    if not isinstance(v, datetime):
        raise TypeError(f"{field}: expected an aware datetime, got {type(v).__name__}")
    if v.utcoffset() is None:
        raise InvalidArgumentError(f"{field}: naive datetime {v!r} has no time zone; pass an aware one")
    return (v - EPOCH) / timedelta(milliseconds=1)


def pair(v: Any, field: str, what: str) -> Any:
    """A two-item tuple or list argument, as it is."""
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise TypeError(f"{field}: expected a pair {what}, got {v!r}")
    return v


def wire(args: Mapping[str, Any]) -> Dict[str, Any]:
    """Keyword arguments (those not None) in the core's wire form."""
    out: Dict[str, Any] = {}
    for k, v in args.items():
        if v is None:
            continue
        if k in _PAIRS:
            out.update(zip(_PAIRS[k], (ms(x, k) for x in pair(v, k, "(base, max)"))))
        elif k == "wait_for_replicas":
            n, timeout = pair(v, k, "(replicas, timeout)")
            out[k] = {"replicas": value(n, f"{k}.replicas"), "timeout_ms": ms(timeout, k)}
        elif k in _UNITS:
            out[_UNITS[k][0]] = (epoch_ms if _UNITS[k][1] else ms)(v, k)
        else:
            out[k] = value(v, k)
    return out


def checked(args: Mapping[str, Any]) -> Dict[str, Any]:
    """A call's own arguments as they are (None too), each checked as :func:`wire` checks it."""
    return {k: value(v, k) for k, v in args.items()}


def dumps(args: Any) -> str:
    """Arguments in wire form (from :func:`wire` or :func:`checked`) as JSON; a NaN that got
    past them is still refused (JSON has none; Python's would write ``NaN``)."""
    return json.dumps(args, allow_nan=False)


def value(v: Any, field: str) -> Any:
    """An argument as JSON takes it, checked as it is converted so that a refusal names
    ``field`` (the core's decoding would name none, or point into the JSON text): a float must
    be finite, a str well-formed (:func:`text`), a mapping's names str (JSON would turn ``1``,
    ``None`` or ``1.5`` into names and merge ``1`` with ``"1"``); bytes or another type JSON has
    no form for are refused. Ranges, lengths and the type a field wants are the core's."""
    if isinstance(v, str):
        return text(v, field)
    if v is None or isinstance(v, int):  # bool too
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidArgumentError(f"{field}: must be a finite number, got {v}")
        return v
    if isinstance(v, Mapping):
        out: Dict[str, Any] = {}
        for name, x in v.items():
            if not isinstance(name, str):
                raise _WrongType(f"{field}: names must be str, got {type(name).__name__} {name!r}")
            out[text(name, field)] = value(x, f"{field}.{name}")
        return out
    if isinstance(v, (list, tuple)):
        return [value(x, f"{field}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, (bytes, bytearray, memoryview)):
        raise _WrongType(f"{field}: invalid type: {type(v).__name__}, expected a str")
    raise _WrongType(f"{field}: invalid type: {type(v).__name__}")


def text(s: str, field: str) -> str:
    """A str that has a UTF-8 form: one with a lone surrogate (not valid Unicode) has none, and
    replacing it would store another str. Checked in C (``isascii`` is O(1), ``encode`` one pass)."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise surrogate(field) from None
    return s


SURROGATE = "contains a lone surrogate (not valid Unicode), so it would be stored altered"


def surrogate(field: str) -> InvalidArgumentError:
    """The refusal of a str with a lone surrogate (worded as the Node binding words it)."""
    return InvalidArgumentError(f"{field}: {SURROGATE}")
