"""Every error kind of the core maps to its exception class, carrying the core's message."""

from __future__ import annotations

import builtins
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterator, List

import pytest

import redelay

from conftest import FaultProxy, Resp, run

KINDS = {
    redelay.InvalidArgumentError: ("InvalidArgument", ValueError),
    redelay.ConnectionError: ("Connection", builtins.ConnectionError),
    redelay.TimeoutError: ("Timeout", builtins.TimeoutError),
    redelay.LeaseLostError: ("LeaseLost", None),
    redelay.NotFoundError: ("NotFound", LookupError),
    redelay.RedisError: ("Redis", None),
    redelay.HandlerError: ("Handler", None),
}


@pytest.mark.parametrize("cls", list(KINDS))
def test_hierarchy(cls: type[redelay.RedelayError]) -> None:
    kind, builtin = KINDS[cls]
    assert issubclass(cls, redelay.RedelayError)
    assert cls.kind == kind
    if builtin is not None:
        assert issubclass(cls, builtin)
    e = cls("the message")
    assert str(e) == "the message" and e.message == "the message"


def test_invalid_argument(client: redelay.Client) -> None:
    with pytest.raises(redelay.InvalidArgumentError, match="queue name") as ei:
        client.queue("bad name!")
    assert isinstance(ei.value, ValueError)
    q = client.queue("inv")
    with pytest.raises(redelay.InvalidArgumentError, match="max_attempts"):
        q.publish(b"x", max_attempts=0)
    with pytest.raises(redelay.InvalidArgumentError, match="ttr"):
        q.publish(b"x", ttr=0.001)
    with pytest.raises(redelay.InvalidArgumentError, match="id"):
        q.publish(b"x", id="12345")  # all-digit ids are reserved for generated ones
    with pytest.raises(redelay.InvalidArgumentError, match="delay"):
        q.publish(b"x", delay=-1)
    with pytest.raises(redelay.InvalidArgumentError, match="delay"):
        q.publish(b"x", delay=float("nan"))
    with pytest.raises(redelay.InvalidArgumentError, match="delay"):
        q.publish(b"x", delay=100 * 365 * 24 * 3600)
    with pytest.raises(redelay.InvalidArgumentError, match="max"):
        q.fetch(0)
    assert q.stats().total == 0


def test_invalid_url_and_body_limit(url: str, prefix: str) -> None:
    with pytest.raises(redelay.InvalidArgumentError, match="scheme"):
        redelay.Client("http://localhost:6379")
    c = redelay.Client(url, prefix=prefix, max_body_bytes=10)
    with pytest.raises(redelay.InvalidArgumentError, match="body"):
        c.queue("small").publish(b"x" * 11)


def test_type_errors_for_wrong_types(client: redelay.Client) -> None:
    q = client.queue("types")
    with pytest.raises(TypeError, match="body"):
        q.publish(12)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="headers"):
        q.publish(b"x", headers={"a": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="delay"):
        q.publish(b"x", delay="soon")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("delay", lambda q: q.publish(b"x", delay=-1)),
        ("expires_in", lambda q: q.publish(b"x", expires_in=-0.5)),
        ("backoff", lambda q: q.publish(b"x", backoff=(1, -1))),
        ("wait", lambda q: q.fetch(1, wait=-1)),
        ("ttr", lambda q: q.fetch(1, ttr=float("inf"))),
    ],
)
def test_duration_errors_name_the_argument_in_seconds(client: redelay.Client, name: str, call: Any) -> None:
    q = client.queue("durations")
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        call(q)
    assert str(ei.value).startswith(f"{name}: must be a finite number of seconds, not negative, got "), ei.value
    assert q.stats().total == 0


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"delay": 1e300}, "delay: must be below 10^12 s (every limit of a duration is far below), got 1e300 s"),
        ({"ttr": 1e13}, "ttr: must be below 10^12 s (every limit of a duration is far below), got 1e13 s"),
        ({"delay": -1e300}, "delay: must be a finite number of seconds, not negative, got -1e300"),
    ],
)
def test_huge_durations_are_refused_in_the_seconds_given(
    client: redelay.Client, kwargs: Dict[str, float], said: str
) -> None:
    q = client.queue("huge")
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", **kwargs)  # type: ignore[arg-type]
    assert str(ei.value) == said
    assert q.stats().total == 0


