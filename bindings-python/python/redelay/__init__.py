"""redelay: a delayed-message queue on Redis, with asyncio and blocking APIs.

A producer publishes a message that must not be seen before a given time; at that time one
consumer out of many receives it, and it stays safe in Redis until that consumer acknowledges
it. The work is done by redelay's Rust core; this package is its Python binding.

Quick start (asyncio)::

    import asyncio, redelay

    async def main():
        client = await redelay.AsyncClient.connect("redis://localhost:6379")
        emails = client.queue("emails")
        await emails.publish(b"welcome mail for user 42", delay=5)

        async def handle(msg: redelay.Message) -> None:
            print(msg.id, msg.body, "late by", msg.lateness)

        async with emails.subscribe(handle, concurrency=16):
            await asyncio.sleep(10)

    asyncio.run(main())

Blocking code uses :class:`Client` the same way, without ``await``.
"""

from ._asyncio import AsyncClient, AsyncHandler, AsyncQueue, SubscribeCall, Subscription, SyncHandler
from ._errors import (
    ConnectionError,
    HandlerError,
    InvalidArgumentError,
    LeaseLostError,
    NotFoundError,
    RedelayError,
    RedisError,
    RetryLater,
    TimeoutError,
)
from ._native import BaseMessage, Counters, Message, MessageInfo, Published, Stats, SyncMessage, VerifyReport
from ._sync import Client, Queue, SyncSubscription
from ._types import Body, PublishItem, Seconds

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncQueue",
    "AsyncHandler",
    "SyncHandler",
    "Subscription",
    "SubscribeCall",
    "Client",
    "Queue",
    "SyncSubscription",
    "BaseMessage",
    "Message",
    "SyncMessage",
    "MessageInfo",
    "Published",
    "Stats",
    "VerifyReport",
    "Counters",
    "Body",
    "Seconds",
    "PublishItem",
    "RedelayError",
    "InvalidArgumentError",
    "ConnectionError",
    "TimeoutError",
    "LeaseLostError",
    "NotFoundError",
    "RedisError",
    "HandlerError",
    "RetryLater",
    "__version__",
]
