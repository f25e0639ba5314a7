"""The client side of bench_scale.py's fleet: one connection per member, each with one
request in flight at a time, sending on its own schedule over non-blocking sockets."""

from __future__ import annotations

import heapq
import selectors
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench_brokers import recv_frame

from wire import decode_response, encode_request


class Connection:
    """One member's connection and schedule: ``next`` holds, by API key, when it sends that
    request next; a subclass says what it sends (:meth:`request`), how often
    (:meth:`period`) and what it makes of the answer (:meth:`read`)."""

    def __init__(self, group: str, port: int) -> None:
        self.group = group
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.corr = 0
        self.sent_at = 0.0
        self.kind = 0
        self.buffer = b""
        self.next: dict[int, float] = {}

    def call(self, key: int, version: int, body: dict[str, Any]) -> None:
        self.corr += 1
        self.sock.sendall(encode_request(key, version, self.corr, "bench-scale", body))

    def answer(self, key: int, version: int) -> Any:
        corr, response = decode_response(key, version, recv_frame(self.sock))
        assert corr == self.corr
        return response

    def request(self, key: int) -> bytes | None:
        """The frame of the request ``key`` due now, or None to skip this one."""
        raise NotImplementedError

    def period(self, key: int) -> float:
        raise NotImplementedError

    def read(self, key: int, payload: bytes, errors: dict[str, int]) -> None:
        """Take the answer to ``key``; count its errors by name in ``errors``."""
        raise NotImplementedError


def count(errors: dict[str, int], name: str) -> None:
    errors[name] = errors.get(name, 0) + 1


def drive(members: Sequence[Connection], end: float, errors: dict[str, int],
          done: Callable[[], bool] | None = None) -> dict[int, list[tuple[float, float]]]:
    """Every member sends what is due until ``end`` (or until ``done()`` says so, checked
    every 0.25 s), then the answers in flight are read (for at most 30 s). Returns, by API
    key, (when sent, latency) per answer: ``time.monotonic()`` (one clock for every process
    of the machine) and seconds from send to answer.

    The members not awaiting an answer wait in a heap by their next due time, and the
    process sleeps in ``select`` until the first of them is due: a pass does work only for
    the members due or answered, not for every member (a scan of every idle member each
    pass cost these processes several times the server's CPU per request at 10,000
    members, and the server, sharing the cores, waited for a CPU). Each send is stamped
    when it is sent and each answer when it is read, before its decoding (and before the
    other answers of that pass are decoded)."""
    for m in members:
        m.sock.setblocking(False)
    selector = selectors.DefaultSelector()
    for m in members:
        selector.register(m.sock, selectors.EVENT_READ, m)
    latencies: dict[int, list[tuple[float, float]]] = {}
    due: list[tuple[float, int, Connection]] = []  # (when, tie-break, member): not in flight
    for m in members:  # (the tie-break: the member's id, as Connections do not compare)
        heapq.heappush(due, (min(m.next.values()), id(m), m))
    in_flight = 0
    checked = 0.0
    stopping = False
    while True:
        now = time.monotonic()
        if not stopping and (now >= end or (done is not None and now >= checked + 0.25
                                            and done())):
            stopping, end = True, now + 30
        checked = now if now >= checked + 0.25 else checked
        if stopping and (not in_flight or now >= end):
            break
        while not stopping and due and due[0][0] <= now:
            _, _, m = heapq.heappop(due)
            key = min(m.next, key=m.next.__getitem__)
            m.next[key] += m.period(key)
            frame = m.request(key)
            if frame is None:
                heapq.heappush(due, (min(m.next.values()), id(m), m))
                continue
            m.kind, m.sent_at = key, time.monotonic()
            m.sock.send(frame)  # small: the socket buffer takes it whole
            in_flight += 1
        wake = end if stopping or not due else min(due[0][0], end)
        if done is not None and not stopping:
            wake = min(wake, checked + 0.25)
        answered: list[tuple[Connection, bytes]] = []
        for selected, _ in selector.select(timeout=max(0.0, wake - time.monotonic())):
            m = selected.data
            m.buffer += m.sock.recv(1 << 16)
            if len(m.buffer) < 4 or len(m.buffer) < 4 + int.from_bytes(m.buffer[:4], "big"):
                continue
            latencies.setdefault(m.kind, []).append((m.sent_at, time.monotonic() - m.sent_at))
            answered.append((m, m.buffer[4:]))
            m.buffer = b""
        for m, payload in answered:
            m.read(m.kind, payload, errors)  # (may move its next request: a rejoin)
            in_flight -= 1
            heapq.heappush(due, (min(m.next.values()), id(m), m))
    selector.close()
    return latencies


def close_when_told(members: Sequence[Connection]) -> None:
    """Keep every connection open until the parent closes this process's stdin: the
    parent closes them all once every process has measured, so no process's closing
    thousands of connections lands in another's measured answers."""
    sys.stdin.read()
    for m in members:
        m.sock.close()


def sent_within(timed: list[list[float]], start: float, end: float) -> list[float]:
    """The latencies of the requests sent from ``start`` to ``end`` (``drive``'s pairs,
    as JSON brings them back)."""
    return [latency for sent, latency in timed if start <= sent <= end]


def steady_and_every(timed: list[list[float]], steady: tuple[float, float],
                     ) -> tuple[list[float], list[float]]:
    """The latencies of the requests sent in the ``steady`` phase (start, end), and every
    latency of ``timed``."""
    return sent_within(timed, *steady), [latency for _, latency in timed]


def machine_cpu() -> tuple[int, int]:
    """(steal, all) CPU time of the machine so far, in ticks (Linux /proc/stat): steal is
    what the hypervisor gave other guests while this one had work."""
    with open("/proc/stat") as stat:
        ticks = [int(v) for v in stat.readline().split()[1:9]]
    return ticks[7], sum(ticks)


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time stolen between two ``machine_cpu`` readings."""
    return (after[0] - before[0]) / max(1, after[1] - before[1])


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (s) in ms (NaN if none)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000
