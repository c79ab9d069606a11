"""Processes that fork, and Ctrl-C as a blocking fetch returns: each scenario runs in a
process of its own (a hang or a crash there fails the test, it never takes pytest with it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

import redelay

FORK_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, multiprocessing, os, queue, select, sys
    import redelay

    url, prefix, mode = sys.argv[1:4]

    def report(**kv):
        print(json.dumps(kv), flush=True)

    def error(e):
        return {"type": type(e).__name__, "connection": isinstance(e, redelay.ConnectionError), "text": str(e)}

    def new_client_works(tag):
        # A client made in this process: publish, fetch, ack.
        c = redelay.Client(url, prefix=prefix)
        q = c.queue("child-" + tag)
        q.publish(b"from " + tag.encode(), id=tag)
        got = q.fetch(1, wait=10)
        for m in got:
            m.ack()
        return c, [(m.id, m.body.decode()) for m in got]

    async def new_async_client_works():
        c = await redelay.AsyncClient.connect(url, prefix=prefix)
        q = c.queue("child-async")
        await q.publish(b"from async", id="async")
        got = await q.fetch(1, wait=10)
        for m in got:
            await m.ack()
        await c.close()
        return [(m.id, m.body.decode()) for m in got]

    def refusals(calls):
        out = {}
        for name, call in calls:
            try:
                call()
                out[name] = None
            except Exception as e:
                out[name] = error(e)
        return out

    def in_child():
        # What the forked child does; its result goes to the parent as JSON.
        if mode == "new":
            return {"got": new_client_works("new")[1]}
        if mode == "new-async":
            return {"got": asyncio.run(new_async_client_works())}
        if mode == "inherited":
            out = refusals([
                ("stats", lambda: q.stats()),
                ("publish", lambda: q.publish(b"x")),
                ("fetch", lambda: q.fetch(1)),
                ("client_fetch", lambda: c.fetch("work", 1)),
                ("ping", lambda: c.ping()),
                ("queue", lambda: c.queue("other")),
                ("subscribe", lambda: q.subscribe(lambda m: None)),
                ("ack", lambda: held.ack()),
                ("sub_close", lambda: sub.close()),
                ("sub_closed", lambda: sub.closed),
                ("close", lambda: c.close()),
            ])
            # A client made in the child works all the same.
            return {"refused": out, "got": new_client_works("after")[1]}
        if mode == "nested":
            # The child's own client, then a grandchild: the same rules one level down.
            c2, got = new_client_works("nested")
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                try:
                    res = {"refused": refusals([("ping", lambda: c2.ping())]), "got": new_client_works("grand")[1]}
                except BaseException as e:
                    res = {"error": error(e)}
                os.write(w, json.dumps(res).encode())
                os._exit(0)
            os.close(w)
            grand = read_result(r, pid)
            c2.ping()  # the child's client still works after its own child
            return {"got": got, "grand": grand}
        raise AssertionError(mode)

    def read_result(r, pid):
        # The child's JSON, or "hung" (the child killed) when nothing comes in 30 s.
        data = b""
        while True:
            ready, _, _ = select.select([r], [], [], 30)
            if not ready:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return "hung"
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        _, status = os.waitpid(pid, 0)
        return {"status": status, "result": json.loads(data) if data else None}

    c = redelay.Client(url, prefix=prefix)
    q = c.queue("work")
    q.publish(b"before", id="before", ttr=600)
    held = q.fetch(1)[0]  # a message leased before the fork
    seen = queue.Queue()
    sub = c.queue("sub").subscribe(lambda m: seen.put(m.id))
    c.queue("sub").publish(b"s", id="s1")
    assert seen.get(timeout=20) == "s1"  # the subscription is running
    report(step="parent ready", pid=os.getpid())

    if mode == "mp-new":
        # multiprocessing's "fork" start method, as gunicorn or celery prefork use it.
        def target(conn):
            try:
                conn.send({"got": new_client_works("mp")[1]})
            except BaseException as e:
                conn.send({"error": error(e)})
        parent_end, child_end = multiprocessing.get_context("fork").Pipe()
        p = multiprocessing.get_context("fork").Process(target=target, args=(child_end,))
        p.start()
        if parent_end.poll(30):
            report(step="child", child={"result": parent_end.recv()})
        else:
            report(step="child", child="hung")
            p.kill()
        p.join(30)
        report(step="child exit", exitcode=p.exitcode)
    else:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                res = in_child()
            except BaseException as e:
                res = {"error": error(e)}
            os.write(w, json.dumps(res).encode())
            if mode == "new":
                sys.exit(0)  # a normal exit: atexit hooks, finalization of the inherited objects
            os._exit(0)
        os.close(w)
        report(step="child", child=read_result(r, pid))

    # The parent carries on: its client, its queue, its running subscription.
    report(step="stats", total=q.stats().total)
    q.publish(b"after", id="after")
    report(step="fetch", got=sorted(m.id for m in q.fetch(2, wait=10)))
    c.queue("sub").publish(b"s", id="s2")
    report(step="subscription", got=seen.get(timeout=20))
    held.ack()
    sub.close()
    c.close()
    report(step="done")
    """
)


