"""Type stubs of the native module ``redelay._native`` (Rust, PyO3).

The public API is re-exported by :mod:`redelay`; the ``Native*`` classes are internal: every
call takes ``blocking`` and either blocks (GIL released) or returns an awaitable.
"""

from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable, Final, List, Optional, Tuple, Union

from typing_extensions import disjoint_base, final

from ._errors import RedelayError

__all__ = [
    "NativeClient",
    "NativeQueue",
    "NativeMessages",
    "NativeSubscription",
    "BaseMessage",
    "Message",
    "SyncMessage",
    "_shutdown",
    "_after_fork_in_child",
    "_log_level",
    "failure_reason",
    "ms",
    "retry_delay",
    "UNITS",
    "ERROR_CODES",
    "DEFAULT_FETCH_MAX",
    "DEFAULT_PAGE_LIMIT",
]

DEFAULT_FETCH_MAX: Final[int]
"""The core's default of ``fetch``'s ``max`` (``redelay::limits::DEFAULT_FETCH_MAX``): 1."""

DEFAULT_PAGE_LIMIT: Final[int]
"""The core's default page size of ``list`` and ``dead_letters`` (``redelay::limits::DEFAULT_PAGE_LIMIT``): 100."""

ERROR_CODES: List[Tuple[str, str]]
"""(kind name, code) of every error kind of the core, e.g. ``("LeaseLost", "ERR_REDELAY_LEASE_LOST")``."""

def _shutdown(timeout: float) -> bool:
    """At interpreter exit: keeps runtime threads out of Python and waits for those inside."""

def _after_fork_in_child() -> None:
    """In a forked child (registered with ``os.register_at_fork``): resets what the child
    inherited of the parent's threads. Clients, queues, subscriptions and messages of the parent
    refuse every call there (ConnectionError); a client made in the child gets a runtime of its own."""

def _log_level(level: int) -> None:
    """Lets the core's log records through up to ``level`` (0 off, 1 error ... 5 trace)."""

def failure_reason(name: str, text: str) -> str:
    """A thrown exception's reason, worded by the core: ``"ValueError: boom"``."""

_Seconds = Union[int, float, timedelta]

UNITS: List[Tuple[str, str, bool]]
"""The options that are durations or times (Python name, wire name, is a time), as the core
names them: ``("ttr", "ttr_ms", False)``, ``("start", "from_ms", True)``."""

def ms(s: _Seconds, field: str) -> float:
    """A duration argument (seconds or timedelta) in milliseconds; a ``TypeError`` for another
    type, :class:`InvalidArgumentError` for a negative or not finite one, naming ``field``."""

def retry_delay(retry_in: _Seconds) -> float:
    """A retry delay (seconds or timedelta) in seconds, by the core's rule of every retry delay:
    a ``TypeError`` for another type, :class:`InvalidArgumentError` when negative, NaN or beyond
    3650 days (``retry_in: must be 0 to 3650 days, got -2 s``)."""

@disjoint_base
class BaseMessage:
    """One delivery of a message: its fields, and ``ack``/``nack``/``release``/``extend``, which
    :class:`Message` (awaitables) and :class:`SyncMessage` (blocking) type each their way."""

    id: Final[str]  #: The message id.
    queue: Final[str]  #: The queue it came from.
    body: Final[bytes]  #: The body, byte for byte as published.
    headers: Final[dict[str, str]]  #: The headers as published (a new dict on each access).
    attempt: Final[int]  #: 1 on the first delivery, one more for every failed or expired attempt before.
    max_attempts: Final[int]  #: Deliveries allowed before the message goes to the dead letters.
    last_error: Final[Optional[str]]  #: The reason given by the previous failed attempt.
    published_at: Final[datetime]  #: When Redis stored the message (aware UTC, Redis clock).
    due_at: Final[datetime]  #: When the message became due (for a retry: when the retry became due).
    delivered_at: Final[datetime]  #: When this delivery was leased (Redis clock, microsecond precision).
    expires_at: Final[Optional[datetime]]  #: When it expires (not delivered again after that), or None.
    lateness: Final[timedelta]  #: ``delivered_at - due_at`` (Redis clock).
    lease_deadline: Final[datetime]  #: When the current lease runs out unless extended.
    token: Final[str]  #: The lease token, for settling by id with ``queue.ack(id, token)``.
    settled: Final[bool]  #: True once ack or nack was called.
    def ack(self) -> Optional[Awaitable[None]]: ...
    def nack(self, retry_in: Optional[_Seconds] = None, reason: str = "") -> Union[bool, Awaitable[bool]]: ...
    def release(self) -> Optional[Awaitable[None]]: ...
    def extend(self, ttr: _Seconds) -> Optional[Awaitable[None]]: ...

