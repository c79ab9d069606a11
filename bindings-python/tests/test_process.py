"""Whole processes: the worker command stops gracefully on SIGTERM/SIGINT, and a program that
exits with a live subscription exits cleanly."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import redelay

HANDLERS = textwrap.dedent(
    """
    import asyncio, os, time

    def _log(line):
        with open(os.environ["OUT"], "a") as f:
            f.write(line + "\\n")

    async def handle(msg):
        _log("start " + msg.id)
        await asyncio.sleep(float(msg.headers.get("sleep", "0")))
        _log("done " + msg.id)

    def handle_sync(msg):
        _log("start " + msg.id)
        time.sleep(float(msg.headers.get("sleep", "0")))
        _log("done " + msg.id)

    def exiting(msg):
        raise SystemExit("stop the worker")
    """
)


def wait_for(cond, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def lines(p: Path) -> List[str]:
    return p.read_text().splitlines() if p.exists() else []


@contextlib.contextmanager
def running_worker(
    tmp_path: Path, url: str, prefix: str, target: str, queue: str, *extra: str
) -> Iterator[Tuple[subprocess.Popen[str], Path]]:
    """Starts ``python -m redelay worker TARGET`` on ``queue`` with the handlers of HANDLERS
    (their log: the returned path), waits until it says it is ready, and kills it if it still
    runs at the end."""
    (tmp_path / "handlers.py").write_text(HANDLERS)
    out = tmp_path / "out.txt"
    env = dict(os.environ, OUT=str(out), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "redelay", "worker", target, "--queue", queue, "--url", url, "--prefix", prefix]
    proc = subprocess.Popen(
        [*cmd, *extra], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert "redelay worker ready" in first, first + (proc.stderr.read() if proc.poll() is not None else "")
        yield proc, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("target,sig", [("handlers:handle", signal.SIGTERM), ("handlers:handle_sync", signal.SIGINT)])
def test_worker_drains_and_exits_0_on_signal(
    tmp_path: Path, url: str, prefix: str, client: redelay.Client, target: str, sig: int
) -> None:
    with running_worker(tmp_path, url, prefix, target, "work", "--concurrency", "4") as (proc, out):
        q = client.queue("work")
        q.publish_batch([{"body": b"quick", "id": f"quick-{i}"} for i in range(5)])
        q.publish(b"slow", id="slow-1", headers={"sleep": "1.0"})
        wait_for(lambda: "start slow-1" in lines(out))
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    got = lines(out)
    assert "done slow-1" in got  # the running handler was allowed to finish
    assert all(f"done quick-{i}" in got for i in range(5))
    assert "redelay worker stopped" in stdout
    s = client.queue("work").stats()
    assert s.total == 0, s  # everything acked, nothing left leased


def test_worker_rejects_a_bad_target(tmp_path: Path, url: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "redelay", "worker", "nocolon", "--queue", "q", "--url", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode != 0 and "module:function" in r.stderr


EXIT_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    import redelay

    url, prefix, mode = sys.argv[1:4]

    if mode in ("sync", "sync-unheld"):
        started = threading.Event()
        def h(msg):
            started.set()
            time.sleep(0.3)
        def start():
            c = redelay.Client(url, prefix=prefix)
            q = c.queue("exit")
            q.publish_batch([{"body": b"x", "max_attempts": 1}] * 6)
            return c, q.subscribe(h, concurrency=2, prefetch=2)
        c, sub = start()
        if mode == "sync-unheld":
            del c  # nothing holds the client any more; the subscription lives on
        assert started.wait(10)
    else:
        async def main():
            c = await redelay.AsyncClient.connect(url, prefix=prefix)
            q = c.queue("exit")
            started = threading.Event()
            async def ah(msg):
                started.set()
                await asyncio.sleep(0.3)
            def sh(msg):
                started.set()
                time.sleep(0.3)
            await q.publish_batch([{"body": b"x", "max_attempts": 1}] * 6)
            sub = await q.subscribe(ah if mode == "async" else sh, concurrency=2, prefetch=2)
            while not started.is_set():
                await asyncio.sleep(0.01)
            if mode == "loop-stopped":
                # Leave with the loop stopped but not closed: handler tasks never finish.
                asyncio.get_running_loop().stop()
        if mode == "loop-stopped":
            loop = asyncio.new_event_loop()
            loop.create_task(main())
            loop.run_forever()
        else:
            asyncio.run(main())
    print("leaving with a live subscription", flush=True)
    """
)