def test_a_retry_delay_follows_one_rule_on_every_path(client: redelay.Client) -> None:
    """``RetryLater``, ``Message.nack`` and ``Queue.nack`` read ``retry_in`` by the core's one
    rule (the rule of Node's and Kotlin's too): 0 to 3650 days, else refused in its words."""
    q = client.queue("retry-rule")
    q.publish(b"x", id="m")
    (m,) = q.fetch(1, wait=5)
    paths: List[Callable[[Any], Any]] = [
        lambda d: redelay.RetryLater(d),
        lambda d: m.nack(retry_in=d),
        lambda d: q.nack(m.id, m.token, retry_in=d),
    ]
    for delay, got in [(-2, "-2 s"), (timedelta(seconds=-0.5), "-0.5 s"), (315360001, "315360001 s")]:
        for path in paths:
            with pytest.raises(redelay.InvalidArgumentError) as ei:
                path(delay)
            assert str(ei.value) == f"retry_in: must be 0 to 3650 days, got {got}", ei.value
    for delay in (float("nan"), float("inf")):
        for path in paths:
            with pytest.raises(redelay.InvalidArgumentError, match=r"^retry_in: must be 0 to 3650 days, got "):
                path(delay)
    assert not m.settled  # refused before anything was sent
    assert redelay.RetryLater(0).retry_in == 0.0 and redelay.RetryLater(timedelta(days=3650)).retry_in == 315360000.0
    assert m.nack(retry_in=0) is False


def test_limits_state_the_duration_given_in_seconds(client: redelay.Client) -> None:
    """A duration over its limit is told back in seconds, as it was given (not in the wire's ms)."""
    q = client.queue("in-seconds")
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", delay=315360001)
    assert str(ei.value) == "delay: 315360001 s is more than the limit of 3650 days"
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", ttr=0.05)
    assert str(ei.value) == "ttr: must be 100 ms to 24 h, got 0.05 s"
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", backoff=(60, 10.5))
    assert "backoff: base (60 s) must not be above max (10.5 s)" in str(ei.value)
    assert q.stats().total == 0


def test_decode_errors_name_the_field_without_a_position_in_the_text(client: redelay.Client) -> None:
    q = client.queue("decode")
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", max_attempts="3")  # type: ignore[arg-type]
    assert str(ei.value).startswith("max_attempts: invalid type: string"), ei.value
    assert " line " not in str(ei.value) and " column " not in str(ei.value), ei.value


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("start", lambda q: q.upcoming(60, 3, start=datetime(1969, 12, 31, tzinfo=timezone.utc))),
        ("start", lambda q: q.upcoming(60, 3, start=datetime(2200, 1, 1, tzinfo=timezone.utc))),
        ("at", lambda q: q.publish(b"x", at=datetime(1969, 12, 31, tzinfo=timezone.utc))),
        ("expires_at", lambda q: q.publish(b"x", expires_at=datetime(1969, 12, 31, tzinfo=timezone.utc))),
        (
            "until",
            lambda q: q.history(datetime(2000, 1, 1, tzinfo=timezone.utc), datetime(1969, 1, 1, tzinfo=timezone.utc)),
        ),
    ],
)
def test_time_errors_name_the_argument_as_python_does(client: redelay.Client, name: str, call: Any) -> None:
    """The core's wire names (``from_ms``, ``at_ms``) are spelled as the keyword arguments."""
    q = client.queue("times")
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        call(q)
    assert str(ei.value).startswith(f"{name}: "), ei.value
    assert "_ms" not in str(ei.value) and "from" not in str(ei.value).split(":")[0], ei.value
    assert q.stats().total == 0


