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

from . import _asyncio, _errors, _results, _sync, _types
from ._asyncio import *  # noqa: F403
from ._errors import *  # noqa: F403
from ._native import BaseMessage, Message, SyncMessage
from ._results import *  # noqa: F403
from ._sync import *  # noqa: F403
from ._types import *  # noqa: F403

__version__ = "0.1.0"

__all__ = ["BaseMessage", "Message", "SyncMessage", "__version__"]
__all__ += _asyncio.__all__ + _sync.__all__ + _results.__all__ + _types.__all__ + _errors.__all__