@pytest.mark.parametrize("mode", ["sync", "sync-unheld", "async", "async-sync-handler", "loop-stopped"])
def test_exit_with_a_live_subscription(
    tmp_path: Path, url: str, prefix: str, client: redelay.Client, mode: str
) -> None:
    script = tmp_path / "leave.py"
    script.write_text(EXIT_SCRIPT)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, str(script), url, prefix, mode], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert "leaving with a live subscription" in r.stdout
    assert "panicked" not in r.stderr and "Fatal" not in r.stderr, r.stderr
    assert elapsed < 30
    q = client.queue("exit")
    assert q.verify().ok
    if mode != "loop-stopped":  # there, handlers the stopped loop never finishes stay leased
        # Nothing left leased to wait out its lease, nothing failed: what did not finish was
        # handed back (with max_attempts=1 a counted attempt would have made a dead letter).
        s = q.stats()
        assert (s.leased, s.dead) == (0, 0), s
        assert all(m.attempts == 0 for m in q.list("ready").items)


INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import signal
    import sys
    import redelay

    # Python leaves SIGINT ignored when it starts ignored (a job put in the background by a
    # shell without job control): install the default handler, as an interactive run has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    url, prefix, what = sys.argv[1:4]
    q = redelay.Client(url, prefix=prefix).queue("ctrl-c")
    print("ready", flush=True)
    if what == "fetch":
        q.fetch(1, wait=60)
    else:
        with q.subscribe(lambda msg: None) as sub:
            sub.wait()
    """
)


@pytest.mark.parametrize("what", ["fetch", "wait"])
def test_ctrl_c_interrupts_a_blocking_call(tmp_path: Path, url: str, prefix: str, what: str) -> None:
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPT_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script), url, prefix, what], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        # The blocking call waits 60 s unless Ctrl-C interrupts it: 45 s is a hang, whatever
        # the machine's load (no tighter wall-clock bound).
        _, stderr = proc.communicate(timeout=45)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "KeyboardInterrupt" in stderr, stderr
    assert "panicked" not in stderr and "Fatal" not in stderr, stderr


def test_worker_exits_when_a_handler_stops_the_program(
    tmp_path: Path, url: str, prefix: str, client: redelay.Client
) -> None:
    """A plain ``def`` handler raising SystemExit closes the subscription (its message given
    back, no attempt counted): the worker then exits by itself, as it does on a signal."""
    with running_worker(tmp_path, url, prefix, "handlers:exiting", "exiting") as (proc, _):
        client.queue("exiting").publish(b"x", id="x")
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "redelay worker stopped" in stdout, stdout + stderr
    info = client.queue("exiting").peek("x")
    assert info is not None and (info.state, info.attempts) == ("ready", 0), info


def test_worker_consumes_a_sharded_queue(tmp_path: Path, url: str, prefix: str, client: redelay.Client) -> None:
    q = client.queue("sharded-work", shards=4)
    q.publish_batch([{"body": b"m", "id": f"s-{i}"} for i in range(8)])
    with running_worker(tmp_path, url, prefix, "handlers:handle", "sharded-work") as (proc, out):
        wait_for(lambda: all(f"done s-{i}" in lines(out) for i in range(8)))
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    assert q.stats().total == 0  # every shard's messages handled and acked


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["nosuchmodule:handle"], 1, "redelay worker: cannot import 'nosuchmodule' for nosuchmodule:handle: No module"),
        (["handlers:nosuch"], 1, "redelay worker: handlers has no 'nosuch' (for handlers:nosuch)"),
        (["handlers:handle.x"], 1, "redelay worker: handlers.handle has no 'x' (for handlers:handle.x)"),
        (["handlers:handle", "--log-level", "LOUD"], 2, "--log-level: invalid choice: 'LOUD'"),
        (["handlers:handle", "--ttr", "0.01"], 1, "redelay worker: --ttr: must be"),
        (["handlers:handle", "--concurrency", "0"], 1, "redelay worker: --concurrency: must be"),
    ],
)
def test_worker_names_what_is_wrong_without_a_traceback(
    tmp_path: Path, url: str, args: List[str], code: int, said: str
) -> None:
    (tmp_path / "handlers.py").write_text(HANDLERS)
    r = subprocess.run(
        [sys.executable, "-m", "redelay", "worker", *args, "--queue", "q", "--url", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (r.returncode, "Traceback" in r.stderr) == (code, False), r.stderr
    assert said in r.stderr, r.stderr


def test_worker_reports_a_bad_queue_name_and_exits_1(tmp_path: Path, url: str) -> None:
    (tmp_path / "handlers.py").write_text(HANDLERS)
    r = subprocess.run(
        [sys.executable, "-m", "redelay", "worker", "handlers:handle", "--queue", "bad name", "--url", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 1
    assert "redelay worker: queue name" in r.stderr
