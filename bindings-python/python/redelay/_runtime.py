"""Runs handlers on the core's bridge, maps their failures, routes the core's logs into
``logging``, and closes clients at interpreter exit.

* ``async def`` handlers run on the event loop captured at subscribe: the core wakes it once
  per batch (``call_soon_threadsafe``), :meth:`LoopRunner.drain` takes the batch and runs each
  handler's first step at once (a task only for one that awaits), and outcomes go back in one
  call per loop iteration.
* Plain ``def`` handlers run on threads, never on an event loop: one thread waits in
  ``take_wait`` (GIL released) and hands each delivery to a thread pool.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import logging
import threading
import types
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Generator, List, Optional, Set, Tuple

from . import _native
from ._errors import RetryLater, from_core  # noqa: F401 (from_core: the native module's errors)

logger = logging.getLogger("redelay")

#: Longest time the interpreter waits at exit for clients to close (their subscriptions drain).
EXIT_DRAIN_SECONDS = 10.0
#: Longest time the interpreter waits at exit for runtime threads to leave Python.
EXIT_SETTLE_SECONDS = 5.0

Outcome = Optional[Tuple[str, Optional[float]]]


def failure(exc: BaseException, msg: Any) -> Tuple[str, Optional[float]]:
    """Maps a handler's exception to (reason, retry_in seconds or None for backoff), logging it."""
    if isinstance(exc, RetryLater):
        return exc.reason, exc.retry_in
    reason = _native.failure_reason(type(exc).__name__, str(exc))
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


class LoopRunner:
    """Runs an ``async def`` handler's deliveries on ``loop`` (see the module docstring)."""

    def __init__(self, handler: Callable[[Any], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.handler, self.loop = handler, loop
        self.context = contextvars.copy_context()
        self.sub: Optional[_native.NativeSubscription] = None
        self.tasks: Set[asyncio.Future[Any]] = set()
        self.out: List[Tuple[int, Outcome]] = []
        #: Set by close: a handler task cancelled from then on (``asyncio.run`` ending cancels
        #: every task) is handed back, not failed.
        self.closing = False

    def wake(self) -> None:
        """Called by the core, from any thread."""
        self.loop.call_soon_threadsafe(self.drain, context=self.context)

    def drain(self) -> None:
        if self.sub is None:  # woken before subscribe returned
            self.loop.call_soon(self.drain, context=self.context)
            return
        out = self.out
        for key, msg in self.sub.take():
            ctx = contextvars.copy_context()
            try:
                ret = ctx.run(self.handler, msg)
                if isinstance(ret, types.CoroutineType):
                    try:
                        first = ctx.run(ret.send, None)
                    except StopIteration:
                        out.append((key, None))
                        continue
                    # Created inside ctx.run, the task runs in a copy of ctx (create_task's own
                    # context= argument needs Python 3.11).
                    fut: asyncio.Future[Any] = ctx.run(self.loop.create_task, _finish(ret, first))
                else:
                    fut = asyncio.ensure_future(ret, loop=self.loop)
            except BaseException as e:  # the handler failed at once
                out.append((key, failure(e, msg)))
                continue
            self.tasks.add(fut)
            fut.add_done_callback(functools.partial(self.done, key, msg))
        self.flush()

    def done(self, key: int, msg: Any, fut: asyncio.Future[Any]) -> None:
        self.tasks.discard(fut)
        if fut.cancelled():
            if self.closing and self.sub is not None:
                self.sub.give_back([key])  # due now again, no attempt counted
                return
            outcome: Outcome = ("handler task was cancelled", None)
        else:
            exc = fut.exception()
            outcome = None if exc is None else failure(exc, msg)
        if not self.out:
            self.loop.call_soon(self.flush)
        self.out.append((key, outcome))

    def flush(self) -> None:
        if self.out and self.sub is not None:
            out, self.out = self.out, []
            self.sub.complete(out)

    def cancel_running(self) -> None:
        """After close: handlers still running past the drain are cancelled."""
        for t in list(self.tasks):
            t.cancel()


@types.coroutine
def _resume(coro: Any, value: Any) -> Generator[Any, Any, Any]:
    """Continues, inside a task, a coroutine whose first step ran already and yielded ``value``."""
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as e:
            try:
                value = coro.throw(e)
            except StopIteration as s:
                return s.value
            continue
        try:
            value = coro.send(sent)
        except StopIteration as s:
            return s.value


async def _finish(coro: Any, first: Any) -> Any:
    return await _resume(coro, first)


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
        except BaseException as e:
            outcome = failure(e, msg)
        self.sub.complete([(key, outcome)])


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
