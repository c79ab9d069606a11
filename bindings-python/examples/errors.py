"""Error handling: bad input, an unreachable Redis, failing handlers and dead letters.

REDIS_URL=redis://localhost:6379 python errors.py
"""

import asyncio
import os
from datetime import datetime

import redelay

URL = os.environ.get("REDIS_URL", "redis://localhost:6379")


async def main() -> None:
    # Redis unreachable: a redelay.ConnectionError, which is also a builtin ConnectionError.
    try:
        await redelay.AsyncClient.connect("redis://127.0.0.1:1", connect_timeout=0.5)
    except ConnectionError as e:
        print("connection:", e)

    client = await redelay.AsyncClient.connect(URL)
    payments = client.queue("payments")

    # Bad input is refused before anything is written: InvalidArgumentError is a ValueError.
    try:
        await payments.publish(b"x", at=datetime(2030, 1, 1))  # naive datetime
    except redelay.InvalidArgumentError as e:
        print("invalid:", e)

    # A handler that raises: the message is nacked with the exception's text and retried
    # after its backoff; after max_attempts it becomes a dead letter.
    await payments.publish(b"card 4242", id="payment-7", max_attempts=1)
    failed = asyncio.Event()

    async def charge(msg: redelay.Message) -> None:
        failed.set()
        raise RuntimeError("card declined")

    async with payments.subscribe(charge):
        await asyncio.wait_for(failed.wait(), timeout=10)

    for dead in await payments.dead_letters(10):
        print("dead letter:", dead.id, dead.last_error)
    print("respawned:", await payments.respawn(["payment-7"]))
    print("cancelled:", await payments.cancel("payment-7"))

    # Every redelay error is a RedelayError with a kind.
    try:
        await payments.reschedule("no-such-id", delay=5)
    except redelay.RedelayError as e:
        print("error kind:", e.kind, "-", e)


if __name__ == "__main__":
    asyncio.run(main())
