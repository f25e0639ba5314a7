"""``coordinator/server/early.py``: the listener bound before trio is imported; the server
takes the sockets over (tests/e2e/test_cli.py serves a connection opened at the listening
line). Real sockets, no trio."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from coordinator.server.early import bind_listeners


def test_bind_listeners_refuses_a_busy_port() -> None:
    sockets = bind_listeners(0, "127.0.0.1")
    try:
        with pytest.raises(OSError):
            bind_listeners(sockets[0].getsockname()[1], "127.0.0.1")
    finally:
        sockets[0].close()


def test_a_connection_waits_in_the_backlog_with_what_it_sent() -> None:
    sockets = bind_listeners(0, "127.0.0.1")
    try:
        with socket.create_connection(sockets[0].getsockname()[:2], timeout=10) as client:
            client.sendall(b"\x00\x00\x00\x01x")
            accepted, _ = sockets[0].accept()  # what the server does once it is up
            with accepted:
                assert accepted.recv(5) == b"\x00\x00\x00\x01x"
    finally:
        sockets[0].close()


def test_binding_loads_neither_trio_nor_the_codecs() -> None:
    code = (
        "import sys\n"
        "from coordinator.server.early import bind_listeners, probe_lock\n"
        "bind_listeners(0, '127.0.0.1')\n"
        "print(sorted(m for m in ('trio', 'construct', 'coordinator.broker') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