def test_misshapen_arguments_are_refused_not_misread(client: redelay.Client) -> None:
    q = client.queue("shapes")
    with pytest.raises(TypeError, match=r"^ids: expected a list of ids, got str 'abc'$"):
        q.respawn("abc")
    with pytest.raises(TypeError, match=r"^ids: expected a list of ids"):
        q.bulk("cancel", "abc")
    with pytest.raises(TypeError, match=r"^backoff: expected a pair \(base, max\), got 5$"):
        q.publish(b"x", backoff=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^backoff: expected a pair"):
        q.publish(b"x", backoff=(1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(redelay.InvalidArgumentError, match=r"^message 1: delay: must be a finite number"):
        q.publish_batch([b"ok", {"body": b"x", "delay": -1}])
    with pytest.raises(TypeError, match=r"^message 0: body: expected bytes"):
        q.publish_batch([12])  # type: ignore[list-item]
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        q.publish(b"x", id=123)  # type: ignore[arg-type]
    assert isinstance(ei.value, TypeError) and type(ei.value).__name__ == "InvalidArgumentError"
    assert q.stats().total == 0


@pytest.fixture
def dead_port() -> Iterator[int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    yield port


def test_connection_error(dead_port: int) -> None:
    with pytest.raises(redelay.ConnectionError) as ei:
        redelay.Client(f"redis://127.0.0.1:{dead_port}", connect_timeout=0.5)
    assert isinstance(ei.value, builtins.ConnectionError)
    assert "cannot connect" in str(ei.value)

    async def body() -> None:
        with pytest.raises(redelay.ConnectionError):
            await redelay.AsyncClient.connect(f"redis://127.0.0.1:{dead_port}", connect_timeout=0.5)

    run(body)


def test_timeout_error(url: str, prefix: str) -> None:
    c = redelay.Client(url, prefix=prefix, response_timeout=0.2)
    q = c.queue("slow")
    q.stats()
    # Keep Redis busy for ~1 s with a script from another connection.
    busy = Resp(url)
    script = (
        "local t=redis.call('TIME'); local s=t[1]*1000000+t[2]; "
        "repeat t=redis.call('TIME') until t[1]*1000000+t[2]-s > 1000000; return 1"
    )
    busy.send("EVAL", script, 0)
    time.sleep(0.05)
    try:
        with pytest.raises(redelay.TimeoutError) as ei:
            q.stats()
        assert isinstance(ei.value, builtins.TimeoutError)
    finally:
        assert busy.read() == 1
        busy.close()


def test_lease_lost_and_not_found(client: redelay.Client) -> None:
    q = client.queue("lost")
    q.publish(b"x", id="l-1", ttr=0.2)
    m = q.fetch(1, wait=1)[0]
    time.sleep(0.4)  # the lease runs out; the next fetch reclaims it
    again = q.fetch(1, wait=1)
    assert again and again[0].attempt == 2
    with pytest.raises(redelay.LeaseLostError, match="lease lost"):
        m.ack()
    again[0].ack()
    with pytest.raises(redelay.NotFoundError, match="no message") as ei:
        q.reschedule("missing", delay=1)
    assert isinstance(ei.value, LookupError)


def test_redis_error(client: redelay.Client, resp: Resp, prefix: str) -> None:
    # A key of the wrong type makes the script fail inside Redis.
    resp.call("SET", f"{prefix}:{{broken}}:msg", "not a hash")
    resp.call("SET", f"{prefix}:{{broken}}:sched", "not a zset")
    with pytest.raises(redelay.RedisError) as ei:
        client.queue("broken").publish(b"x")
    assert ei.value.kind == "Redis"


def test_a_subscription_keeps_its_latest_error(client: redelay.Client, resp: Resp, prefix: str) -> None:
    q = client.queue("sick")
    with q.subscribe(lambda m: None, concurrency=1) as sub:
        assert sub.queues == ["sick"] and sub.last_error is None
        # Spoiled before it is due: a record of an unknown version fails the fetch that meets it.
        q.publish(b"x", id="bad", delay=0.3)
        resp.call("HSET", f"{prefix}:{{sick}}:msg", "bad", b"\x09 garbage")
        deadline = time.monotonic() + 15
        while sub.last_error is None and time.monotonic() < deadline:
            time.sleep(0.02)
        e = sub.last_error
        assert isinstance(e, redelay.RedelayError) and "bad" in e.message, e
        assert sub.counters().errors >= 1


def test_errors_from_many_threads_do_not_deadlock(client: redelay.Client) -> None:
    q = client.queue("err-threads")
    errors: list[BaseException] = []

    def worker() -> None:
        for _ in range(20):
            try:
                q.reschedule("missing", delay=1)
            except redelay.NotFoundError as e:
                errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(errors) == 80


def test_wait_for_replicas(url: str, prefix: str) -> None:
    # The test Redis has no replicas: waiting for one times out, and the publish says so
    # (the message is stored on the master, so a retry with its id is safe).
    c = redelay.Client(url, prefix=prefix, wait_for_replicas=(1, 0.1))
    q = c.queue("durable")
    t = time.monotonic()
    with pytest.raises(redelay.RedisError, match="only 0 of 1 replicas confirmed within 100 ms"):
        q.publish(b"x", id="d1")
    assert time.monotonic() - t >= 0.09
    assert q.stats().total == 1
    # The core's range (1 to 100 replicas): not waiting is wait_for_replicas=None.
    with pytest.raises(redelay.InvalidArgumentError, match=r"wait_for_replicas\.replicas: must be 1 to 100, got 0"):
        redelay.Client(url, prefix=prefix, wait_for_replicas=(0, 0.1))
    with pytest.raises(redelay.InvalidArgumentError, match=r"wait_for_replicas\.timeout: must be 1 ms to 1 min"):
        redelay.Client(url, prefix=prefix, wait_for_replicas=(1, 120))
    with pytest.raises(TypeError, match="wait_for_replicas"):
        redelay.Client(url, prefix=prefix, wait_for_replicas=("one", 1))  # type: ignore[arg-type]


def test_wait_for_replicas_async(url: str, prefix: str) -> None:
    async def body() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix, wait_for_replicas=(1, 0.05))
        with pytest.raises(redelay.RedisError, match="only 0 of 1 replicas"):
            await c.queue("durable-async").publish(b"x")

    run(body)


def test_a_run_that_fails_in_the_middle_says_how_far_it_got(url: str, prefix: str) -> None:
    proxy = FaultProxy(url)
    c = redelay.Client(proxy.url, prefix=prefix)
    try:
        q = c.queue("q")
        ids = [f"n{i}" for i in range(2500)]
        q.publish_batch([{"body": b"x", "id": i, "max_attempts": 1} for i in ids])
        while got := q.fetch(1000):
            for m in got:
                m.nack(reason="boom")
        assert q.stats().dead == 2500

        def stopped(cut: bytes, run: Callable[[], object]) -> redelay.RedelayError:
            """The error of `run`, whose call holding `cut` never reaches Redis."""
            proxy.drop_next_request_with(cut)
            with pytest.raises(redelay.ConnectionError) as e:
                run()
            deadline = time.monotonic() + 10
            while True:  # the client reconnects
                try:
                    c.ping()
                    break
                except redelay.ConnectionError:
                    assert time.monotonic() < deadline, "the client did not reconnect"
                    time.sleep(0.05)
            return e.value

        # n0..n999 respawned, then the second call is cut.
        e = stopped(b"n1500", lambda: q.respawn(ids))
        assert e.so_far == {"count": 1000}
        assert "; stopped: respawned 1000 so far, and that stays done" in e.message
        # The first call finds no dead letter among n0..n999, the second purges n1000..n1999.
        e = stopped(b"n2000", lambda: q.bulk("purge", ids))
        assert e.so_far == {"matched": 2500, "done": 1000, "scanned": 0}
        # Failed before any step ended: nothing was done, nothing to say.
        e = stopped(b"n0", lambda: q.purge_dead(ids))
        assert e.so_far is None
        assert proxy.dropped == 3
        with pytest.raises(redelay.InvalidArgumentError) as bad:
            q.respawn()
        assert bad.value.so_far is None
        stats = q.stats()
        assert (stats.ready, stats.dead) == (1000, 500)
    finally:
        c.close()
        proxy.close()
