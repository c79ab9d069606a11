"""Type stubs of the native module ``redelay._native`` (Rust, PyO3).

The public API is re-exported by :mod:`redelay`; the ``Native*`` classes are internal: every
call takes ``blocking`` and either blocks (GIL released) or returns an awaitable.
"""

from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable, Dict, Final, List, Optional, Tuple, Union

CORE_VERSION: str

ERROR_CODES: List[Tuple[str, str]]
"""(kind name, code) of every error kind of the core, e.g. ``("LeaseLost", "ERR_REDELAY_LEASE_LOST")``."""

def _shutdown(timeout: float) -> bool:
    """At interpreter exit: keeps runtime threads out of Python and waits for those inside."""

def _log_level(level: int) -> None:
    """Lets the core's log records through up to ``level`` (0 off, 1 error ... 5 trace)."""

_Seconds = Union[int, float, timedelta]

class Published:
    """The outcome of publishing one message."""

    @property
    def id(self) -> str:
        """The message id (generated when none was given)."""
    @property
    def status(self) -> str:
        """``"stored"``, ``"duplicate"`` (an existing id; nothing changed) or ``"replaced"``."""
    @property
    def duplicate(self) -> bool:
        """True when a message with this id already existed and nothing was changed."""

class Stats:
    """Counts of one queue, read atomically."""

    @property
    def now(self) -> datetime:
        """Redis time of the reading (aware UTC)."""
    @property
    def total(self) -> int:
        """All stored messages (scheduled + ready + leased + dead)."""
    @property
    def scheduled(self) -> int:
        """Messages waiting for their due time."""
    @property
    def ready(self) -> int:
        """Due messages waiting for a consumer."""
    @property
    def leased(self) -> int:
        """Messages delivered and not yet settled."""
    @property
    def dead(self) -> int:
        """Dead letters."""
    @property
    def next_due(self) -> Optional[datetime]:
        """Due time of the next scheduled message."""
    @property
    def oldest_ready_due(self) -> Optional[datetime]:
        """Due time of the oldest message that is due but not yet picked up."""

class MessageInfo:
    """A stored message as ``peek`` and ``dead_letters`` show it."""

    @property
    def id(self) -> str:
        """The message id."""
    @property
    def state(self) -> str:
        """``"scheduled"``, ``"ready"``, ``"leased"`` or ``"dead"``."""
    @property
    def body(self) -> bytes:
        """The body, byte for byte as published."""
    @property
    def headers(self) -> dict[str, str]:
        """The headers as published."""
    @property
    def attempts(self) -> int:
        """Failed or expired attempts so far."""
    @property
    def max_attempts(self) -> int:
        """Deliveries allowed before the message goes to the dead letters."""
    @property
    def ttr(self) -> timedelta:
        """Lease length of each delivery."""
    @property
    def published_at(self) -> datetime:
        """When Redis stored the message (aware UTC)."""
    @property
    def due_at(self) -> datetime:
        """When the message is (or was) due (aware UTC)."""
    @property
    def lease_deadline(self) -> Optional[datetime]:
        """While leased: when the lease runs out."""
    @property
    def died_at(self) -> Optional[datetime]:
        """While dead: when it died."""
    @property
    def last_error(self) -> Optional[str]:
        """The reason of the last failure (for a dead letter: why it died)."""

class VerifyReport:
    """Result of ``verify``: the queue's invariant checked atomically."""

    @property
    def records(self) -> int:
        """Records checked."""
    @property
    def problems(self) -> List[str]:
        """What is wrong (at most 50 lines); empty when the queue is consistent."""
    @property
    def ok(self) -> bool:
        """True when no problem was found."""

class Counters:
    """Counts kept by a subscription since it started."""

    @property
    def delivered(self) -> int:
        """Messages leased by this subscription."""
    @property
    def acked(self) -> int:
        """Acknowledged after the handler returned (or by the handler itself)."""
    @property
    def nacked(self) -> int:
        """Nacked after the handler failed (retries and dead letters)."""
    @property
    def lease_lost(self) -> int:
        """Settles refused because the lease had been lost."""
    @property
    def errors(self) -> int:
        """Fetch or settle calls that failed (the subscription retries)."""

class BaseMessage:
    """One delivery of a message: its fields. :class:`Message` and :class:`SyncMessage` add
    ``ack``/``nack``/``extend``."""

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
    lateness: Final[timedelta]  #: ``delivered_at - due_at`` (Redis clock).
    lease_deadline: Final[datetime]  #: When the current lease runs out unless extended.
    token: Final[str]  #: The lease token, for settling by id with ``queue.ack(id, token)``.
    settled: Final[bool]  #: True once ack or nack was called.

