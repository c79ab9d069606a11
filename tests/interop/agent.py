"""The Python agent of the cross-language interop matrix: the command line of
core/examples/interop_agent.rs, using only the public API of the installed `redelay` package.

  agent.py publish URL QUEUES SPEC_JSON_FILE
  agent.py consume URL QUEUES N OUT_JSON_FILE [--nack REASON | --leave]
  agent.py admin URL QUEUE pause|resume|search|bulk|stats ARG_JSON

QUEUES is one queue name or several separated by commas. See core/examples/interop_agent.rs
for the formats.
"""

import asyncio
import base64
import json
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Tuple

import redelay

TIMEOUT = 30.0
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
US = timedelta(microseconds=1)


def die(msg: str, code: int = 1) -> None:
    print(f"agent.py (python): {msg}", file=sys.stderr)
    sys.exit(code)


def ms(t: datetime) -> float:
    return ((t - EPOCH) // US) / 1000.0


def queues(arg: str) -> List[str]:
    return [q for q in arg.split(",") if q]


async def publish(client: redelay.AsyncClient, queue_arg: str, spec_file: str) -> None:
    # A one-shot agent: nothing else runs on its loop while it reads or writes a file (ASYNC230).
    with open(spec_file, encoding="utf-8") as f:  # noqa: ASYNC230
        spec = json.load(f)
    items: List[Dict[str, Any]] = []
    for e in spec:
        item: Dict[str, Any] = {"body": base64.b64decode(e["body_b64"])}
        if e.get("id") is not None:
            item["id"] = e["id"]
        if e.get("headers") is not None:
            item["headers"] = e["headers"]
        if e.get("delay_ms") is not None:
            item["delay"] = timedelta(milliseconds=e["delay_ms"])
        if e.get("max_attempts") is not None:
            item["max_attempts"] = e["max_attempts"]
        if e.get("ttr_ms") is not None:
            item["ttr"] = timedelta(milliseconds=e["ttr_ms"])
        if e.get("expires_in_ms") is not None:
            item["expires_in"] = timedelta(milliseconds=e["expires_in_ms"])
            item["drop_on_expiry"] = bool(e.get("drop_on_expiry"))
        items.append(item)
    out = []
    for name in queues(queue_arg):
        published = await client.queue(name).publish_batch(items)
        out += [{"queue": name, "id": p.id, "status": p.status} for p in published]
    print(json.dumps(out, ensure_ascii=False))


async def fetch_n(q: Any, n: int, deadline: float) -> Tuple[List[Any], Optional[str]]:
    got: List[Any] = []
    while len(got) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            got += await q.fetch(min(n - len(got), 1000), wait=min(left, 1.0))
        except redelay.RedelayError as e:
            return got, f"fetch from {q.name}: {e}"
    return got, None


def record(m: Any) -> Dict[str, Any]:
    return {
        "id": m.id,
        "queue": m.queue,
        "body_b64": base64.b64encode(m.body).decode("ascii"),
        "headers": dict(m.headers),
        "attempt": m.attempt,
        "max_attempts": m.max_attempts,
        "last_error": m.last_error,
        "published_at_ms": ms(m.published_at),
        "due_at_ms": ms(m.due_at),
        "delivered_at_ms": ms(m.delivered_at),
        "lateness_ms": (m.lateness // US) / 1000.0,
        "consumer": "python",
    }


async def consume(client: redelay.AsyncClient, queue_arg: str, n: int, out_file: str, settle: List[str]) -> None:
    """Fetches N from each queue, then acks them, nacks them (``["--nack", REASON]``) or leaves
    them leased (``["--leave"]``)."""
    qs = [client.queue(name) for name in queues(queue_arg)]
    print("ready", flush=True)
    deadline = time.monotonic() + TIMEOUT
    results = await asyncio.gather(*(fetch_n(q, n, deadline) for q in qs))
    problems: List[str] = []
    got: List[Any] = []
    for q, (msgs, err) in zip(qs, results):
        if len(msgs) < n:
            problems.append(f"{q.name}: {len(msgs)} of {n} messages arrived within {TIMEOUT} s")
        if err:
            problems.append(err)
        got += msgs
    with open(out_file, "w", encoding="utf-8") as f:  # noqa: ASYNC230 (see publish)
        json.dump([record(m) for m in got], f, ensure_ascii=False)
    for m in got if settle != ["--leave"] else []:
        try:
            if not settle:
                await m.ack()
            else:
                await m.nack(retry_in=0, reason=settle[1])
        except redelay.RedelayError as e:
            problems.append(f"settling {m.id}: {e}")
    if problems:
        die("; ".join(problems), 3)


async def admin(client: redelay.AsyncClient, name: str, op: str, arg_json: str) -> None:
    arg = json.loads(arg_json)
    out: Dict[str, Any]
    if op == "stats":
        out = {}
        for each in queues(name):
            s = await client.queue(each).stats()
            out[each] = {k: getattr(s, k) for k in ("total", "scheduled", "ready", "leased", "lapsed", "dead")}
        print(json.dumps(out, ensure_ascii=False))
        return
    q = client.queue(name)
    if op == "pause":
        out = {"changed": await q.pause()}
    elif op == "resume":
        out = {"changed": await q.resume()}
    elif op == "search":
        ids: List[str] = []
        cursor: Optional[str] = None
        while True:
            page = await q.search(header=tuple(arg["header"]), cursor=cursor)
            ids += [m.id for m in page.items]
            cursor = page.cursor
            if cursor is None:
                break
        out = {"ids": sorted(set(ids))}
    elif op == "bulk":
        report = await q.bulk(arg["action"], header=tuple(arg["header"]))
        out = {"matched": report.matched, "done": report.done}
    else:
        die(f"admin: unknown operation {op!r}", 2)
    print(json.dumps(out, ensure_ascii=False))


async def main(argv: List[str]) -> None:
    usage = (
        "usage: agent.py publish URL QUEUES SPEC | consume URL QUEUES N OUT [--nack REASON | --leave]"
        " | admin URL QUEUE OP ARG_JSON"
    )
    if len(argv) < 4:
        die(usage, 2)
    cmd, url = argv[0], argv[1]
    client = await redelay.AsyncClient.connect(url)
    try:
        if cmd == "publish" and len(argv) == 4:
            await publish(client, argv[2], argv[3])
        elif (
            cmd == "consume"
            and len(argv) >= 5
            and (argv[5:] in ([], ["--leave"]) or (len(argv) == 7 and argv[5] == "--nack"))
        ):
            await consume(client, argv[2], int(argv[3]), argv[4], argv[5:])
        elif cmd == "admin" and len(argv) == 5:
            await admin(client, argv[2], argv[3], argv[4])
        else:
            die(usage, 2)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
