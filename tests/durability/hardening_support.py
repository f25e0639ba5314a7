"""What the hardening soak (``test_hardening_soak.py``) needs beside ``durability_support``:
a probe that keeps asking a real ``kcoord serve`` for ApiVersions and Metadata and records
the slowest round trip and the server's peak RSS, a server started under a descriptor
limit, and hostile inputs (a gzip bomb batch, a trickled frame)."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import crc32c
from durability_support import ServerProcess, recv_frame

from wire import decode_response, encode_request
from wire.varint import encode_uvarint

API_VERSIONS, METADATA = 18, 3
PROBE_EVERY_S = 0.1
PROBE_TIMEOUT_S = 10.0


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def held(latency_s: float, cpu_s: float, bound_s: float) -> bool:
    """Whether a round trip of ``latency_s`` shows the server holding its event loop:
    over ``bound_s`` on a machine with a core per runnable task, and on an overloaded
    (shared) machine over ``bound_s`` with the server on CPU for most of the bound
    meanwhile -- there a slow round trip while the server waited for a core is the
    scheduler's, while a loop held by one request burns CPU all along."""
    if latency_s <= bound_s:
        return False
    overloaded = os.getloadavg()[0] > (os.cpu_count() or 1)
    return not overloaded or cpu_s >= 0.8 * bound_s


def rss_bytes(pid: int) -> int:
    """The process's resident set size (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Probe(threading.Thread):
    """ApiVersions and Metadata round trips, one every ``PROBE_EVERY_S``, each on a fresh
    connection (a server that stops accepting must show too): the slowest round trip, the
    failures, and the server's peak RSS."""

    def __init__(self, server: ServerProcess) -> None:
        super().__init__(daemon=True, name="probe")
        self.port = server.port
        assert server.proc is not None
        self.pid = server.proc.pid
        self.slowest = 0.0
        self.held: list[tuple[float, float]] = []  # (latency, server CPU) over the bound
        self.bound_s = 1.0
        self.round_trips = 0
        self.failures: list[str] = []
        self.baseline_rss = rss_bytes(self.pid)
        self.peak_rss = self.baseline_rss
        self._stop_event = threading.Event()

    def round_trip(self, correlation: int) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=PROBE_TIMEOUT_S) as s:
            for api_key, version, body in ((API_VERSIONS, 3, {
                    "client_software_name": "probe", "client_software_version": "1"}),
                    (METADATA, 12, {"topics": [], "allow_auto_topic_creation": False,
                                    "include_topic_authorized_operations": False})):
                s.sendall(encode_request(api_key, version, correlation, "probe", body))
                answered, _ = decode_response(api_key, version, recv_frame(s))
                assert answered == correlation

    def run(self) -> None:
        correlation = 0
        while not self._stop_event.wait(PROBE_EVERY_S):
            correlation += 1
            began, cpu = time.monotonic(), cpu_seconds(self.pid)
            try:
                self.round_trip(correlation)
            except (OSError, AssertionError, ConnectionError) as exc:
                self.failures.append(f"{time.strftime('%X')} {exc!r}")
            latency, cpu = time.monotonic() - began, cpu_seconds(self.pid) - cpu
            self.slowest = max(self.slowest, latency)
            if held(latency, cpu, self.bound_s):
                self.held.append((round(latency, 2), round(cpu, 2)))
            self.round_trips += 1
            self.peak_rss = max(self.peak_rss, rss_bytes(self.pid))

    def stop(self) -> None:
        """Stop after at least three round trips (a quick case still gets probed)."""
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        while self.round_trips < 3 and self.is_alive() and time.monotonic() < deadline:
            time.sleep(PROBE_EVERY_S)
        self._stop_event.set()
        self.join(PROBE_TIMEOUT_S * 3)

    def rebase(self) -> None:
        """Count RSS growth from now (after a case's own data is in)."""
        self.baseline_rss = self.peak_rss = rss_bytes(self.pid)

    def check(self, rss_growth: int) -> None:
        """The server answered every probe, none held beyond ``bound_s`` (``held``), and
        its RSS grew by at most ``rss_growth`` bytes over its size when the probe
        started."""
        assert self.round_trips >= 3, f"only {self.round_trips} probes ran"
        assert not self.failures, f"probes failed: {self.failures[:5]}"
        assert not self.held, (
            f"probes over {self.bound_s} s with the server on CPU (latency, CPU s): "
            f"{self.held[:5]} (slowest {self.slowest:.2f} s)")
        growth = self.peak_rss - self.baseline_rss
        assert growth <= rss_growth, (
            f"RSS grew {growth >> 20} MiB (bound {rss_growth >> 20} MiB)")


class LimitedServer(ServerProcess):
    """``kcoord serve`` with RLIMIT_NOFILE set to ``nofile`` (soft and hard) in the child."""

    def __init__(self, *args: Any, nofile: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.nofile = nofile

    def argv(self) -> list[str]:
        argv = super().argv()
        launcher = ("import resource, runpy, sys; "
                    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({self.nofile}, {self.nofile})); "
                    "sys.argv = ['kcoord'] + sys.argv[1:]; "
                    "runpy.run_module('coordinator', run_name='__main__')")
        return [sys.executable, "-c", launcher, *argv[3:]]  # (argv[:3]: python -m coordinator)


def batch(records: bytes, count: int, codec: int = 0) -> bytes:
    """A v2 record batch around ``records`` (already encoded, compressed with ``codec``)
    claiming ``count`` records."""
    attributes = codec
    body = struct.pack(">hiqqqhii", attributes, count - 1, 1000, 1000, -1, -1, -1, count)
    body += records
    crc = crc32c.crc32c(body)
    header = struct.pack(">qiibI", 0, 4 + 1 + 4 + len(body), 0, 2, crc)
    return header + body


def gzip_bomb(inflated: int) -> bytes:
    """A gzip batch claiming one record whose records inflate to ``inflated`` zero bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(inflated >> 20)]
    parts.append(compressor.flush())
    return batch(b"".join(parts), 1, codec=1)


def plain_batch(value_size: int) -> bytes:
    """An uncompressed batch of one record with a ``value_size``-byte value."""
    value = b"v" * value_size

    def varint(n: int) -> bytes:  # a record's signed (zigzag) varint
        return encode_uvarint((n << 1) ^ (n >> 63))

    record = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value
    record += varint(0)  # no headers
    return batch(varint(len(record)) + record, 1)


def produce_body(topic: str, partition: int, records: bytes) -> dict[str, Any]:
    return {"transactional_id": None, "acks": 1, "timeout_ms": 10_000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}]}


def partition_error(response: Any) -> int:
    return int(response["responses"][0]["partition_responses"][0]["error_code"])


class Trickle(threading.Thread):
    """A connection that announces a ``size``-byte frame and sends a byte of it every
    ``every_s`` seconds, until stopped or closed by the server."""

    def __init__(self, port: int, size: int, every_s: float) -> None:
        super().__init__(daemon=True, name="trickle")
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.size, self.every_s = size, every_s
        self.sent = 0
        self.closed_by_server = False
        self._stop_event = threading.Event()

    def run(self) -> None:
        prefix = struct.pack(">i", self.size)
        try:
            self.sock.sendall(prefix[:2])
            self.sock.sendall(prefix[2:])
            while not self._stop_event.wait(self.every_s):
                self.sock.sendall(b"\x00")
                self.sent += 1
        except OSError:
            self.closed_by_server = True

    def stop(self) -> None:
        self._stop_event.set()
        self.join(10)
        with contextlib.suppress(OSError):
            self.sock.close()
