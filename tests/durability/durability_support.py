"""A real ``kcoord serve`` process and a raw-frame OffsetCommit load generator, shared by the
crash tests and ``tests/benchmarks/bench_commits.py``.

``ServerProcess`` runs ``python -m coordinator serve --port 0`` on a data directory, waits
(bounded) for its ``kcoord listening on HOST:PORT`` line and can SIGKILL it; every start
gets its own stderr file so a restart's log can be checked on its own.

``CommitLoad`` drives N connections from one thread (non-blocking sockets, a selector),
keeping up to ``inflight`` OffsetCommit v8 requests outstanding on each. Connection *i*
commits, in every request, offset ``start + seq`` (seq = 1, 2, ...) to each of its own
partitions, and records the last seq the server acknowledged with error code 0 on every
partition. Frames are encoded once and patched (correlation id, offsets), and a response
identical to one already checked is not decoded again, so the generator costs a few
microseconds per request.
"""

from __future__ import annotations

import contextlib
import os
import queue
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wire import decode_response, encode_request

REPO = Path(__file__).resolve().parents[2]
OFFSET_COMMIT, OFFSET_FETCH = 8, 9
COMMIT_VERSION = 8
FETCH_VERSION = 8
_SENTINEL = 0x5A5A5A5A00000000
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


# ------------------------------------------------------------------ the server process


class ServerProcess:
    """``python -m coordinator serve`` on an ephemeral port over ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        *,
        fsync: str | None = "always",
        topics: Sequence[str] = (),
        config: dict[str, str] | None = None,
        log_level: str = "info",
        stderr_dir: Path | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.fsync = fsync
        self.topics = list(topics)
        self.config = {"group.initial.rebalance.delay.ms": "0", **(config or {})}
        self.log_level = log_level
        self.stderr_dir = stderr_dir or data_dir.parent
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0
        self.starts = 0
        self.stderr_path: Path | None = None
        self.startup_s = 0.0

    def argv(self) -> list[str]:
        args = [
            sys.executable, "-m", "coordinator", "serve", "--port", "0",
            "--data-dir", str(self.data_dir), "--log-level", self.log_level,
        ]  # fmt: skip
        if self.fsync is not None:  # None: kcoord's default policy
            args += ["--fsync", self.fsync]
        for topic in self.topics:
            args += ["--topic", topic]
        for key, value in self.config.items():
            args += ["-c", f"{key}={value}"]
        return args

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 30.0) -> ServerProcess:
        """Start (a previous process must be gone) and wait for the listening line."""
        assert not self.running, "already running"
        self.starts += 1
        self.stderr_path = self.stderr_dir / f"{self.data_dir.name}-stderr-{self.starts}.log"
        began = time.perf_counter()
        with open(self.stderr_path, "w") as stderr:
            self.proc = subprocess.Popen(
                self.argv(),
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                cwd=REPO,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise AssertionError(f"kcoord did not start in {timeout}s:\n{self.stderr()}") from None
        if not line.startswith("kcoord listening on "):
            self.kill()
            raise AssertionError(f"unexpected first line {line!r}:\n{self.stderr()}")
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.startup_s = time.perf_counter() - began
        return self

    def kill(self) -> None:
        """SIGKILL (if running) and reap; idempotent."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        try:
            proc.wait(10)
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait (SIGKILL after ``timeout``); the exit status."""
        proc = self.proc
        if proc is None:
            return 0
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"kcoord ignored SIGTERM for {timeout}s") from None
        self.kill()  # reap, close pipes
        return int(proc.returncode)

    def stderr(self) -> str:
        if self.stderr_path is None:
            return ""
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``condition`` until truthy (returned); fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def load_report_problems(stderr: str) -> list[str]:
    """Lines of a server's stderr showing its log did not load cleanly: anything at ERROR
    or CRITICAL, tracebacks, corruption, and any recovery other than a torn-tail truncation.
    An empty list when it loaded cleanly (it must also say ``coordinator loaded``)."""
    problems = []
    for line in stderr.splitlines():
        lowered = line.lower()
        if (
            " ERROR " in line
            or " CRITICAL " in line
            or "traceback" in lowered
            or "corrupt" in lowered
            or ("log recovery" in lowered and "torn tail" not in lowered)
        ):
            problems.append(line)
    if "coordinator loaded" not in stderr:
        problems.append("no 'coordinator loaded' line")
    return problems


# ------------------------------------------------------------------ raw requests


def recv_frame(sock: socket.socket) -> bytes:
    """One response payload from a blocking socket (with a timeout)."""
    data = bytearray()
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("closed by the server")
        data += chunk
    return bytes(data[4:])


def request(port: int, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """One request on a fresh connection; the decoded response body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(encode_request(api_key, version, 1, "durability", body))
        corr, response = decode_response(api_key, version, recv_frame(sock))
    assert corr == 1
    return response


