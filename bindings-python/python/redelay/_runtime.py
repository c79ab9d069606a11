"""Runs handlers on the core's bridge, maps their failures, routes the core's logs into
``logging``, and closes clients at interpreter exit.

* ``async def`` handlers run on the event loop captured at subscribe: the core wakes it once
  per batch (``call_soon_threadsafe``), :meth:`LoopRunner.drain` takes the batch and starts one
  asyncio task per handler (on Python 3.12+ an eager one: its first step runs at once, so a
  handler that never suspends is done without a loop round), and outcomes go back in one call
  per loop iteration.
* Plain ``def`` handlers run on threads, never on an event loop: one thread waits in
  ``take_wait`` (GIL released) and hands each delivery to a thread pool.
* Whatever a handler raises settles only its own message: an ``Exception`` nacks it (its
  reason always representable, see :func:`failure`). ``KeyboardInterrupt`` and ``SystemExit``
  are the program stopping, no failure of the message: it is given back (due at once, no
  attempt counted), the subscription closes (:func:`stop`), and the exception goes on as from
  any asyncio task, out of the event loop; in a worker thread, where it cannot, it is logged.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import logging
import re
import sys
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _native
from ._errors import RetryLater, from_core  # noqa: F401 (from_core: the native module's errors)

logger = logging.getLogger("redelay")

#: Longest time the interpreter waits at exit for clients to close (their subscriptions drain).
EXIT_DRAIN_SECONDS = 10.0
#: Longest time the interpreter waits at exit for runtime threads to leave Python.
EXIT_SETTLE_SECONDS = 5.0

Outcome = Optional[Tuple[str, Optional[float]]]


#: A lone surrogate (``os.fsdecode`` of a byte that is not UTF-8, half of a pair): no UTF-8 form.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(s: str) -> str:
    """``s`` as the core can take it (UTF-8): each lone surrogate as U+FFFD, as the Kotlin and
    Node bindings store a reason with one."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", s)


def _message(x: object) -> str:
    """``str(x)``, or what says it could not be read (its ``__str__`` raised)."""
    try:
        return str(x)
    except Exception as e:
        return f"(its message could not be read: str() raised {type(e).__name__})"


def failure(exc: BaseException, msg: Any) -> Tuple[str, Optional[float]]:
    """Maps a handler's exception to (reason, retry_in seconds or None for backoff), logging it.
    Never raises, and the reason is always text the core takes."""
    try:
        if isinstance(exc, RetryLater):
            reason = exc.reason if isinstance(exc.reason, str) else _message(exc.reason)
            try:
                retry_in: Optional[float] = float(exc.retry_in)
            except Exception:
                retry_in = None
            return _text(reason), retry_in
        reason = _native.failure_reason(_text(type(exc).__name__), _text(_message(exc)))
    except Exception:  # pragma: no cover - a str subclass gone wrong, memory: still a reason
        return "handler failed with an exception that cannot be shown", None
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


def complete(sub: _native.NativeSubscription, outcomes: List[Tuple[int, Outcome]]) -> None:
    """Reports outcomes to the core in one call. Should one not convert (never with the reasons
    of :func:`failure`), each is reported alone, that one as a failure, none lost."""
    try:
        sub.complete(outcomes)
    except Exception:
        for key, outcome in outcomes:
            try:
                sub.complete([(key, outcome)])
            except Exception:
                sub.complete([(key, ("handler outcome could not be reported", None))])


def settle(fut: asyncio.Future[Any], value: Any, exc: Optional[BaseException]) -> None:
    """Sets the outcome of a native call's future, on its loop. A fetch whose caller was
    cancelled after Redis leased its messages gives them back (no attempt counted), as the core
    does for a fetch dropped during its call, instead of leaving them leased to nobody."""
    if not fut.done():
        fut.set_result(value) if exc is None else fut.set_exception(exc)
    elif exc is None and isinstance(value, list):
        for m in value:
            if isinstance(m, _native.Message):
                fut.get_loop().create_task(_release(m))


async def _release(m: _native.Message) -> None:
    try:
        await m.release()
    except Exception:  # pragma: no cover - the lease was lost meanwhile: nothing to give back
        pass


_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG, 5: 5}


def log(level: int, target: str, text: str) -> None:
    """A record of the core (target ``redelay::…``) into the logger of the same dotted name."""
    logging.getLogger(target).log(_LEVELS.get(level, logging.INFO), "%s", text)


