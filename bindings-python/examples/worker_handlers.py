"""Handlers for the worker command:

    python -m redelay worker worker_handlers:send_email --queue emails --concurrency 32
    python -m redelay worker worker_handlers:make_thumbnail --queue thumbnails

The worker stops on SIGTERM or SIGINT: it stops fetching, lets running handlers finish, and
exits 0.
"""

import asyncio
import json
import logging

import redelay

log = logging.getLogger("worker_handlers")


async def send_email(msg: redelay.Message) -> None:
    """An ``async def`` handler: runs on the worker's event loop."""
    job = json.loads(msg.body)
    if job.get("rate_limited"):
        # Retry in 30 s instead of the exponential backoff.
        raise redelay.RetryLater(30, "mail provider rate limit")
    await asyncio.sleep(0.01)  # talk to the mail provider here
    log.info("sent %s to %s (attempt %d)", msg.id, job.get("to"), msg.attempt)


def make_thumbnail(msg: redelay.SyncMessage) -> None:
    """A plain ``def`` handler: runs in a thread pool, so blocking calls are fine."""
    if not msg.body:
        raise ValueError("empty image")  # nacked with this text; retried after backoff
    log.info("thumbnail for %s: %d bytes", msg.id, len(msg.body))
