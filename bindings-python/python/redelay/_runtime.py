"""Glue called by the native module: handler failures, logging, live subscriptions at exit."""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any, Optional, Protocol, Tuple

from ._errors import RetryLater

logger = logging.getLogger("redelay")

#: Longest time the interpreter waits at exit for live subscriptions to drain.
EXIT_DRAIN_SECONDS = 10.0
#: Longest time the interpreter waits at exit for runtime threads to leave Python.
EXIT_SETTLE_SECONDS = 5.0


def failure(exc: BaseException, msg: Any) -> Tuple[str, Optional[float]]:
    """Maps a handler's exception to (reason, retry_in seconds or None for backoff), logging it."""
    if isinstance(exc, RetryLater):
        return exc.reason, exc.retry_in
    text = str(exc)
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    try:
        logger.error(
            "handler failed on message %s of queue %s (attempt %s of %s): %s",
            msg.id,
            msg.queue,
            msg.attempt,
            msg.max_attempts,
            reason,
            exc_info=(type(exc), exc, exc.__traceback__),
        )
    except Exception:  # pragma: no cover - logging must never break settling
        pass
    return reason, None


class _Closable(Protocol):
    def _close_at_exit(self, timeout: float) -> None: ...


_live: set[_Closable] = set()
_lock = threading.Lock()


def register(sub: _Closable) -> None:
    """Keeps a subscription alive (and known) until it is closed."""
    with _lock:
        _live.add(sub)


def unregister(sub: _Closable) -> None:
    with _lock:
        _live.discard(sub)


@atexit.register
def _close_all() -> None:
    """At interpreter exit, closes what is still subscribed so no handler thread is left
    running while Python finalizes."""
    with _lock:
        subs = list(_live)
        _live.clear()
    for sub in subs:
        try:
            sub._close_at_exit(EXIT_DRAIN_SECONDS)
        except BaseException:  # pragma: no cover
            pass
    # Then keep the runtime's threads out of Python, and let those inside leave, before
    # Python finalizes.
    from . import _native

    _native._shutdown(EXIT_SETTLE_SECONDS)
