"""A real ``kcoord serve`` subprocess and helpers for driving real clients against it."""

from __future__ import annotations

import contextlib
import gc
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
KAFKAJS_DIR = Path(__file__).parent / "kafkajs"
T = TypeVar("T")

#: Settings every e2e server runs with: immediate first rebalance, short sessions allowed.
E2E_CONFIG = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}


@contextlib.contextmanager
def started(server: Any) -> Iterator[Any]:
    """Start an in-process ``KcoordServer`` and close it afterwards, then collect the garbage:
    kafka-python 3.0.12 drops the socket of a connection attempt to a stopped broker without
    closing it, and the ResourceWarning fires wherever the collector finds it (here, with
    those warnings ignored)."""
    server.start()
    try:
        yield server
    finally:
        server.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()


class KcoordProcess:
    """``python -m coordinator serve`` on an ephemeral port; stopped by ``stop``/``kill``."""

    def __init__(
        self,
        data_dir: Path,
        *,
        topics: Sequence[str] = (),
        config: dict[str, str] | None = None,
        extra_args: Sequence[str] = (),
        fsync: str = "always",
        listening_lines: int = 1,
    ) -> None:
        self.data_dir = data_dir
        self.topics = list(topics)
        self.config = {**E2E_CONFIG, **(config or {})}
        self.extra_args = list(extra_args)
        self.fsync = fsync
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0
        self.stderr_path = data_dir.parent / f"{data_dir.name}-stderr.log"
        self.started_in = 0.0
        self.listening_line = ""
        #: How many "listening" lines to wait for (one per listener, then per broker).
        self.listening_lines = listening_lines
        #: Every "listening" line read, and each named listener's port (``listeners``).
        self.lines: list[str] = []
        self.ports: dict[str, int] = {}

    def argv(self, port: int = 0) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "coordinator",
            "serve",
            "--data-dir",
            str(self.data_dir),
            "--fsync",
            self.fsync,
            "--log-level",
            os.environ.get("KCOORD_E2E_LOG_LEVEL", "info"),
        ]
        if "listeners" not in self.config:  # (the listener names its own port)
            args += ["--port", str(port)]
        for topic in self.topics:
            args += ["--topic", topic]
        for key, value in self.config.items():
            args += ["-c", f"{key}={value}"]
        return args + self.extra_args

    def start(self, port: int = 0, timeout: float = 20.0) -> KcoordProcess:
        """Start and wait (bounded) for the ``kcoord listening on HOST:PORT`` line."""
        stderr = open(self.stderr_path, "a")  # noqa: SIM115 - closed with the process
        began = time.perf_counter()
        self.proc = subprocess.Popen(
            self.argv(port),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        stderr.close()
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        count = self.listening_lines
        threading.Thread(target=lambda: [lines.put(stdout.readline()) for _ in range(count)],
                         daemon=True).start()
        self.lines = []
        for _ in range(count):
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                self.kill()
                raise AssertionError(
                    f"kcoord did not start in {timeout}s: {self.stderr()}") from None
            if not line.startswith("kcoord "):
                self.kill()
                raise AssertionError(f"unexpected line {line!r}: {self.stderr()}")
            self.lines.append(line.strip())
        line = self.lines[0]
        if not line.startswith("kcoord listening on "):
            self.kill()
            raise AssertionError(f"unexpected first line {line!r}: {self.stderr()}")
        self.started_in = time.perf_counter() - began
        self.listening_line = line
        # "kcoord listening on HOST:PORT", then " (NAME)" when the listeners key is set
        self.port = int(line.split()[3].rsplit(":", 1)[1])
        self.ports = {each.split()[-1].strip("()"): int(each.split()[-2].rsplit(":", 1)[1])
                      for each in self.lines
                      if each.startswith("kcoord listening on ") and each.endswith(")")}
        return self

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text()[-4000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait; SIGKILL if it does not exit in time. The exit status."""
        proc = self.proc
        if proc is None:
            return 0
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self._close_pipes()
        return int(proc.returncode)

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(5)
        self._close_pipes()

    def _close_pipes(self) -> None:
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()


def wait_until(
    condition: Callable[[], T], timeout: float, interval: float = 0.05, what: str = ""
) -> T:
    """Poll ``condition`` until truthy (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(interval)


def exact_cover(assignments: Iterable[Iterable[Any]], expected: set[Any]) -> bool:
    """Every expected partition owned by exactly one consumer."""
    seen: list[Any] = [tp for a in assignments for tp in a]
    return len(seen) == len(set(seen)) and set(seen) == expected


def raw_request(bootstrap: str, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """One request over a fresh TCP connection, decoded with kcoord's own codec (for what
    no client exposes: topic ids, group and member epochs)."""
    import socket

    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        return exchange(sock, api_key, version, body)


def exchange(sock: Any, api_key: int, version: int, body: dict[str, Any],
             correlation_id: int = 1) -> Any:
    """One request on an open connection and its decoded answer (the connection must not
    close first)."""
    import wire

    sock.sendall(wire.encode_request(api_key, version, correlation_id, "e2e-probe", body))
    reader = wire.FrameReader()
    while (payload := reader.next_frame()) is wire.NEED_DATA:
        data = sock.recv(65536)
        assert data, "connection closed"
        reader.receive_data(data)
    assert isinstance(payload, bytes)
    return wire.decode_response(api_key, version, payload)[1]


def peer_closed(sock: Any) -> bool:
    """Whether the server closed ``sock`` (EOF or reset) rather than sending something."""
    try:
        return bool(sock.recv(1) == b"")
    except ConnectionResetError:
        return True


def ck_round_trip(config: dict[str, Any], topic: str, count: int = 5) -> list[bytes]:
    """confluent-kafka with ``config``: produce ``count`` values to ``topic``, consume them
    in a group and commit; the values read (the group's committed offsets add up)."""
    import confluent_kafka

    producer = confluent_kafka.Producer(config)
    for i in range(count):
        producer.produce(topic, b"v%d" % i)
    assert producer.flush(15) == 0
    consumer = confluent_kafka.Consumer(
        {**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.commit(asynchronous=False)
        committed = consumer.committed(consumer.assignment(), timeout=10)
    finally:
        consumer.close()
    assert sum(tp.offset for tp in committed) == count
    return values


def kp_round_trip(config: dict[str, Any], topic: str, count: int = 5) -> list[bytes]:
    """The same with kafka-python (``config``: its keyword arguments)."""
    import kafka

    producer = kafka.KafkaProducer(**config)
    for i in range(count):
        producer.send(topic, b"v%d" % i).get(15)
    producer.close()
    consumer = kafka.KafkaConsumer(topic, group_id=f"g-{topic}", auto_offset_reset="earliest",
                                   consumer_timeout_ms=15000, **config)
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == count:
            break
    consumer.commit()
    committed = sum(consumer.committed(tp) or 0 for tp in consumer.assignment())
    consumer.close()
    assert committed == count
    return values


def aio_round_trip(config: dict[str, Any], topic: str, count: int = 3) -> list[bytes]:
    """The same with aiokafka (``config``: its keyword arguments)."""
    import asyncio

    import aiokafka

    async def round_trip() -> list[bytes]:
        producer = aiokafka.AIOKafkaProducer(**config)
        await producer.start()
        try:
            for i in range(count):
                await producer.send_and_wait(topic, b"v%d" % i)
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(topic, group_id=f"g-{topic}",
                                             auto_offset_reset="earliest", **config)
        await consumer.start()
        values: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                async for message in consumer:
                    values.append(message.value)
                    if len(values) == count:
                        break
            await consumer.commit()
        finally:
            await consumer.stop()
        return values

    return asyncio.run(round_trip())


def kafkajs_node() -> str:
    """The node binary, with kafkajs installed beside the script from its lock file.
    `.ci/run` installs it first; otherwise the first run installs it with npm. Without node
    or npm, or when the install fails, the test is skipped, saying why."""
    import shutil

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    if not (KAFKAJS_DIR / "node_modules" / "kafkajs" / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("kafkajs is not installed and npm is missing")
        install = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(KAFKAJS_DIR)],
            capture_output=True, text=True, timeout=180, check=False,
        )
        if install.returncode != 0:
            pytest.skip(f"npm ci for kafkajs failed: {install.stderr.strip()[-300:]}")
    return node


def assert_usage_errors(data_dir: Path, cases: dict[tuple[str, ...], str]) -> None:
    """``kcoord serve ARGS`` exits 2 with one line on stderr holding the message, and prints
    nothing on stdout (nothing listened), for each (ARGS, message) of ``cases``."""
    for args, message in cases.items():
        result = subprocess.run(
            [sys.executable, "-m", "coordinator", "serve", "--data-dir", str(data_dir), *args],
            capture_output=True, text=True, timeout=30, cwd=REPO)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert result.stdout == ""