@final
class Message(BaseMessage):
    """A delivered message of the asyncio API: ``ack``/``nack``/``release``/``extend`` are awaitables."""

    def ack(self) -> Awaitable[None]:
        """Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
        out or the message was already settled."""
    def nack(self, retry_in: Optional[_Seconds] = None, reason: str = "") -> Awaitable[bool]:
        """Give the message back for another attempt, after ``retry_in`` or its backoff; at
        max_attempts it goes to the dead letters with ``reason``. True when it died."""
    def release(self) -> Awaitable[None]:
        """Hand the message back unprocessed, due now, without counting an attempt (work that
        cannot start, e.g. while shutting down). Raises LeaseLostError like ``ack``."""
    def extend(self, ttr: _Seconds) -> Awaitable[None]:
        """Extend the lease to ``ttr`` from now."""

@final
class SyncMessage(BaseMessage):
    """A delivered message of the blocking API (and of plain ``def`` handlers):
    ``ack``/``nack``/``release``/``extend`` block."""

    def ack(self) -> None:
        """Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
        out or the message was already settled."""
    def nack(self, retry_in: Optional[_Seconds] = None, reason: str = "") -> bool:
        """Give the message back for another attempt, after ``retry_in`` or its backoff; at
        max_attempts it goes to the dead letters with ``reason``. True when it died."""
    def release(self) -> None:
        """Hand the message back unprocessed, due now, without counting an attempt (work that
        cannot start, e.g. while shutting down). Raises LeaseLostError like ``ack``."""
    def extend(self, ttr: _Seconds) -> None:
        """Extend the lease to ``ttr`` from now."""

@final
class NativeSubscription:
    """A running subscription of the core (internal)."""

    def take(self) -> List[Tuple[int, Message]]: ...
    def take_wait(self, timeout: float) -> List[Tuple[int, SyncMessage]]: ...
    def complete(self, outcomes: List[Tuple[int, Optional[Tuple[str, Optional[float]]]]]) -> None: ...
    def give_back(self, keys: List[int]) -> None: ...
    def give_back_and_stop(self, keys: List[int]) -> None: ...
    def close(self, blocking: bool, timeout: Optional[_Seconds] = None) -> Any:
        """True (or an awaitable of it) when the close is over; False when ``timeout`` passed
        first (a later close, or ``close_then``, waits for the same drain)."""
    def close_then(self, done: Callable[[], object]) -> None:
        """The core's close, not waited for: calls ``done`` (from a runtime thread) when it is
        over; once closing has started, that is when its drain is over."""
    def counters(self) -> Tuple[int, int, int, int, int, int]: ...
    closed: Final[bool]
    queues: Final[List[str]]
    last_error: Final[Optional[RedelayError]]

@final
class NativeQueue:
    """A queue handle of the core (internal)."""

    name: Final[str]
    shards: Final[int]
    client: Final[NativeClient]
    def call(self, op: str, args: str, bodies: List[bytes], blocking: bool) -> Any:
        """The core's call ``op`` with ``args`` in its wire form (JSON); the result likewise."""
    def fetch(self, args: str, blocking: bool) -> Any:
        """Up to ``max`` leased deliveries; ``args`` are the core's fetch arguments in wire form (JSON)."""
    def messages(self, opts: str) -> NativeMessages:
        """The core's message stream of this queue; ``opts`` its options in wire form (JSON)."""

@final
class NativeMessages:
    """A queue's message stream of the core (internal)."""

    def next(self, blocking: bool) -> Any:
        """The next message as a list of one, empty once the stream is closed (or an awaitable of it)."""
    def close(self, blocking: bool) -> Any:
        """Ends the stream (a waiting ``next`` ends, empty) and hands back what was fetched and
        not given out (or an awaitable of that)."""

@final
class NativeClient:
    """A client of the core (internal)."""

    @staticmethod
    def connect(url: str, opts: str, blocking: bool) -> Any: ...
    def queue(self, name: str, opts: str) -> NativeQueue: ...
    prefix: Final[str]
    def call(self, op: str, blocking: bool) -> Any:
        """The core's client call ``op`` (``queues``, ``ping``); the result in wire form (JSON)."""
    def fetch(self, queues: List[str], args: str, blocking: bool) -> Any:
        """Up to ``max`` leased deliveries from the first of ``queues`` (names in priority order,
        each opened with the shard count stored in Redis) that has due messages; ``args`` are the
        core's fetch arguments in wire form (JSON)."""
    def subscribe(
        self,
        queues: List[Tuple[str, Optional[int]]],
        weights: Optional[List[int]],
        wake: Optional[Callable[[], None]],
        closed: Optional[Callable[[], Any]],
        opts: str,
        blocking: bool,
    ) -> Any:
        """Starts a subscription of ``queues`` (name, shard count or None: the stored one) on
        the core's bridge (internal)."""
    def close(self, blocking: bool, timeout: Optional[_Seconds] = None) -> Any: ...