class Message(BaseMessage):
    """A delivered message of the asyncio API: ``ack``/``nack``/``extend`` are awaitables."""

    def ack(self) -> Awaitable[None]:
        """Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
        out or the message was already settled."""
    def nack(self, retry_in: Optional[_Seconds] = None, reason: str = "") -> Awaitable[bool]:
        """Give the message back for another attempt, after ``retry_in`` or its backoff; at
        max_attempts it goes to the dead letters with ``reason``. True when it died."""
    def extend(self, ttr: _Seconds) -> Awaitable[None]:
        """Extend the lease to ``ttr`` from now."""

class SyncMessage(BaseMessage):
    """A delivered message of the blocking API (and of plain ``def`` handlers):
    ``ack``/``nack``/``extend`` block."""

    def ack(self) -> None:
        """Acknowledge: the message is done and deleted. Raises LeaseLostError if the lease ran
        out or the message was already settled."""
    def nack(self, retry_in: Optional[_Seconds] = None, reason: str = "") -> bool:
        """Give the message back for another attempt, after ``retry_in`` or its backoff; at
        max_attempts it goes to the dead letters with ``reason``. True when it died."""
    def extend(self, ttr: _Seconds) -> None:
        """Extend the lease to ``ttr`` from now."""

class NativeSubscription:
    """A running subscription of the core (internal)."""

    def take(self) -> List[Tuple[int, Message]]: ...
    def take_wait(self, timeout: float) -> List[Tuple[int, SyncMessage]]: ...
    def complete(self, outcomes: List[Tuple[int, Optional[Tuple[str, Optional[float]]]]]) -> None: ...
    def give_back(self, keys: List[int]) -> None: ...
    def close(self, blocking: bool, timeout: Optional[_Seconds] = None) -> Any: ...
    def counters(self) -> Counters: ...
    @property
    def closed(self) -> bool: ...

class NativeQueue:
    """A queue handle of the core (internal)."""

    @property
    def name(self) -> str: ...
    def publish(self, body: Any, opts: Optional[Dict[str, Any]], blocking: bool) -> Any: ...
    def publish_batch(self, items: List[Tuple[Any, Optional[Dict[str, Any]]]], blocking: bool) -> Any: ...
    def fetch(self, max: int, wait: Any, ttr: Any, blocking: bool) -> Any: ...
    def ack(self, id: str, token: str, blocking: bool) -> Any: ...
    def nack(self, id: str, token: str, retry_in: Any, reason: str, blocking: bool) -> Any: ...
    def extend(self, id: str, token: str, ttr: Any, blocking: bool) -> Any: ...
    def cancel(self, id: str, blocking: bool) -> Any: ...
    def reschedule(self, id: str, delay: Any, at: Any, blocking: bool) -> Any: ...
    def peek(self, id: str, blocking: bool) -> Any: ...
    def stats(self, blocking: bool) -> Any: ...
    def dead_letters(self, limit: Optional[int], offset: Optional[int], blocking: bool) -> Any: ...
    def respawn(self, ids: Optional[List[str]], oldest: Optional[int], all: bool, blocking: bool) -> Any: ...
    def purge_dead(self, ids: Optional[List[str]], oldest: Optional[int], all: bool, blocking: bool) -> Any: ...
    def destroy(self, blocking: bool) -> Any: ...
    def verify(self, blocking: bool) -> Any: ...
    def subscribe(
        self,
        wake: Optional[Callable[[], None]],
        closed: Optional[Callable[[], Any]],
        blocking: bool,
        **options: Any,
    ) -> Any: ...

class NativeClient:
    """A client of the core (internal)."""

    @staticmethod
    def connect(
        url: str,
        blocking: bool,
        prefix: Optional[str] = None,
        max_body_bytes: Optional[int] = None,
        connect_timeout: Any = None,
        response_timeout: Any = None,
        default_max_attempts: Any = None,
        default_ttr: Any = None,
        default_backoff: Optional[Tuple[Any, Any]] = None,
        wait_for_replicas: Optional[Tuple[Any, Any]] = None,
    ) -> Any: ...
    def queue(self, name: str) -> NativeQueue: ...
    @property
    def prefix(self) -> str: ...
    def queues(self, blocking: bool) -> Any: ...
    def ping(self, blocking: bool) -> Any: ...
    def close(self, blocking: bool, timeout: Optional[_Seconds] = None) -> Any: ...