def run_script(tmp_path: Path, script: str, *args: str, timeout: float = 120, ok: bool = True) -> List[Dict[str, Any]]:
    """Runs ``script`` in a session of its own with ``args``; its JSON lines. A run still going
    after ``timeout`` is a hang: every process of the session is killed and the test fails.
    ``ok``: the script must exit with status 0."""
    path = tmp_path / "script.py"
    path.write_text(script)
    proc = subprocess.Popen(
        [sys.executable, str(path), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"hung for {timeout} s; output so far:\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0 or not ok, f"exit status {proc.returncode}\n{out}\n{err}"
    assert "panicked" not in err and "Fatal" not in err, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def steps(lines: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {line["step"]: line for line in lines}


def assert_parent_unharmed(s: Dict[str, Dict[str, Any]]) -> None:
    assert s["stats"]["total"] >= 1
    assert s["fetch"]["got"] == ["after"]  # "before" is still leased by the parent
    assert s["subscription"]["got"] == "s2"
    assert "done" in s


def child_result(s: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    child = s["child"]["child"]
    assert child != "hung", "the forked child hung"
    assert child.get("status", 0) == 0, child  # os.fork: its exit status (waitpid)
    result: Dict[str, Any] = child["result"]
    assert "error" not in result, result
    return result


@pytest.mark.parametrize("mode", ["new", "new-async", "mp-new"])
def test_a_forked_child_uses_a_new_client(tmp_path: Path, url: str, prefix: str, mode: str) -> None:
    s = steps(run_script(tmp_path, FORK_SCRIPT, url, prefix, mode))
    tag = {"new": "new", "new-async": "async", "mp-new": "mp"}[mode]
    assert child_result(s)["got"] == [[tag, "from " + ("async" if mode == "new-async" else tag)]]
    if mode == "mp-new":
        assert s["child exit"]["exitcode"] == 0
    assert_parent_unharmed(s)


def test_a_forked_child_refuses_what_it_inherited(tmp_path: Path, url: str, prefix: str) -> None:
    s = steps(run_script(tmp_path, FORK_SCRIPT, url, prefix, "inherited"))
    result = child_result(s)
    parent = s["parent ready"]["pid"]
    for name, e in result["refused"].items():
        assert e is not None, f"{name}: no error in the forked child"
        assert e["connection"], (name, e)
        assert f"in process {parent} before a fork; create a new client in this process" in e["text"], (name, e)
    assert "this client was created in process" in result["refused"]["ping"]["text"]
    assert "this message was delivered in process" in result["refused"]["ack"]["text"]
    assert "this subscription was started in process" in result["refused"]["sub_close"]["text"]
    assert result["got"] == [["after", "from after"]]
    assert_parent_unharmed(s)


def test_a_grandchild_refuses_its_parents_client(tmp_path: Path, url: str, prefix: str) -> None:
    s = steps(run_script(tmp_path, FORK_SCRIPT, url, prefix, "nested"))
    result = child_result(s)
    assert result["got"] == [["nested", "from nested"]]
    grand = result["grand"]
    assert grand != "hung", "the grandchild hung"
    assert grand["result"]["got"] == [["grand", "from grand"]]
    assert grand["result"]["refused"]["ping"]["connection"]
    assert_parent_unharmed(s)


INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    import redelay

    signal.signal(signal.SIGINT, signal.default_int_handler)
    url, prefix = sys.argv[1:3]
    c = redelay.Client(url, prefix=prefix)
    DUE = 0.35
    # Ctrl-C from shortly before the message is due to just before: some land after the last
    # signal check of the waiting fetch (every 100 ms), as the fetch leases the message.
    offsets = [0.25, 0.28] + [0.3 + 0.005 * k for k in range(10)]
    for i, off in enumerate(offsets):
        name = f"ctrl-c-{i}"
        q = c.queue(name)
        q.publish(b"x", id="m", delay=DUE, ttr=60)
        timer = threading.Timer(off, os.kill, (os.getpid(), signal.SIGINT))
        got, interrupted = None, False
        try:
            timer.start()
            # Both blocking calls that lease: Queue.fetch and Client.fetch.
            got = q.fetch(1, wait=10) if i % 2 == 0 else c.fetch([name], 1, wait=10)
            timer.join()
            time.sleep(1)  # a signal sent after the fetch returned is raised here
        except KeyboardInterrupt:
            interrupted = True
        timer.join()
        line = {"offset": off, "interrupted": interrupted, "returned": got is not None}
        if got is None:
            # Interrupted: the message is due now (never leased, or given back), not leased to
            # nobody for its ttr of 60 s; and no attempt was counted.
            again = q.fetch(1, wait=5)
            line["again"] = [(m.id, m.attempt) for m in again]
            got = again
        for m in got:
            m.ack()
        print(json.dumps(line), flush=True)
    """
)


def test_ctrl_c_as_a_fetch_returns_leaves_nothing_leased(tmp_path: Path, url: str, prefix: str) -> None:
    lines = run_script(tmp_path, INTERRUPT_SCRIPT, url, prefix)
    assert len(lines) == 12, lines
    interrupted = [line for line in lines if not line["returned"]]
    assert interrupted, lines  # Ctrl-C before the message was due interrupts the fetch
    stuck = [line for line in interrupted if line["again"] != [["m", 1]]]
    assert not stuck, f"{len(stuck)} of {len(lines)} left leased to nobody after KeyboardInterrupt: {stuck}"


EXIT_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import redelay

    signal.signal(signal.SIGINT, signal.default_int_handler)
    url, prefix, name, off = sys.argv[1:5]
    q = redelay.Client(url, prefix=prefix).queue(name)
    q.publish(b"x", id="m", delay=0.35, ttr=60)
    threading.Timer(float(off), os.kill, (os.getpid(), signal.SIGINT)).start()
    for m in q.fetch(1, wait=10):
        m.ack()  # the signal came after the fetch returned
    time.sleep(10)  # the KeyboardInterrupt ends the program, here at the latest
    """
)


def test_ctrl_c_that_ends_the_program_as_a_fetch_returns_leaves_nothing_leased(
    tmp_path: Path, url: str, prefix: str, client: redelay.Client
) -> None:
    # As the previous test, but the KeyboardInterrupt ends the program, as Ctrl-C usually does.
    offsets = [0.3 + 0.01 * k for k in range(5)]
    for i, off in enumerate(offsets):
        run_script(tmp_path, EXIT_SCRIPT, url, prefix, f"exit-{i}", str(off), ok=False)
    stats = [client.queue(f"exit-{i}").stats() for i in range(len(offsets))]
    stuck = [(off, s) for off, s in zip(offsets, stats) if s.leased]
    assert not stuck, f"{len(stuck)} of {len(offsets)} left leased to nobody at exit: {stuck}"