def read_log_level() -> None:
    """Lets the core's records through up to the ``redelay`` logger's level (WARNING unless
    configured); read again at every connect."""
    level = logger.getEffectiveLevel()
    _native._log_level(max((k for k, v in _LEVELS.items() if v >= level), default=0))


def _nothing() -> None:
    pass


def stop(sub: _native.NativeSubscription, key: int) -> None:
    """A handler raised KeyboardInterrupt or SystemExit: the program is stopping, its message
    did not fail. It is given back (due again, no attempt counted) and the subscription closes
    (the core's close, not waited for: nothing more starts, running handlers get the drain
    timeout); the core stops fetching before it gives the message back, so that it is not run
    again meanwhile."""
    sub.give_back_and_stop([key])
    if not sub.closed:
        sub.close_then(_nothing)


class LoopRunner:
    """Runs an ``async def`` handler's deliveries on ``loop`` (see the module docstring)."""

    def __init__(self, handler: Callable[[Any], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.handler, self.loop = handler, loop
        self.context = contextvars.copy_context()
        self.sub: Optional[_native.NativeSubscription] = None
        #: Handler tasks still running, by their delivery's key.
        self.tasks: Dict[int, asyncio.Future[Any]] = {}
        self.out: List[Tuple[int, Outcome]] = []
        #: Set by close: a handler task cancelled from then on (``asyncio.run`` ending cancels
        #: every task) is handed back, not failed.
        self.closing = False

    def wake(self) -> None:
        """Called by the core, from any thread."""
        self.loop.call_soon_threadsafe(self.drain, context=self.context)

    def drain(self) -> None:
        """Starts one task per delivery, each in a copy of the subscriber's context: on Python
        3.12+ an eager one (its first step runs here; unless the loop has a task factory of its
        own). A KeyboardInterrupt or SystemExit from a first step goes on out of the loop, as
        from any eager task, once the batch's other deliveries are given back."""
        sub = self.sub
        if sub is None:  # woken before subscribe returned
            self.loop.call_soon(self.drain, context=self.context)
            return
        batch = sub.take()
        if self.closing:  # taken after close started: hand back, do not start
            if batch:
                sub.give_back([k for k, _ in batch])
            return
        loop, tasks, run = self.loop, self.tasks, self.run
        start: Callable[[Any], asyncio.Future[Any]] = loop.create_task
        if sys.version_info >= (3, 12) and loop.get_task_factory() is None:
            start = functools.partial(asyncio.Task, loop=loop, eager_start=True)
        i = 0
        try:
            for i, (key, msg) in enumerate(batch):  # noqa: B007 (i: where a stop came)
                fut = start(run(key, msg))
                if not fut.done():
                    tasks[key] = fut
                    fut.add_done_callback(functools.partial(self.ended, key))
        except BaseException:
            if batch[i + 1 :]:
                sub.give_back([k for k, _ in batch[i + 1 :]])
            raise
        finally:
            self.flush()

    async def run(self, key: int, msg: Any) -> None:
        """One delivery's task: the handler, then its outcome queued for :meth:`flush`."""
        outcome: Outcome = None
        try:
            ret = await self.handler(msg)
            if hasattr(ret, "__await__"):  # `return other(msg)` where `return await other(msg)` was meant
                getattr(ret, "close", lambda: None)()  # no "never awaited" warning
                outcome = ("handler returned an awaitable without awaiting it: `return await …`", None)
        except asyncio.CancelledError:
            self.tasks.pop(key, None)
            # Decided a loop round later: the end of asyncio.run cancels every task at once,
            # the subscription's own (which closes it) maybe after this one.
            self.loop.call_soon(self.cancelled, key)
            raise
        except Exception as e:
            outcome = failure(e, msg)
        except BaseException:  # KeyboardInterrupt, SystemExit: the program stops, not the message
            self.tasks.pop(key, None)
            self.closing = True  # handlers cancelled from now on give their message back
            if self.sub is not None:
                stop(self.sub, key)
            task = asyncio.current_task()
            if task is not None:  # it goes on out of the loop: not to be logged as never retrieved
                task.add_done_callback(_retrieved)
            raise
        self.tasks.pop(key, None)
        self.report(key, outcome)

    def ended(self, key: int, task: asyncio.Future[Any]) -> None:
        """A handler task ended. One cancelled before its first step (the end of
        ``asyncio.run`` cancels every task; before Python 3.12 a task starts a loop round after
        it is made) never ran :meth:`run`, which would have seen the cancellation: it is
        :meth:`cancelled` here."""
        if task.cancelled() and self.tasks.pop(key, None) is not None:
            self.cancelled(key)

    def cancelled(self, key: int) -> None:
        """A handler task was cancelled: while closing its message is given back (due now
        again, no attempt counted); otherwise that is its failure."""
        if self.closing:
            self.give_back(key)
        else:
            self.report(key, ("handler task was cancelled", None))

    def report(self, key: int, outcome: Outcome) -> None:
        if not self.out:
            self.loop.call_soon(self.flush, context=self.context)
        self.out.append((key, outcome))

    def give_back(self, key: int) -> None:
        if self.sub is not None:
            self.sub.give_back([key])

    def flush(self) -> None:
        if self.out and self.sub is not None:
            out, self.out = self.out, []
            complete(self.sub, out)

    def cancel_running(self) -> None:
        """After close: handlers still running past the drain are cancelled."""
        for t in list(self.tasks.values()):
            t.cancel()


def _retrieved(task: asyncio.Future[Any]) -> None:
    task.cancelled() or task.exception()


class ThreadRunner:
    """Runs a plain ``def`` handler's deliveries on threads (see the module docstring)."""

    def __init__(self, handler: Callable[[Any], Any], sub: _native.NativeSubscription) -> None:
        self.handler, self.sub = handler, sub
        name = sub.queues[0]
        #: Set when the feeder has stopped: nothing more starts.
        self.stopped = threading.Event()
        #: Set when the subscription's close is over: it stopped and drained (its running
        #: handlers finished, or the drain timeout passed).
        self.drained = threading.Event()
        # The core bounds how many run at once (concurrency): the pool only grows that far.
        self.pool = ThreadPoolExecutor(max_workers=1 << 16, thread_name_prefix=f"redelay-{name}")
        threading.Thread(target=self.feed, name=f"redelay-{name}", daemon=True).start()

    def feed(self) -> None:
        try:
            while True:
                batch = self.sub.take_wait(0.25)
                for i, (key, msg) in enumerate(batch):
                    try:
                        self.pool.submit(self.run, key, msg)
                    except RuntimeError:  # interpreter exit: concurrent.futures shut the pool down
                        self.sub.give_back([k for k, _ in batch[i:]])
                        return
                if not batch and (self.sub.closed or _exiting):
                    break
        finally:
            self.pool.shutdown(wait=False)
            self.stopped.set()
            if self.sub.closed and not _exiting:
                # Closing started (here, by the client, or by the core): the core's close, called
                # again, waits for the same drain; it runs on the runtime, not on this thread.
                self.sub.close_then(self.drained.set)
            else:
                self.drained.set()

    def run(self, key: int, msg: Any) -> None:
        outcome: Outcome = None
        try:
            ret = self.handler(msg)
            if hasattr(ret, "__await__"):
                getattr(ret, "close", lambda: None)()  # no "never awaited" warning
                outcome = ("handler returned an awaitable: declare it `async def` to run it on the event loop", None)
        except Exception as e:
            outcome = failure(e, msg)
        except BaseException as e:  # KeyboardInterrupt, SystemExit: in a thread, they end this run
            stop(self.sub, key)
            logger.warning(
                "handler raised %s on message %s of queue %s: message given back, subscription closed",
                type(e).__name__,
                msg.id,
                msg.queue,
            )
            return
        complete(self.sub, [(key, outcome)])


#: Clients still open, closed at interpreter exit (weakly held: a client nobody holds is gone).
clients: weakref.WeakSet[Any] = weakref.WeakSet()
#: Subscriptions, closed at interpreter exit even when nobody holds their client any more (a
#: running one is held by its runner).
subscriptions: weakref.WeakSet[_native.NativeSubscription] = weakref.WeakSet()
_exiting = False


@atexit.register
def _at_exit() -> None:
    """At interpreter exit, closes open clients (their subscriptions drain at once, handing back
    what did not start), then the subscriptions left open because nothing holds their client any
    more, then keeps the runtime's threads out of Python before Python finalizes. (Python shut
    the handler thread pools down before: their feeders handed back what they could no longer
    run.)"""
    global _exiting
    _exiting = True
    for c in list(clients):
        try:
            c._native.close(True, EXIT_DRAIN_SECONDS)
        except BaseException:  # pragma: no cover
            pass
    for s in list(subscriptions):
        try:
            if not s.closed:
                s.close(True, EXIT_DRAIN_SECONDS)
        except BaseException:  # pragma: no cover
            pass
    _native._shutdown(EXIT_SETTLE_SECONDS)
