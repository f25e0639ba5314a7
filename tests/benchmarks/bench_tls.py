"""What TLS and SASL cost: one kcoord with a PLAINTEXT and a SASL_SSL listener side by side.

    python tests/benchmarks/bench_tls.py [--connections 100] [--requests 5000] [--repeats 3]

Rows, per listener (PLAINTEXT; SASL_SSL with PLAIN; SASL_SSL with SCRAM-SHA-512):

* connect: TCP connect, TLS handshake (TLS 1.3, the generated ECDSA P-256 certificate),
  SaslHandshake + SaslAuthenticate, first ApiVersions -- median and p99 wall time, and the
  server's CPU time per connection (``/proc/PID/stat`` utime+stime over ``--connections``
  connections: steadier than wall time on a shared machine);
* ping-pong: sequential ApiVersions on one authenticated connection -- requests/s and the
  server's CPU time per request.

The client is Python's ``ssl`` module on blocking sockets (TCP_NODELAY), in this process.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import wire  # noqa: E402

API_VERSIONS = {"client_software_name": "bench", "client_software_version": "1"}
TICKS = os.sysconf("SC_CLK_TCK")


def exchange(sock: socket.socket, api_key: int, version: int, body: Mapping[str, object],
             correlation_id: int) -> object:
    sock.sendall(wire.encode_request(api_key, version, correlation_id, "bench", body))
    reader = wire.FrameReader()
    while (payload := reader.next_frame()) is wire.NEED_DATA:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        reader.receive_data(data)
    assert isinstance(payload, bytes)
    return wire.decode_response(api_key, version, payload)[1]


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def scram_client(mechanism: str) -> Callable[[socket.socket], None]:
    import scramp  # type: ignore[import-untyped]

    def authenticate(sock: socket.socket) -> None:
        client = scramp.ScramClient([mechanism], "alice", "alice-secret")
        assert exchange(sock, 17, 1, {"mechanism": mechanism}, 1).error_code == 0  # type: ignore[attr-defined]
        first = exchange(sock, 36, 2, {"auth_bytes": client.get_client_first().encode()}, 2)
        client.set_server_first(first.auth_bytes.decode())  # type: ignore[attr-defined]
        final = exchange(sock, 36, 2, {"auth_bytes": client.get_client_final().encode()}, 3)
        assert final.error_code == 0  # type: ignore[attr-defined]

    return authenticate


def plain_client(sock: socket.socket) -> None:
    assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}, 1).error_code == 0  # type: ignore[attr-defined]
    answer = exchange(sock, 36, 2, {"auth_bytes": b"\0alice\0alice-secret"}, 2)
    assert answer.error_code == 0  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coordinator", "serve", "--data-dir", tmp, "--fsync", "never",
             "--log-level", "warning", "-c",
             "listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
             "--sasl-user", "alice:alice-secret"],
            stdout=subprocess.PIPE, text=True, cwd=REPO)
        try:
            assert proc.stdout is not None
            ports = {}
            for _ in range(2):
                line = proc.stdout.readline().split()
                ports[line[-1].strip("()")] = int(line[-2].rsplit(":", 1)[1])
            time.sleep(1.0)  # fully loaded
            context = ssl.create_default_context(cafile=os.path.join(tmp, "tls", "ca.pem"))

            def opener(name: str, auth: Callable[[socket.socket], None] | None
                       ) -> Callable[[], socket.socket]:
                def open_one() -> socket.socket:
                    raw = socket.create_connection(("127.0.0.1", ports[name]))
                    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    if name == "PLAINTEXT":
                        return raw
                    sock = context.wrap_socket(raw, server_hostname="localhost")
                    if auth is not None:
                        auth(sock)
                    return sock
                return open_one

            rows = [("PLAINTEXT", opener("PLAINTEXT", None)),
                    ("SASL_SSL PLAIN", opener("SASL_SSL", plain_client)),
                    ("SASL_SSL SCRAM-SHA-512", opener("SASL_SSL", scram_client("SCRAM-SHA-512")))]
            print(f"{'listener':24} {'connect p50':>11} {'p99':>8} {'server CPU/conn':>15} "
                  f"{'req/s':>8} {'server CPU/req':>14}")
            for name, open_one in rows:
                for _ in range(args.repeats):
                    times = []
                    cpu = cpu_seconds(proc.pid)
                    for _ in range(args.connections):
                        began = time.perf_counter()
                        sock = open_one()
                        exchange(sock, 18, 3, API_VERSIONS, 9)
                        times.append(time.perf_counter() - began)
                        sock.close()
                    conn_cpu = (cpu_seconds(proc.pid) - cpu) / args.connections
                    sock = open_one()
                    cpu = cpu_seconds(proc.pid)
                    began = time.perf_counter()
                    for i in range(args.requests):
                        exchange(sock, 18, 3, API_VERSIONS, 10 + i)
                    elapsed = time.perf_counter() - began
                    req_cpu = (cpu_seconds(proc.pid) - cpu) / args.requests
                    sock.close()
                    times.sort()
                    print(f"{name:24} {1000 * statistics.median(times):9.2f}ms "
                          f"{1000 * times[int(len(times) * 0.99) - 1]:6.2f}ms "
                          f"{1000 * conn_cpu:13.2f}ms {args.requests / elapsed:8.0f} "
                          f"{1e6 * req_cpu:12.1f}us")
        finally:
            proc.terminate()
            proc.wait(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