class Session:
    """A blocking request/response connection."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.corr = 0

    def call(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.corr += 1
        self.sock.sendall(encode_request(api_key, version, self.corr, "durability", body))
        corr, response = decode_response(api_key, version, recv_frame(self.sock))
        assert corr == self.corr
        return response

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


LOAD_IN_PROGRESS = 14
#: A commit answered COORDINATOR_LOAD_IN_PROGRESS: neither acknowledged nor an error.
_NOT_ACKNOWLEDGED = "not acknowledged: the coordinator is loading"


def fetch_committed(port: int, groups: Iterable[str]) -> dict[tuple[str, str, int], int]:
    """Every committed offset of ``groups``: {(group, topic, partition): offset}."""
    body = {"groups": [{"group_id": g, "topics": None} for g in groups], "require_stable": False}
    # A coordinator still loading after a restart answers COORDINATOR_LOAD_IN_PROGRESS (14);
    # clients retry it, and so does this, for a bounded time.
    deadline = time.monotonic() + 60
    while True:
        response = request(port, OFFSET_FETCH, FETCH_VERSION, body)
        if (all(group.error_code != LOAD_IN_PROGRESS for group in response.groups)
                or time.monotonic() > deadline):
            break
        time.sleep(0.1)
    out = {}
    for group in response.groups:
        assert group.error_code == 0, group
        for topic in group.topics:
            for p in topic.partitions:
                assert p.error_code == 0, (group.group_id, topic.name, p)
                out[(group.group_id, topic.name, p.partition_index)] = p.committed_offset
    return out


# ------------------------------------------------------------------ the commit load


@dataclass(frozen=True)
class ConnSpec:
    """What one connection commits: a group, a topic and its partitions."""

    group: str
    topic: str
    partitions: tuple[int, ...]


@dataclass
class _Conn:
    spec: ConnSpec
    sock: socket.socket
    frame: bytearray
    offset_positions: list[int]
    corr: int = 0
    seq: int = 0
    acked_seq: int = 0
    buf: bytearray = field(default_factory=bytearray)
    inflight: deque[tuple[int, int, float]] = field(default_factory=deque)
    closed: bool = False


def commit_template(spec: ConnSpec, client_id: str = "durability") -> tuple[bytes, list[int]]:
    """An OffsetCommit v8 frame for ``spec`` (simple commit: generation -1, member "") and
    the byte positions of each partition's offset."""
    body = {
        "group_id": spec.group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": spec.topic,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": _SENTINEL + i,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                    for i, p in enumerate(spec.partitions)
                ],
            }
        ],
    }
    frame = encode_request(OFFSET_COMMIT, COMMIT_VERSION, 0, client_id, body)
    positions = []
    for i in range(len(spec.partitions)):
        pos = frame.find(_I64.pack(_SENTINEL + i))
        assert pos > 0 and frame.count(_I64.pack(_SENTINEL + i)) == 1
        positions.append(pos)
    return frame, positions


