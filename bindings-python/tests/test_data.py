"""Bodies, headers and times round-trip exactly."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from types import MappingProxyType

import pytest

import redelay

from conftest import run


def roundtrip(q: redelay.Queue, body: object) -> bytes:
    q.publish(body)  # type: ignore[arg-type]
    m = q.fetch(1, wait=2)[0]
    m.ack()
    return m.body


@pytest.mark.parametrize(
    "body,expected",
    [
        (b"", b""),
        (b"\xff\xfe\x00\x80 not utf-8 \xc3", b"\xff\xfe\x00\x80 not utf-8 \xc3"),
        (bytearray(b"\x00\x01"), b"\x00\x01"),
        (memoryview(b"abcdef")[1:4], b"bcd"),
        ("héllo ✓", "héllo ✓".encode()),
        ("", b""),
    ],
)
def test_bodies(client: redelay.Client, body: object, expected: bytes) -> None:
    got = roundtrip(client.queue("bodies"), body)
    assert type(got) is bytes
    assert got == expected


def test_one_mib_random_body(client: redelay.Client) -> None:
    body = os.urandom(1024 * 1024)
    assert roundtrip(client.queue("big"), body) == body


def test_one_mib_body_async(url: str, prefix: str) -> None:
    body = os.urandom(1024 * 1024)

    async def main() -> None:
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        q = c.queue("big-async")
        await q.publish(body)
        m = (await q.fetch(1, wait=2))[0]
        assert m.body == body
        await m.ack()

    run(main)


def test_headers_unicode(client: redelay.Client) -> None:
    q = client.queue("headers")
    h = {"trace-id": "abc", "ünï": "çødé ✓", "empty": ""}
    q.publish(b"x", headers=h)
    m = q.fetch(1, wait=2)[0]
    assert m.headers == h
    m.ack()
    q.publish(b"y", headers=MappingProxyType({"read": "only"}))
    m = q.fetch(1, wait=2)[0]
    assert m.headers == {"read": "only"}
    m.ack()


def test_times_are_aware_utc_and_consistent(client: redelay.Client) -> None:
    q = client.queue("times")
    before = datetime.now(timezone.utc)
    q.publish(b"x", delay=timedelta(milliseconds=200))
    m = q.fetch(1, wait=3)[0]
    m.ack()
    for t in (m.published_at, m.due_at, m.delivered_at):
        assert t.tzinfo is not None and t.utcoffset() == timedelta(0)
    assert timedelta(milliseconds=195) <= m.due_at - m.published_at <= timedelta(milliseconds=205)
    assert m.delivered_at >= m.due_at
    assert isinstance(m.lateness, timedelta)
    assert m.lateness == m.delivered_at - m.due_at
    assert m.lateness < timedelta(seconds=1)
    # Redis' clock is this machine's clock here.
    assert abs(m.published_at - before) < timedelta(seconds=2)


def test_at_with_any_time_zone(client: redelay.Client) -> None:
    q = client.queue("at")
    tz = timezone(timedelta(hours=-5, minutes=-30))
    at = datetime(2031, 5, 6, 7, 8, 9, 123000, tzinfo=tz)
    q.publish(b"x", id="at-1", at=at)
    info = q.peek("at-1")
    assert info is not None
    assert info.due_at == at
    assert info.due_at.tzinfo == timezone.utc
    new = q.reschedule("at-1", at=datetime(2032, 1, 1, tzinfo=timezone.utc))
    assert new == datetime(2032, 1, 1, tzinfo=timezone.utc)


def test_at_in_the_past_is_due_now(client: redelay.Client) -> None:
    q = client.queue("past")
    q.publish(b"x", at=datetime.now(timezone.utc) - timedelta(hours=1))
    assert len(q.fetch(1, wait=1)) == 1


def test_naive_datetime_is_refused(client: redelay.Client) -> None:
    q = client.queue("naive")
    with pytest.raises(redelay.InvalidArgumentError, match="naive"):
        q.publish(b"x", at=datetime(2031, 1, 1))
    with pytest.raises(redelay.InvalidArgumentError, match="naive"):
        q.publish_batch([{"body": b"x", "at": datetime.now()}])
    with pytest.raises(TypeError, match="datetime"):
        q.publish(b"x", at=1234567890)  # type: ignore[arg-type]
    with pytest.raises(redelay.InvalidArgumentError, match="delay/at: give one of them, not both"):
        q.publish(b"x", delay=1, at=datetime.now(timezone.utc))
    assert q.stats().total == 0


def test_delay_as_int_float_and_timedelta(client: redelay.Client) -> None:
    q = client.queue("delays")
    q.publish(b"a", id="a", delay=60)
    q.publish(b"b", id="b", delay=60.5)
    q.publish(b"c", id="c", delay=timedelta(minutes=1, microseconds=500000))
    a, b, c = (q.peek(i) for i in "abc")
    assert a and b and c
    assert b.due_at - b.published_at == timedelta(seconds=60.5)
    assert c.due_at - c.published_at == timedelta(seconds=60.5)
    assert a.due_at - a.published_at == timedelta(seconds=60)
    assert a.ttr == timedelta(seconds=30)


def test_stats_times(client: redelay.Client) -> None:
    q = client.queue("stats-times")
    s = q.stats()
    assert s.next_due is None and s.now.tzinfo is not None
    q.publish(b"x", delay=100)
    s = q.stats()
    assert s.next_due is not None and timedelta(seconds=99) < s.next_due - s.now <= timedelta(seconds=100)
