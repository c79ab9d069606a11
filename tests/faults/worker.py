"""The Python twin of core/examples/fault_worker.rs: the process the fault suite (tests/faults)
starts and kills, with the same command line and log lines, consuming through the public API of
the installed `redelay` package (a subscription: the core's batch consumer).

  worker.py publish URL QUEUE COUNT SPREAD_MS     publish m0..m{COUNT-1}, due over SPREAD_MS
  worker.py consume URL QUEUE LOG CONCURRENCY WORK_MS

The consumer appends to LOG, one unbuffered write per line (so a SIGKILL loses no line that was
written): `handled ID ATTEMPT PID LEASE_DEADLINE_MS` before it acks, `acked ID ATTEMPT PID`
after the ack succeeded. Handlers take a random 0..WORK_MS, so kills land inside them.
"""

import asyncio
import os
import random
import sys
from datetime import datetime, timedelta, timezone
from typing import Awaitable, Callable, List, TypeVar

import redelay

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
T = TypeVar("T")


async def retrying(what: str, call: Callable[[], Awaitable[T]]) -> T:
    """Redis may be down while this worker (re)starts: keep trying."""
    while True:
        try:
            return await call()
        except redelay.RedelayError as e:
            print(f"worker.py {what}: {e}; retrying", file=sys.stderr, flush=True)
            await asyncio.sleep(0.2)


async def publish(q: redelay.AsyncQueue, count: int, spread_ms: int) -> None:
    i = 0
    while i < count:
        n = min(1000, count - i)
        items: List[redelay.PublishItem] = [
            {
                "body": f"body {k}".encode(),
                "id": f"m{k}",
                "delay": timedelta(milliseconds=k * spread_ms // max(count, 1)),
                "max_attempts": 1000,
                "ttr": 2,
            }
            for k in range(i, i + n)
        ]
        await retrying("publish", lambda: q.publish_batch(items))
        i += n
    print(f"published {count}")


async def consume(q: redelay.AsyncQueue, log_path: str, concurrency: int, work_ms: int) -> None:
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    pid = os.getpid()

    async def handle(m: redelay.Message) -> None:
        deadline = (m.lease_deadline - EPOCH) // timedelta(milliseconds=1)
        os.write(log, f"handled {m.id} {m.attempt} {pid} {deadline}\n".encode())
        await asyncio.sleep(random.randrange(work_ms) / 1000 if work_ms else 0)
        try:
            await m.ack()
        except redelay.RedelayError as e:
            print(f"worker.py: ack {m.id}: {e}", file=sys.stderr, flush=True)
            return
        os.write(log, f"acked {m.id} {m.attempt} {pid}\n".encode())

    async def subscribe() -> redelay.Subscription:
        return await q.subscribe(handle, concurrency=concurrency, prefetch=concurrency, ttr=2)

    sub = await retrying("subscribe", subscribe)
    await sub.wait()


async def main(argv: List[str]) -> None:
    if len(argv) < 3 or argv[0] not in ("publish", "consume"):
        sys.exit("usage: worker.py publish URL QUEUE COUNT SPREAD_MS | consume URL QUEUE LOG CONCURRENCY WORK_MS")
    client = await retrying("connect", lambda: redelay.AsyncClient.connect(argv[1], response_timeout=2))
    q = client.queue(argv[2])
    if argv[0] == "publish":
        await publish(q, int(argv[3]), int(argv[4]))
    else:
        await consume(q, argv[3], int(argv[4]), int(argv[5]))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
