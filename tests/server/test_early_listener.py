"""``coordinator/server/early.py``: the listener bound and answering ApiVersions before trio
is imported, then handing its connections over. Real sockets, no trio."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

import wire
from coordinator.server.apis import SERVED_API_KEYS, served_api_keys
from coordinator.server.apis.api_versions import advertised_api_versions, feature_fields
from coordinator.server.early import (
    MAX_CONNECTIONS,
    EarlyConnection,
    EarlyResponder,
    api_versions_answer,
    bind_listeners,
)

SOFTWARE = {"client_software_name": "kcoord-test", "client_software_version": "1.0"}


@pytest.fixture
def responder() -> Iterator[EarlyResponder]:
    sockets = bind_listeners(0, "127.0.0.1")
    early = EarlyResponder(sockets, api_versions_answer(SERVED_API_KEYS, 2))
    early.start()
    try:
        yield early
    finally:
        for conn in early.stop():
            conn.sock.close()
        for sock in sockets:
            sock.close()


def _connect(early: EarlyResponder) -> socket.socket:
    sock = socket.create_connection(early.listeners[0].getsockname()[:2], timeout=10)
    return sock


def _read_frames(sock: socket.socket, count: int) -> list[bytes]:
    data = b""
    frames = []
    while len(frames) < count:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = sock.recv(65536)
            assert chunk, "closed"
            data += chunk
        size = int.from_bytes(data[:4], "big")
        frames.append(data[: 4 + size])
        data = data[4 + size :]
    assert data == b""
    return frames


def _expected(version: int, correlation_id: int, keys: frozenset[int]) -> bytes:
    body = {"error_code": 0, "api_keys": advertised_api_versions(keys), "throttle_time_ms": 0,
            **feature_fields(2, version)}
    return wire.encode_response(18, version, correlation_id, body)


def _stop(early: EarlyResponder) -> list[EarlyConnection]:
    """Stop the responder; what it handed over, with the sockets closed."""
    handed = early.stop()
    for conn in handed:
        conn.sock.close()
    return handed


def _wait_for(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_answers_every_version_pipelined_as_the_server_does(responder: EarlyResponder) -> None:
    versions = list(wire.lookup(18).request.version_range)  # type: ignore[union-attr]
    with _connect(responder) as sock:
        sock.sendall(b"".join(wire.encode_request(18, v, 100 + v, "c", SOFTWARE)
                              for v in versions))
        answers = _read_frames(sock, len(versions))
    assert answers == [_expected(v, 100 + v, SERVED_API_KEYS) for v in versions]


def test_answers_with_the_served_keys_it_was_given() -> None:
    keys = served_api_keys(False)
    assert keys < SERVED_API_KEYS
    sockets = bind_listeners(0, "127.0.0.1")
    early = EarlyResponder(sockets, api_versions_answer(keys, 2))
    early.start()
    try:
        with _connect(early) as sock:
            sock.sendall(wire.encode_request(18, 3, 5, "c", SOFTWARE))
            assert _read_frames(sock, 1) == [_expected(3, 5, keys)]
    finally:
        _stop(early)
        sockets[0].close()


def test_hands_over_from_the_first_request_it_cannot_answer(responder: EarlyResponder) -> None:
    metadata = wire.encode_request(3, 12, 2, "c", {"topics": None})
    after = wire.encode_request(18, 3, 3, "c", SOFTWARE)
    with _connect(responder) as sock:
        sock.sendall(wire.encode_request(18, 3, 1, "c", SOFTWARE) + metadata + after)
        assert _read_frames(sock, 1) == [_expected(3, 1, SERVED_API_KEYS)]
        _wait_for(lambda: any(not c.reading for c in responder.connections.values()))
        handed = _stop(responder)
    assert len(handed) == 1
    assert bytes(handed[0].unread) == metadata + after  # unanswered, in order
    assert handed[0].unsent == bytearray()


@pytest.mark.parametrize(
    "request_bytes",
    [
        wire.encode_request(18, 3, 1, "c", {"client_software_name": "-bad-",
                                           "client_software_version": "1"}),
        struct.pack(">ihhi", 8, 18, 9, 1),  # a version it does not serve
        struct.pack(">i", 1 << 30),  # a size beyond what it buffers
        struct.pack(">i", -1),
    ],
    ids=["invalid-software-name", "unsupported-version", "huge", "negative-size"],
)
def test_leaves_what_the_server_must_judge(responder: EarlyResponder,
                                           request_bytes: bytes) -> None:
    with _connect(responder) as sock:
        sock.sendall(request_bytes)
        _wait_for(lambda: any(not c.reading for c in responder.connections.values()))
        sock.settimeout(0.05)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # nothing was answered
        handed = _stop(responder)
    assert [bytes(c.unread) for c in handed] == [request_bytes]


def test_a_connection_the_peer_closed_is_not_handed_over(responder: EarlyResponder) -> None:
    with _connect(responder) as sock:
        sock.sendall(wire.encode_request(18, 0, 1, "c", {}))
        _read_frames(sock, 1)
    _wait_for(lambda: not responder.connections)
    assert _stop(responder) == []


def test_a_partial_request_is_handed_over_as_received(responder: EarlyResponder) -> None:
    request = wire.encode_request(18, 3, 1, "c", SOFTWARE)
    with _connect(responder) as sock:
        sock.sendall(request[:9])
        _wait_for(lambda: any(c.unread for c in responder.connections.values()))
        handed = _stop(responder)
    assert len(handed) == 1 and bytes(handed[0].unread) == request[:9]
    assert isinstance(handed[0], EarlyConnection)


def test_accepts_at_most_max_connections(responder: EarlyResponder) -> None:
    clients = [_connect(responder) for _ in range(MAX_CONNECTIONS + 3)]
    try:
        _wait_for(lambda: len(responder.connections) == MAX_CONNECTIONS)
        time.sleep(0.05)
        assert len(responder.connections) == MAX_CONNECTIONS  # the rest wait in the backlog
        handed = _stop(responder)
        assert len(handed) == MAX_CONNECTIONS
        waiting, _ = responder.listeners[0].accept()  # still there for the server
        waiting.close()
    finally:
        for sock in clients:
            sock.close()


def test_bind_listeners_refuses_a_busy_port() -> None:
    sockets = bind_listeners(0, "127.0.0.1")
    try:
        with pytest.raises(OSError):
            bind_listeners(sockets[0].getsockname()[1], "127.0.0.1")
    finally:
        sockets[0].close()


def test_the_early_answer_loads_neither_trio_nor_the_broker_package() -> None:
    """What the thread needs is loaded without ``coordinator.broker``'s ``__init__`` (every
    handler, and trio with them): otherwise the thread could only start once they were
    imported (a module-level import of the broker config in ``api_versions`` did that)."""
    payload = (struct.pack(">hhih", 18, 3, 7, 1) + b"c" + b"\x00"
               + bytes([6]) + b"probe" + bytes([2]) + b"1" + b"\x00")
    code = (
        "import sys\n"
        "from coordinator.server.apis import served_api_keys\n"
        "from coordinator.server.early import api_versions_answer\n"
        "from coordinator.server.lazy import import_leaf\n"
        "level = import_leaf('coordinator.broker.config').transaction_version({})\n"
        f"reply = api_versions_answer(served_api_keys(True), level)({payload!r})\n"
        "assert reply is not None and reply[4:8] == (7).to_bytes(4, 'big'), reply\n"
        "print(sorted(m for m in ('trio', 'construct', 'coordinator.broker') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
