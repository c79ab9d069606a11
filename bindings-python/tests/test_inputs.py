"""Python values as the binding converts them to the core's wire form: what JSON would change
silently (a header name that is no str, a lone surrogate) or has no form for (NaN, bytes) is
refused naming its field, and nothing is written."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, Callable, List, Tuple

import pytest

import redelay

SURROGATE = "contains a lone surrogate (not valid Unicode), so it would be stored altered"

Call = Callable[[redelay.Queue], Any]


def refused(q: redelay.Queue, call: Call) -> redelay.InvalidArgumentError:
    """The InvalidArgumentError of ``call(q)``, checked for a position in the JSON text (there is
    none to give: the field is named) and for nothing written."""
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        call(q)
    assert " line " not in str(ei.value) and " column " not in str(ei.value), ei.value
    assert q.stats().total == 0
    return ei.value


def cases(*rows: Any) -> Any:
    """Parameters named by their first item (the field the refusal names)."""
    return [pytest.param(*r, id=str(r[0])) for r in rows]


@pytest.mark.parametrize(
    ("name", "shown"),
    cases((1, "int 1"), (None, "NoneType None"), (1.5, "float 1.5"), (True, "bool True"), ((1, 2), "tuple (1, 2)")),
)
def test_header_names_must_be_str(client: redelay.Client, name: Any, shown: str) -> None:
    q = client.queue("header-names")
    e = refused(q, lambda q: q.publish(b"x", headers={name: "v"}))
    assert str(e) == f"headers: names must be str, got {shown}"
    assert isinstance(e, TypeError), "a wrong type, as a header value of the wrong type is"
    e = refused(q, lambda q: q.publish_batch([b"ok", {"body": b"x", "headers": {"a": "b", name: "v"}}]))
    assert str(e) == f"message 1: headers: names must be str, got {shown}" and isinstance(e, TypeError)


def test_header_names_that_json_would_merge_are_refused(client: redelay.Client) -> None:
    q = client.queue("header-merge")
    e = refused(q, lambda q: q.publish(b"x", headers={1: "a", "1": "b"}))  # type: ignore[dict-item]
    assert str(e) == "headers: names must be str, got int 1"
    q.publish(b"x", id="ok", headers={"1": "b", "ü": "😀"})
    info = q.peek("ok")
    assert info is not None and info.headers == {"1": "b", "ü": "😀"}


@pytest.mark.parametrize(
    "messages",
    ["hello", b"hello", bytearray(b"hi"), memoryview(b"hi"), {"body": b"x", "delay": 60}],
    ids=lambda m: type(m).__name__,
)
def test_publish_batch_refuses_a_single_body(client: redelay.Client, messages: Any) -> None:
    q = client.queue("batch-single")
    with pytest.raises(TypeError) as ei:
        q.publish_batch(messages)  # once one message per character (or byte: a TypeError of message 0)
    assert str(ei.value) == f"messages: expected a list of messages, got {type(messages).__name__}"
    assert q.stats().total == 0
    assert len(q.publish_batch(["hello"])) == 1  # a list of one str is one message
    bodies: List[redelay.Body] = [b"a", "b"]
    assert len(q.publish_batch(b for b in bodies)) == 2  # and any iterable of messages is taken


def test_a_batch_error_names_the_message_and_keeps_its_kind(client: redelay.Client) -> None:
    q = client.queue("batch-kind")
    # A str body with no UTF-8 form: once a bare UnicodeEncodeError, whose class cannot be made
    # from a message alone (naming the message then failed: "takes exactly 5 arguments").
    e = refused(q, lambda q: q.publish_batch([b"ok", "a\ud800"]))
    assert str(e) == f"message 1: body: {SURROGATE}" and isinstance(e, ValueError)

    # An exception of any class from a value's own conversion keeps its kind.
    class Odd(ValueError):
        def __init__(self, what: str, where: int) -> None:
            super().__init__(f"{what} at {where}")

    class OddType(TypeError):
        def __init__(self, what: str, where: int) -> None:
            super().__init__(f"{what} at {where}")

    class Span(timedelta):
        error: Exception

        def total_seconds(self) -> float:
            raise self.error

    bad = Span(seconds=1)
    bad.error = Odd("odd", 3)
    e = refused(q, lambda q: q.publish_batch([b"ok", {"body": b"x", "delay": bad}]))
    assert str(e) == "message 1: Odd: odd at 3" and isinstance(e, ValueError) and e.__cause__ is bad.error
    bad.error = OddType("odd", 4)
    e = refused(q, lambda q: q.publish_batch([b"ok", b"ok", {"body": b"x", "ttr": bad}]))
    assert str(e) == "message 2: OddType: odd at 4" and isinstance(e, TypeError) and e.__cause__ is bad.error


@pytest.mark.parametrize(
    ("field", "call"),
    cases(
        ("id", lambda q: q.publish(b"x", id="a\ud800")),
        ("headers", lambda q: q.publish(b"x", headers={"\udc80": "v"})),
        ("headers.a", lambda q: q.publish(b"x", headers={"a": "v\udc80"})),
        ("body", lambda q: q.publish("a\ud800")),
        ("message 1: id", lambda q: q.publish_batch([b"ok", {"body": b"x", "id": "\ud800"}])),
        ("message 0: headers.a", lambda q: q.publish_batch([{"body": b"x", "headers": {"a": "\ud800"}}])),
        ("id", lambda q: q.peek("\ud800")),
        ("id", lambda q: q.cancel("x\udfff")),
        ("id", lambda q: q.reschedule("\ud800", delay=1)),
        ("token", lambda q: q.ack("id", "\ud800")),
        ("reason", lambda q: q.nack("id", "token", reason="\ud800")),
        ("ids[1]", lambda q: q.respawn(["a", "\ud800"])),
        ("ids[0]", lambda q: q.bulk("cancel", ["\ud800"])),
        ("search.id_prefix", lambda q: q.search(id_prefix="\ud800")),
        ("search.header[1]", lambda q: q.search(header=("a", "\ud800"))),
        ("search.error", lambda q: q.bulk("purge", error="\ud800")),
        ("body", lambda q: q.search(body="\ud800")),
        ("cursor", lambda q: q.search(id_prefix="a", cursor="\ud800")),
    ),
)
def test_lone_surrogates_are_refused_naming_the_field(client: redelay.Client, field: str, call: Call) -> None:
    q = client.queue("surrogates")
    assert str(refused(q, call)) == f"{field}: {SURROGATE}"


def test_queue_names_with_a_lone_surrogate_are_refused_naming_them(client: redelay.Client) -> None:
    named = rf"^queues: {re.escape(SURROGATE)}$"
    for queues in ("a\ud800", ["ok", "a\ud800"]):
        with pytest.raises(redelay.InvalidArgumentError, match=named):
            client.fetch(queues)
        with pytest.raises(redelay.InvalidArgumentError, match=named):
            client.subscribe(queues, lambda m: None)
    with pytest.raises(redelay.InvalidArgumentError, match=named):
        client.subscribe({"ok": 1, "a\ud800": 2}, lambda m: None)


def test_a_queue_handle_and_a_connection_check_their_arguments(client: redelay.Client, url: str) -> None:
    with pytest.raises(redelay.InvalidArgumentError, match=rf"^queue name: {re.escape(SURROGATE)}$"):
        client.queue("a\ud800")
    with pytest.raises(redelay.InvalidArgumentError, match=r"^shards: must be a finite number, got nan$"):
        client.queue("q", shards=float("nan"))  # type: ignore[arg-type]
    with pytest.raises(redelay.InvalidArgumentError, match=rf"^url: {re.escape(SURROGATE)}$"):
        redelay.Client(url + "\ud800")


def test_a_delivery_takes_seconds_as_delay_does(client: redelay.Client) -> None:
    """``msg.nack(retry_in=)``, ``msg.extend()`` and ``close(timeout=)`` refuse a bool or a str
    (``True`` read as 1 s before) as ``delay=True`` is refused."""
    q = client.queue("secs")
    q.publish(b"x", id="m")
    (m,) = q.fetch(1, wait=5)
    sub = client.queue("secs-idle").subscribe(lambda m: None)
    calls: List[Tuple[Callable[[], Any], str, str]] = [
        (lambda: m.nack(retry_in=True), "retry_in", "bool"),
        (lambda: m.extend("5"), "ttr", "str"),  # type: ignore[arg-type]
        (lambda: sub.close(timeout=True), "timeout", "bool"),
    ]
    for call, field, got in calls:
        with pytest.raises(TypeError, match=rf"^{field}: expected seconds \(int or float\) or a timedelta, got {got}$"):
            call()
    m.extend(timedelta(seconds=30))
    m.ack()
    sub.close(timeout=5)


def test_surrogate_pairs_are_well_formed(client: redelay.Client) -> None:
    q = client.queue("pairs")
    q.publish("😀 body", id="é😀", headers={"😀": "𝄞"})
    info = q.peek("é😀")
    assert info is not None and info.body == "😀 body".encode() and info.headers == {"😀": "𝄞"}


@pytest.mark.parametrize(
    ("field", "shown", "call"),
    cases(
        ("max_attempts", "nan", lambda q: q.publish(b"x", max_attempts=float("nan"))),
        ("max_attempts", "inf", lambda q: q.publish(b"x", max_attempts=float("inf"))),
        ("message 1: max_attempts", "-inf", lambda q: q.publish_batch([b"ok", {"body": b"x", "max_attempts": -1e999}])),
        ("max", "nan", lambda q: q.fetch(float("nan"))),
        ("limit", "inf", lambda q: q.dead_letters(float("inf"))),
        ("oldest", "nan", lambda q: q.respawn(oldest=float("nan"))),
        ("offset", "nan", lambda q: q.list("dead", offset=float("nan"))),
        ("buckets", "inf", lambda q: q.upcoming(60, float("inf"))),
    ),
)
def test_non_finite_numbers_are_refused_naming_the_field(
    client: redelay.Client, field: str, shown: str, call: Call
) -> None:
    q = client.queue("non-finite")
    assert str(refused(q, call)) == f"{field}: must be a finite number, got {shown}"


@pytest.mark.parametrize(
    ("field", "call"),
    cases(
        ("id", lambda q: q.publish(b"x", id=b"abc")),
        ("headers.a", lambda q: q.publish(b"x", headers={"a": b"v"})),
        ("message 1: id", lambda q: q.publish_batch([b"ok", {"body": b"x", "id": bytearray(b"i")}])),
        ("id", lambda q: q.cancel(b"x")),
        ("token", lambda q: q.release("id", memoryview(b"t"))),
    ),
)
def test_bytes_where_a_str_is_expected_are_refused_naming_the_field(
    client: redelay.Client, field: str, call: Call
) -> None:
    q = client.queue("bytes-for-str")
    e = refused(q, call)
    assert re.match(rf"^{re.escape(field)}: invalid type: (bytes|bytearray|memoryview), expected a str$", str(e)), e
    assert isinstance(e, TypeError), "a wrong type, as the core's own type errors are"


def test_an_argument_json_has_no_form_for_is_refused_naming_it(client: redelay.Client) -> None:
    q = client.queue("no-json")
    e = refused(q, lambda q: q.publish(b"x", headers={"a": {"b": object()}}))  # type: ignore[dict-item]
    assert str(e) == "headers.a.b: invalid type: object" and isinstance(e, TypeError)
    e = refused(q, lambda q: q.respawn([{"a"}]))  # type: ignore[list-item]
    assert str(e) == "ids[0]: invalid type: set" and isinstance(e, TypeError)


def test_retry_later_takes_seconds_as_delay_does(client: redelay.Client) -> None:
    for wrong in (True, "5", None):
        with pytest.raises(TypeError) as ei:
            redelay.RetryLater(wrong)  # type: ignore[arg-type]
        assert str(ei.value) == f"retry_in: expected seconds (int or float) or a timedelta, got {type(wrong).__name__}"
    with pytest.raises(TypeError, match=r"^delay: expected seconds \(int or float\) or a timedelta, got bool$"):
        client.queue("retry-later").publish(b"x", delay=True)  # the same refusal
    assert redelay.RetryLater(5).retry_in == 5.0 and redelay.RetryLater(1.5).retry_in == 1.5
    assert redelay.RetryLater(timedelta(minutes=1)).retry_in == 60.0


@pytest.mark.parametrize(
    ("call", "field"), [(lambda c: c.queue(None), "queue name"), (lambda c: c.queue(b"q"), "queue name")]
)
def test_a_queue_name_of_another_type_is_refused_naming_it(client: redelay.Client, call: Any, field: str) -> None:
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        call(client)
    assert str(ei.value).startswith(f"{field}: invalid type: "), ei.value
    assert isinstance(ei.value, TypeError)
    with pytest.raises(redelay.InvalidArgumentError, match=r"^url: invalid type: NoneType, expected a str$"):
        redelay.Client(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reason", "words"),
    cases(
        (5, "reason: invalid type: int, expected a str"),
        (b"x", "reason: invalid type: bytes, expected a str"),
        ("a\ud800", f"reason: {SURROGATE}"),
    ),
)
def test_a_message_nack_reason_is_checked_naming_it(client: redelay.Client, reason: Any, words: str) -> None:
    q = client.queue("nack-reason")
    q.publish(b"x", id="r")
    [m] = q.fetch(1)
    with pytest.raises(redelay.InvalidArgumentError) as ei:
        m.nack(reason=reason)
    assert str(ei.value) == words
    assert q.peek("r").state == "leased", "nothing was sent"  # type: ignore[union-attr]
    m.nack(reason="fine")
    info = q.peek("r")
    assert info is not None and info.last_error == "fine"


def test_invalid_argument_errors_pickle_as_they_are() -> None:
    import pickle

    wrong = redelay._errors.from_core("InvalidArgument", "id: invalid type: bytes, expected a str")
    e = pickle.loads(pickle.dumps(wrong))
    assert type(e) is type(wrong) and isinstance(e, TypeError) and isinstance(e, redelay.InvalidArgumentError)
    assert str(e) == str(wrong)
    run = redelay._errors.from_core("Connection", "redis connection: reset", [("count", 3)])
    e = pickle.loads(pickle.dumps(run))
    assert type(e) is redelay.ConnectionError and e.so_far == {"count": 3} and str(e) == str(run)


def test_upcoming_spans_past_the_longest_delay_are_refused(client: redelay.Client) -> None:
    q = client.queue("upcoming-far")
    with pytest.raises(redelay.InvalidArgumentError, match=r"^width: the 1000 spans must end within 3650 days"):
        q.upcoming(timedelta(days=3650), 1000)
    assert len(q.upcoming(timedelta(days=3), 1000)) == 1000
