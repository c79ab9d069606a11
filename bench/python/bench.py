#!/usr/bin/env python3
"""redelay Python benchmark: publish_batch messages/s and deliver+ack messages/s.

Needs REDIS_URL (run it as `tests/with-redis.sh python bench/python/bench.py`) and redelay
installed (a release build: `pip install ./bindings-python`). Prints one JSON line:
{"lang":"python","publish_batch_per_s":..,"deliver_ack_per_s":..}

Options (environment): BENCH_N messages per measurement (default 100000), BENCH_BATCH
messages per publish_batch call (default 1000), BENCH_CONCURRENCY handlers (default 200),
BENCH_BODY body size in bytes (default 64).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid

import redelay

N = int(os.environ.get("BENCH_N", "100000"))
BATCH = int(os.environ.get("BENCH_BATCH", "1000"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "200"))
BODY = b"x" * int(os.environ.get("BENCH_BODY", "64"))


async def publish_all(q: redelay.AsyncQueue, n: int) -> float:
    """Publishes n messages in batches of BATCH, a few batches in flight at once; returns seconds."""
    batch = [BODY] * BATCH
    t0 = time.perf_counter()
    sent = 0
    inflight = 4
    while sent < n:
        calls = []
        for _ in range(inflight):
            if sent >= n:
                break
            k = min(BATCH, n - sent)
            calls.append(q.publish_batch(batch[:k] if k < BATCH else batch))
            sent += k
        await asyncio.gather(*calls)
    return time.perf_counter() - t0


async def consume_all(q: redelay.AsyncQueue, n: int) -> float:
    """Subscribes a no-op async handler and returns seconds until n messages were acked."""
    done = asyncio.Event()
    count = 0

    async def handler(msg: redelay.Message) -> None:
        nonlocal count
        count += 1
        if count >= n:
            done.set()

    t0 = time.perf_counter()
    sub = await q.subscribe(handler, concurrency=CONCURRENCY)
    await asyncio.wait_for(done.wait(), timeout=600)
    # Acks are coalesced: wait until the queue is empty so every ack is counted.
    while (await q.stats()).total > 0:  # noqa: ASYNC110 (the condition is in Redis: polled)
        await asyncio.sleep(0.002)
    elapsed = time.perf_counter() - t0
    await sub.close()
    return elapsed


async def main() -> None:
    url = os.environ.get("REDIS_URL")
    if not url:
        sys.exit("bench.py: set REDIS_URL (run under tests/with-redis.sh)")
    client = await redelay.AsyncClient.connect(url, prefix="bench-py-" + uuid.uuid4().hex[:8])
    warm = client.queue("warmup")
    await publish_all(warm, min(N, 20000))
    await consume_all(warm, min(N, 20000))

    q = client.queue("bench")
    pub_s = await publish_all(q, N)
    stats = await q.stats()
    assert stats.total == N, stats
    con_s = await consume_all(q, N)
    print(
        json.dumps(
            {
                "lang": "python",
                "n": N,
                "publish_batch_per_s": round(N / pub_s),
                "deliver_ack_per_s": round(N / con_s),
                "batch": BATCH,
                "concurrency": CONCURRENCY,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
