"""The scale fleet's client loop (``scale_fleet.drive``) does work per request, not per
member per pass: at 10,000 members a scan of every idle member's schedule each pass (every
5 ms) cost the client processes several times the server's CPU per request, and the server,
sharing the cores with them, waited for a CPU -- the fleet's tail was the clients' load.
Also: every member still sends on its schedule and each answer is timed."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from scale_fleet import Connection, drive

MEMBERS = 60
KEY = 12


class CountingSchedule(dict[int, float]):
    """A member's ``next``, counting how often the loop looks at it."""

    looks = 0

    def __getitem__(self, key: int) -> float:
        CountingSchedule.looks += 1
        return super().__getitem__(key)

    def values(self) -> Any:
        CountingSchedule.looks += 1
        return super().values()


class Member(Connection):
    def __init__(self, port: int, period: float) -> None:
        super().__init__("g", port)
        self.every = period
        self.sent: list[float] = []

    def request(self, key: int) -> bytes:
        self.sent.append(time.monotonic())
        return (4).to_bytes(4, "big") + bytes(4)

    def period(self, key: int) -> float:
        return self.every

    def read(self, key: int, payload: bytes, errors: dict[str, int]) -> None:
        assert payload == bytes(4)


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A server answering every 8-byte frame with itself, from a thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    stop = threading.Event()

    def serve() -> None:
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ)
        while not stop.is_set():
            for key, _ in selector.select(timeout=0.05):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    conn.setblocking(True)
                    selector.register(conn, selectors.EVENT_READ)
                    continue
                sock: Any = key.fileobj
                data = sock.recv(8)
                if not data:
                    selector.unregister(sock)
                    sock.close()
                    continue
                sock.sendall(data)
        for key in list(selector.get_map().values()):  # the connections still open
            if key.fileobj is not listener:
                key.fileobj.close()  # type: ignore[union-attr]
        selector.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=10)
        listener.close()


def test_a_pass_looks_only_at_the_members_due_and_each_sends_on_its_schedule(
        echo_port: int) -> None:
    members = [Member(echo_port, period=0.2) for _ in range(MEMBERS)]
    began = time.monotonic()
    for i, m in enumerate(members):  # spread over the first period, as the fleet does
        m.next = CountingSchedule({KEY: began + 0.2 * i / MEMBERS})
    CountingSchedule.looks = 0
    latencies = drive(members, began + 1.0, {})
    for m in members:
        m.sock.close()
    sends = sum(len(m.sent) for m in members)
    assert sends == len(latencies[KEY]) >= MEMBERS * 4  # every send answered and timed
    assert all(began <= sent <= began + 1.0 and 0 <= latency < 1.0
               for sent, latency in latencies[KEY])  # stamped when sent, on one clock
    # A few looks per request (the heap push, the pop's key and its advance); a scan of
    # every idle member each 5 ms pass made this about 200 passes x 60 members x 2.
    assert CountingSchedule.looks <= 6 * sends + 2 * MEMBERS, CountingSchedule.looks
    for m in members:  # on schedule: each member's sends 0.2 s apart, none skipped
        gaps = [b - a for a, b in zip(m.sent, m.sent[1:], strict=False)]
        assert gaps and all(0.1 < gap < 0.3 for gap in gaps), gaps
