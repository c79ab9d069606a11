"""Shared fixtures: the real Redis from tests/with-redis.sh (REDIS_URL), a unique prefix per
test, and a tiny RESP client to poke Redis directly (no redis-py needed)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import uuid
from typing import Any, Awaitable, Callable, Iterator, Optional, TypeVar
from urllib.parse import urlparse

import pytest

import redelay

T = TypeVar("T")


def pytest_report_header(config: Any) -> str:
    return f"redelay imported from {os.path.dirname(redelay.__file__)}"


def pytest_configure(config: Any) -> None:
    if os.environ.get("REDELAY_TEST_INSTALLED") == "1":
        # CI runs the suite against the installed wheel, never the source tree.
        here = os.path.dirname(os.path.abspath(__file__))
        source = os.path.realpath(os.path.join(here, "..", "python"))
        where = os.path.realpath(redelay.__file__)
        if where.startswith(source + os.sep):
            raise pytest.UsageError(f"redelay was imported from the source tree ({where}), not the installed wheel")


@pytest.fixture(scope="session")
def url() -> str:
    u = os.environ.get("REDIS_URL")
    if not u:
        raise RuntimeError("REDIS_URL is not set: run the tests under tests/with-redis.sh")
    return u


@pytest.fixture
def prefix() -> str:
    return "pytest-" + uuid.uuid4().hex[:12]


@pytest.fixture
def client(url: str, prefix: str) -> Iterator[redelay.Client]:
    c = redelay.Client(url, prefix=prefix)
    yield c
    c.close()


def run(coro_fn: Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
    """Runs an async test body in a fresh event loop, with a timeout."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro_fn(), timeout)

    return asyncio.run(bounded())


class Resp:
    """A minimal blocking RESP2 client for setting up or inspecting Redis in tests."""

    def __init__(self, url: str) -> None:
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 6379), timeout=10)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def send(self, *args: Any) -> None:
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(parts))

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def read(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError(f"unexpected reply {line!r}")

    def call(self, *args: Any) -> Any:
        self.send(*args)
        return self.read()


@pytest.fixture
def resp(url: str) -> Iterator[Resp]:
    r = Resp(url)
    yield r
    r.close()


PYTHON = sys.executable


class FaultProxy:
    """A TCP proxy in front of the Redis at ``url`` (core/tests/common's FaultProxy, for the
    binding's tests): :meth:`drop_next_request_with` makes the next request holding a pattern
    never reach Redis, its connection dropped, so that a long run fails in the middle."""

    def __init__(self, url: str) -> None:
        u = urlparse(url)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 6379)
        self.listener = socket.create_server(("127.0.0.1", 0))
        port = self.listener.getsockname()[1]
        self.url = u._replace(netloc=f"127.0.0.1:{port}").geturl()
        self.cut: Optional[bytes] = None
        self.dropped = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def drop_next_request_with(self, pattern: bytes) -> None:
        with self.lock:
            self.cut = pattern

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(conn, up, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, conn, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, requests: bool) -> None:
        tail = b""
        try:
            while chunk := src.recv(65536):
                if requests:
                    with self.lock:
                        # A pattern split between two reads is found too; the part of the
                        # request already sent is never a whole command, so Redis runs none.
                        hit = self.cut is not None and self.cut in tail + chunk
                        if hit:
                            self.cut, self.dropped = None, self.dropped + 1
                    if hit:
                        break
                    tail = chunk[-64:]
                dst.sendall(chunk)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
