"""Quick start (asyncio): publish delayed messages and receive them when they are due.

REDIS_URL=redis://localhost:6379 python quickstart_async.py
"""

import asyncio
import os
from datetime import datetime, timedelta, timezone

import redelay

URL = os.environ.get("REDIS_URL", "redis://localhost:6379")


async def main() -> None:
    client = await redelay.AsyncClient.connect(URL)
    reminders = client.queue("reminders")

    # Due in 2 seconds, and at a given (time-zone aware) time.
    await reminders.publish(b"pay the invoice", delay=2)
    await reminders.publish(
        "call Alice",
        at=datetime.now(timezone.utc) + timedelta(seconds=1),
        headers={"user": "alice"},
    )

    received = 0
    all_done = asyncio.Event()

    async def handle(msg: redelay.Message) -> None:
        nonlocal received
        late_ms = msg.lateness.total_seconds() * 1000
        print(f"got {msg.body.decode()!r} headers={msg.headers} late by {late_ms:.1f} ms")
        received += 1
        if received == 2:
            all_done.set()
        # Returning acks the message; raising would retry it later.

    async with reminders.subscribe(handle, concurrency=8):
        await asyncio.wait_for(all_done.wait(), timeout=30)
    print("done")


if __name__ == "__main__":
    asyncio.run(main())