@dataclass
class LoadResult:
    """What a run did: acknowledged requests, rates and latencies, errors seen."""

    acked: int
    seconds: float
    latencies: list[float]
    errors: list[str]

    @property
    def rate(self) -> float:
        return self.acked / self.seconds if self.seconds > 0 else 0.0

    def latency_ms(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


class CommitLoad:
    """Pipelined simple-group OffsetCommits over several connections, from one thread."""

    def __init__(
        self, port: int, specs: Sequence[ConnSpec], *, inflight: int = 4, start_offset: int = 0
    ) -> None:
        self.start_offset = start_offset
        self.inflight = inflight
        self.sel = selectors.DefaultSelector()
        self.conns: list[_Conn] = []
        self._ok_bodies: set[bytes] = set()
        self._latencies: list[float] = []
        self._receive_view = memoryview(bytearray(1 << 20))
        for spec in specs:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            frame, positions = commit_template(spec)
            conn = _Conn(spec, sock, bytearray(frame), positions)
            self.conns.append(conn)
            self.sel.register(sock, selectors.EVENT_READ, conn)

    # ------------------------------------------------------------------ results

    def offset_for(self, seq: int) -> int:
        return self.start_offset + seq

    def acked_offsets(self) -> dict[tuple[str, str, int], int]:
        """The last acknowledged offset of every partition that had a commit acknowledged."""
        out = {}
        for conn in self.conns:
            if conn.acked_seq:
                for p in conn.spec.partitions:
                    out[(conn.spec.group, conn.spec.topic, p)] = self.offset_for(conn.acked_seq)
        return out

    def sent_offsets(self) -> dict[tuple[str, str, int], int]:
        """The last offset sent to every partition."""
        out = {}
        for conn in self.conns:
            if conn.seq:
                for p in conn.spec.partitions:
                    out[(conn.spec.group, conn.spec.topic, p)] = self.offset_for(conn.seq)
        return out

    @property
    def max_seq(self) -> int:
        return max((c.seq for c in self.conns), default=0)

    # ------------------------------------------------------------------ running

    def _send(self, conn: _Conn, count: int, now: float) -> None:
        frame = conn.frame
        out = bytearray()
        for _ in range(count):
            conn.corr += 1
            conn.seq += 1
            _I32.pack_into(frame, 8, conn.corr)
            offset = self.offset_for(conn.seq)
            for pos in conn.offset_positions:
                _I64.pack_into(frame, pos, offset)
            out += frame
            conn.inflight.append((conn.corr, conn.seq, now))
        try:
            conn.sock.sendall(out)
        except OSError:
            conn.closed = True

    def _check(self, conn: _Conn, payload: bytes) -> str | None:
        """None when every partition was acknowledged with error code 0."""
        body = payload[4:]
        if body in self._ok_bodies:
            return None
        _, response = decode_response(OFFSET_COMMIT, COMMIT_VERSION, payload)
        codes = [p.error_code for t in response.topics for p in t.partitions]
        if len(codes) == len(conn.spec.partitions) and not any(codes):
            self._ok_bodies.add(body)
            return None
        if codes and all(code == LOAD_IN_PROGRESS for code in codes):
            return _NOT_ACKNOWLEDGED  # the coordinator is still loading: not acked, retried
        return f"{conn.spec}: error codes {codes}"

    def _receive(self, conn: _Conn, now: float, record: bool) -> tuple[int, list[str]]:
        """Read what arrived; (acknowledged requests, errors)."""
        errors: list[str] = []
        view = self._receive_view
        try:
            # Into one buffer: recv(1 MiB) allocates 1 MiB for every read, however few bytes
            # come (about 18 us a read, load-generator CPU taken from the server under test).
            size = conn.sock.recv_into(view)
        except (BlockingIOError, InterruptedError):
            return 0, errors
        except OSError:
            size = 0
        if not size:
            conn.closed = True
            self.sel.unregister(conn.sock)
            return 0, errors
        buf = conn.buf
        buf += view[:size]
        pos = 0
        acked = 0
        while len(buf) - pos >= 4:
            size = int.from_bytes(buf[pos : pos + 4], "big")
            if len(buf) - pos < 4 + size:
                break
            payload = bytes(buf[pos + 4 : pos + 4 + size])
            pos += 4 + size
            corr, seq, sent_at = conn.inflight.popleft()
            got = int.from_bytes(payload[:4], "big")
            if got != corr:
                errors.append(f"{conn.spec}: correlation id {got}, expected {corr}")
                continue
            error = self._check(conn, payload)
            if error is _NOT_ACKNOWLEDGED:
                continue
            if error is not None:
                errors.append(error)
                continue
            conn.acked_seq = seq
            acked += 1
            if record:
                self._latencies.append(now - sent_at)
        del buf[:pos]
        return acked, errors

    def run(
        self,
        seconds: float,
        *,
        warmup: float = 0.0,
        after_first_acks: bool = False,
        start_timeout: float = 20.0,
        kill: Callable[[], None] | None = None,
        drain_timeout: float = 5.0,
    ) -> LoadResult:
        """Keep ``inflight`` requests outstanding on every connection for ``warmup`` +
        ``seconds`` -- counted, with ``after_first_acks``, from the moment every connection
        has had a commit acknowledged (at most ``start_timeout`` later). With ``kill``, call
        it at the end instead of just stopping, then read every answer that still arrives
        until each connection is closed (bounded by ``drain_timeout``). Counts and
        latencies cover the measured ``seconds`` (plus, with ``kill``, the answers read
        after it)."""
        self._latencies = []
        errors: list[str] = []
        began = time.perf_counter()
        measure_from: float | None = None if after_first_acks else began + warmup
        for conn in self.conns:
            self._send(conn, self.inflight, began)
            conn.sock.setblocking(False)
        acked = 0
        measuring = False
        while True:
            now = time.perf_counter()
            if measure_from is None:
                if all(c.acked_seq for c in self.conns):
                    measure_from = now + warmup
                elif now - began > start_timeout:
                    errors.append(f"not every connection had an answer in {start_timeout}s")
                    measure_from = now
                    break
            if measure_from is not None:
                if not measuring and now >= measure_from:
                    measuring, acked, self._latencies = True, 0, []
                if now >= measure_from + seconds:
                    break
            for key, _ in self.sel.select(timeout=0.01):
                conn = key.data
                t = time.perf_counter()
                got, errs = self._receive(conn, t, measuring)
                acked += got
                errors += errs
                if got and not conn.closed:
                    conn.sock.settimeout(10)  # bounded, not blocking forever
                    self._send(conn, got, t)
                    conn.sock.setblocking(False)
            if any(c.closed for c in self.conns):
                errors.append("a connection was closed by the server")
                break
        elapsed = time.perf_counter() - (measure_from or began)
        if kill is not None:
            kill()
            deadline = time.perf_counter() + drain_timeout
            while not all(c.closed for c in self.conns):
                if time.perf_counter() > deadline:
                    errors.append(f"connections still open {drain_timeout}s after the kill")
                    break
                for key, _ in self.sel.select(timeout=0.05):
                    got, errs = self._receive(key.data, time.perf_counter(), False)
                    acked += got
                    errors += errs
        return LoadResult(acked, elapsed, self._latencies, errors)

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(conn.sock)
            conn.sock.close()
        self.sel.close()
