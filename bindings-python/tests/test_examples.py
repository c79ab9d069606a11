"""The examples (and so the README's quick starts) run as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest

from conftest import Resp

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


# The examples use the default prefix and plain queue names, like a user's first program. So
# that leftovers of other suites sharing this Redis cannot reach them, they run in a database
# of their own, emptied first.
EXAMPLES_DB = 13


def run_example(name: str, url: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    r = Resp(url)
    try:
        r.call("SELECT", EXAMPLES_DB)
        r.call("FLUSHDB")
    finally:
        r.close()
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env=dict(os.environ, REDIS_URL=urlunparse(urlparse(url)._replace(path=f"/{EXAMPLES_DB}"))),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_quickstart_async(url: str) -> None:
    r = run_example("quickstart_async.py", url)
    assert r.returncode == 0, r.stderr
    assert "got 'call Alice' headers={'user': 'alice'}" in r.stdout
    assert "got 'pay the invoice'" in r.stdout
    # The message due first arrives first.
    assert r.stdout.index("call Alice") < r.stdout.index("pay the invoice")


def test_quickstart_sync(url: str) -> None:
    r = run_example("quickstart_sync.py", url)
    assert r.returncode == 0, r.stderr
    assert "pulled b'{\"invoice\": 1042}' attempt 1" in r.stdout
    assert "handled b'{\"invoice\": 1043}'" in r.stdout


def test_errors_example(url: str) -> None:
    r = run_example("errors.py", url)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "connection: cannot connect" in out
    assert "invalid: at: naive datetime" in out
    assert "dead letter: payment-7 RuntimeError: card declined" in out
    assert "respawned: 1" in out and "cancelled: True" in out
    assert "error kind: NotFound" in out


@pytest.mark.parametrize("handler", ["send_email", "make_thumbnail"])
def test_worker_handlers_import(handler: str) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import worker_handlers

        assert callable(getattr(worker_handlers, handler))
    finally:
        sys.path.remove(str(EXAMPLES))
