"""Quick start (blocking API, e.g. in Django, Flask or a script).

REDIS_URL=redis://localhost:6379 python quickstart_sync.py
"""

import os
import threading

import redelay

URL = os.environ.get("REDIS_URL", "redis://localhost:6379")

client = redelay.Client(URL)
invoices = client.queue("invoices")

# Producer side: schedule a reminder in 1.5 seconds; an id makes publishing idempotent.
published = invoices.publish(b'{"invoice": 1042}', delay=1.5, id="invoice-1042-reminder")
print("published", published.id, published.status)

# Consumer side, option 1: pull.
for msg in invoices.fetch(10, wait=5):
    print("pulled", msg.body, "attempt", msg.attempt)
    msg.ack()

# Consumer side, option 2: a handler running in a thread pool.
invoices.publish(b'{"invoice": 1043}', delay=0.5)
handled = threading.Event()


def handle(msg: redelay.SyncMessage) -> None:
    print("handled", msg.body, "late by", msg.lateness)
    handled.set()


with invoices.subscribe(handle, concurrency=4):
    handled.wait(10)

print("stats:", invoices.stats())
