"""The worker command: ``python -m redelay worker module:function --queue NAME``.

Imports ``function`` from ``module`` (an ``async def`` runs on the worker's event loop, a plain
``def`` in a thread pool), subscribes it to the queue, and runs until SIGTERM or SIGINT. Then it
stops fetching, lets running handlers finish (up to ``--drain-timeout``), and exits 0. A
second signal during the drain exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
from typing import Any, List, Optional

from ._asyncio import AsyncClient
from ._errors import RedelayError

logger = logging.getLogger("redelay.worker")

DEFAULT_URL = "redis://127.0.0.1:6379"
LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
#: The options of the worker command as the core's messages name them, and as their flags.
_FLAGS = {"ttr": "--ttr", "drain_timeout": "--drain-timeout", "concurrency": "--concurrency", "prefix": "--prefix"}


def _flagged(message: str) -> str:
    """A core message naming one of the worker's options by its flag (``--ttr: must be ...``)."""
    field, sep, rest = message.partition(": ")
    return f"{_FLAGS[field]}: {rest}" if sep and field in _FLAGS else message


def load_handler(target: str) -> Any:
    """Imports ``module:function`` (the function part may be dotted: ``module:Class.method``)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"redelay worker: expected module:function, got {target!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:  # the module, or one it imports
        raise SystemExit(f"redelay worker: cannot import {module_name!r} for {target}: {e}") from None
    for i, part in enumerate(attr.split(".")):
        if not hasattr(obj, part):
            where = ".".join([module_name, *attr.split(".")[:i]])
            raise SystemExit(f"redelay worker: {where} has no {part!r} (for {target})")
        obj = getattr(obj, part)
    if not callable(obj):
        raise SystemExit(f"redelay worker: {target} is not callable")
    return obj


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m redelay", description="redelay command line")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="run a handler for every message of a queue until SIGTERM/SIGINT")
    w.add_argument("target", help="the handler, as module:function")
    w.add_argument("--queue", "-q", required=True, help="queue name")
    w.add_argument("--concurrency", "-c", type=int, help="handlers running at once (default: the core's, 10)")
    w.add_argument(
        "--url",
        default=None,
        help=f"Redis URL (default: $REDELAY_URL, else $REDIS_URL, else {DEFAULT_URL})",
    )
    w.add_argument("--prefix", default=None, help="key prefix (default redelay)")
    w.add_argument("--ttr", type=float, default=None, help="lease length in seconds (default: each message's)")
    w.add_argument(
        "--drain-timeout", type=float, help="seconds to let running handlers finish on stop (default: the core's, 30)"
    )
    w.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, help="logging level (default INFO)"
    )
    return p


async def run_worker(handler: Any, args: argparse.Namespace, url: str) -> int:
    """Runs ``handler`` on ``args.queue`` until SIGTERM/SIGINT, then drains and returns 0."""
    queue, concurrency = args.queue, args.concurrency
    client = await AsyncClient.connect(url, prefix=args.prefix)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)

    def on_signal(signum: int) -> None:
        logger.info("received %s: stopping (draining running handlers)", signal.Signals(signum).name)
        stop.set()
        for s in signals:
            # A second signal falls back to the default action: exit at once.
            loop.remove_signal_handler(s)
            signal.signal(s, signal.SIG_DFL)

    for s in signals:
        loop.add_signal_handler(s, on_signal, s)
    # By name, so that a sharded queue is consumed with the shard count stored in Redis.
    sub = await client.subscribe(
        [queue], handler, concurrency=concurrency, ttr=args.ttr, drain_timeout=args.drain_timeout
    )
    logger.info("worker started: queue %r, concurrency %s, pid %d", queue, concurrency or "default", os.getpid())
    print(f"redelay worker ready: queue={queue} pid={os.getpid()}", flush=True)
    # Until a signal, or the subscription closing by itself (a handler raised SystemExit or
    # KeyboardInterrupt: the program is to stop).
    closed, signalled = asyncio.ensure_future(sub.wait()), asyncio.ensure_future(stop.wait())
    await asyncio.wait([closed, signalled], return_when=asyncio.FIRST_COMPLETED)
    signalled.cancel()
    await sub.close()
    c = sub.counters()
    logger.info("worker stopped: delivered %d, acked %d, nacked %d", c.delivered, c.acked, c.nacked)
    print(f"redelay worker stopped: delivered={c.delivered} acked={c.acked} nacked={c.nacked}", flush=True)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of ``python -m redelay``."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    handler = load_handler(args.target)
    url = args.url or os.environ.get("REDELAY_URL") or os.environ.get("REDIS_URL") or DEFAULT_URL
    try:
        return asyncio.run(run_worker(handler, args, url))
    except RedelayError as e:
        print(f"redelay worker: {_flagged(str(e))}", file=sys.stderr)
        return 1
