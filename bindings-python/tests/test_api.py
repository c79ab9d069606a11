"""The package's surface: docstrings, typing marker, exports, manual settling from a plain
def handler."""

from __future__ import annotations

import inspect
import os
import pydoc
import threading
import time

import redelay


def public_members(obj: object) -> list[tuple[str, object]]:
    out = []
    for name, member in inspect.getmembers(obj):
        if name.startswith("_"):
            continue
        out.append((name, member))
    return out


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in redelay.__all__:
        if name in ("__version__", "Body", "Seconds", "Queues", "AsyncHandler", "SyncHandler"):
            continue  # plain values and type aliases
        obj = getattr(redelay, name)
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for mname, member in public_members(obj):
                if not (getattr(member, "__doc__", None) or "").strip():
                    missing.append(f"{name}.{mname}")
    assert missing == []


def test_help_shows_every_public_method_with_its_parameters() -> None:
    # help() and inspect.signature read each method's parameters, on both APIs' classes (the
    # calls written once for both are op descriptors, which must read as the functions they wrap).
    for cls in (redelay.Client, redelay.AsyncClient, redelay.Queue, redelay.AsyncQueue):
        page = pydoc.plain(pydoc.render_doc(cls))
        methods = [(n, m) for n, m in public_members(cls) if inspect.isroutine(m) or inspect.ismethoddescriptor(m)]
        assert len(methods) >= 3, cls
        for name, member in methods:
            inspect.signature(member)  # raises when it has none
            assert f"{name}(" in page, f"help({cls.__name__}) shows no signature of {name}"
    page = pydoc.plain(pydoc.render_doc(redelay.AsyncQueue))
    assert "ack(self, id: 'str', token: 'str') -> 'None'" in page
    assert list(inspect.signature(redelay.Queue.reschedule).parameters)[:2] == ["self", "id"]


def test_a_method_called_through_its_class_is_the_same_call(client: redelay.Client) -> None:
    q = client.queue("through-class")
    published = redelay.Queue.publish(q, b"x", delay=60)
    peeked = redelay.Queue.peek(q, published.id)
    assert peeked is not None and peeked.id == published.id
    assert redelay.Client.queues(client) == client.queues()


def test_typed_package() -> None:
    here = os.path.dirname(redelay.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    assert os.path.exists(os.path.join(here, "_native.pyi"))


def test_message_classes() -> None:
    assert issubclass(redelay.Message, redelay.BaseMessage)
    assert issubclass(redelay.SyncMessage, redelay.BaseMessage)


def test_manual_settle_from_a_plain_def_handler(client: redelay.Client) -> None:
    q = client.queue("manual-sync")
    out: list[str] = []
    done = threading.Event()

    def handler(msg: redelay.SyncMessage) -> None:
        msg.extend(10)
        msg.ack()
        out.append(msg.id)
        done.set()

    q.publish(b"x", id="ms-1")
    with q.subscribe(handler) as sub:
        assert done.wait(10)
    assert out == ["ms-1"]
    c = sub.counters()
    assert c.acked == 0 and c.nacked == 0  # settled by the handler itself
    assert (c.delivered, c.handled) == (1, 1)
    assert q.stats().total == 0


def test_repr(client: redelay.Client) -> None:
    q = client.queue("repr")
    assert "repr" in repr(q) and "Client" in repr(client)
    q.publish(b"abc", id="r-1")
    m = q.fetch(1, wait=1)[0]
    assert 'id="r-1"' in repr(m) and "SyncMessage" in repr(m)
    m.ack()
    time.sleep(0)
