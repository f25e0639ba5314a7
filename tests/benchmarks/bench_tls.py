"""What TLS and SASL cost: one kcoord with a PLAINTEXT and a SASL_SSL listener side by side.

    python tests/benchmarks/bench_tls.py [--connections 100] [--requests 5000] [--repeats 5]
        [--client-connects 20] [--seconds 2] [--records 50000]

One kcoord (``--fsync interval``, the default) with ``listeners=PLAINTEXT://...,SASL_SSL://...``
and a user ``alice`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). Each round measures every row
once, PLAINTEXT and SASL_SSL alternating, so the machine's other load weighs on both alike;
medians over ``--repeats`` rounds, and each round's load average.

Raw rows (Python's ``ssl`` on blocking sockets, TCP_NODELAY, in this process), per listener
(PLAINTEXT; SASL_SSL with PLAIN; SASL_SSL with SCRAM-SHA-512):

* connect: TCP connect, TLS handshake (TLS 1.3, the generated ECDSA P-256 certificate),
  SaslHandshake + SaslAuthenticate, first ApiVersions -- median and p99 wall time over
  ``--connections``, and the server's CPU time per connection (``/proc/PID/stat``
  utime+stime: steadier than wall time on a shared machine);
* ping-pong: ``--requests`` sequential ApiVersions on one authenticated connection --
  requests/s, p50/p99 and the server's CPU time per request.

Real-client rows (confluent-kafka / librdkafka, PLAINTEXT against SASL_SSL SCRAM-SHA-512,
``ssl.ca.location`` the generated ``ca.pem``):

* set-up: a new Producer until its first Metadata is answered (``list_topics``: bootstrap
  connection, TLS, SASL, ApiVersions, Metadata), ``--client-connects`` times;
* produce sequential: one 100-byte record, acks=all, ``flush()``, for ``--seconds``:
  records/s and p50/p99 of each round trip;
* produce bulk: ``--records`` records of 100 bytes (linger 5 ms): records/s;
* consume: a Consumer reading them back from offset 0 (assigned, no group): records/s.
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
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import wire  # noqa: E402

API_VERSIONS = {"client_software_name": "bench", "client_software_version": "1"}
TICKS = os.sysconf("SC_CLK_TCK")
TOPIC = "tls-bench"
USER, PASSWORD = "alice", "alice-secret"


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


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def scram_client(mechanism: str) -> Callable[[socket.socket], None]:
    import scramp  # type: ignore[import-untyped]

    def authenticate(sock: socket.socket) -> None:
        client = scramp.ScramClient([mechanism], USER, PASSWORD)
        assert exchange(sock, 17, 1, {"mechanism": mechanism}, 1).error_code == 0  # type: ignore[attr-defined]
        first = exchange(sock, 36, 2, {"auth_bytes": client.get_client_first().encode()}, 2)
        client.set_server_first(first.auth_bytes.decode())  # type: ignore[attr-defined]
        final = exchange(sock, 36, 2, {"auth_bytes": client.get_client_final().encode()}, 3)
        assert final.error_code == 0  # type: ignore[attr-defined]

    return authenticate


def plain_client(sock: socket.socket) -> None:
    assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}, 1).error_code == 0  # type: ignore[attr-defined]
    answer = exchange(sock, 36, 2, {"auth_bytes": f"\0{USER}\0{PASSWORD}".encode()}, 2)
    assert answer.error_code == 0  # type: ignore[attr-defined]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class Raw:
    """The raw rows of one listener and SASL mechanism."""

    def __init__(self, pid: int, open_one: Callable[[], socket.socket]) -> None:
        self.pid = pid
        self.open_one = open_one

    def connect(self, connections: int) -> dict[str, Any]:
        times = []
        cpu = cpu_seconds(self.pid)
        for _ in range(connections):
            began = time.perf_counter()
            sock = self.open_one()
            exchange(sock, 18, 3, API_VERSIONS, 9)
            times.append(time.perf_counter() - began)
            sock.close()
        return {"ms": [t * 1000 for t in times],
                "cpu_ms": (cpu_seconds(self.pid) - cpu) / connections * 1000}

    def ping_pong(self, requests: int) -> dict[str, Any]:
        sock = self.open_one()
        times = []
        cpu = cpu_seconds(self.pid)
        began = time.perf_counter()
        for i in range(requests):
            t = time.perf_counter()
            exchange(sock, 18, 3, API_VERSIONS, 10 + i)
            times.append((time.perf_counter() - t) * 1000)
        elapsed = time.perf_counter() - began
        cpu_us = (cpu_seconds(self.pid) - cpu) / requests * 1e6
        sock.close()
        return {"rate": requests / elapsed, "ms": times, "cpu_us": cpu_us}


class Client:
    """The confluent-kafka rows of one listener."""

    def __init__(self, pid: int, config: dict[str, Any]) -> None:
        import confluent_kafka

        self.kafka = confluent_kafka
        self.pid = pid
        self.config = {**config, "log_level": 0}

    def setup(self, times: int) -> dict[str, Any]:
        ms = []
        cpu = cpu_seconds(self.pid)
        for _ in range(times):
            began = time.perf_counter()
            producer = self.kafka.Producer(self.config)
            producer.list_topics(TOPIC, timeout=30)
            ms.append((time.perf_counter() - began) * 1000)
            del producer
        return {"ms": ms, "cpu_ms": (cpu_seconds(self.pid) - cpu) / times * 1000}

    def produce_sequential(self, seconds: float) -> dict[str, Any]:
        producer = self.kafka.Producer({**self.config, "acks": "all", "linger.ms": 0})
        producer.list_topics(TOPIC, timeout=30)
        value = b"x" * 100
        ms = []
        cpu = cpu_seconds(self.pid)
        began = time.perf_counter()
        end = began + seconds
        while (t := time.perf_counter()) < end:
            producer.produce(TOPIC, value, partition=0)
            producer.flush(30)
            ms.append((time.perf_counter() - t) * 1000)
        elapsed = time.perf_counter() - began
        return {"rate": len(ms) / elapsed, "ms": ms,
                "cpu_us": (cpu_seconds(self.pid) - cpu) / len(ms) * 1e6}

    def produce_bulk(self, records: int) -> dict[str, Any]:
        producer = self.kafka.Producer({**self.config, "linger.ms": 5,
                                        "queue.buffering.max.messages": records + 1000})
        producer.list_topics(TOPIC, timeout=30)
        value = b"x" * 100
        began = time.perf_counter()
        for i in range(records):
            producer.produce(TOPIC, value, partition=1)
            if i % 10000 == 9999:
                producer.poll(0)
        assert producer.flush(60) == 0
        return {"rate": records / (time.perf_counter() - began)}

    def consume(self, records: int) -> dict[str, Any]:
        k = self.kafka
        consumer = k.Consumer({**self.config, "group.id": "unused", "enable.auto.commit": False})
        high = consumer.get_watermark_offsets(k.TopicPartition(TOPIC, 1), timeout=30)[1]
        start = max(0, high - records)
        consumer.assign([k.TopicPartition(TOPIC, 1, start)])
        got = 0
        began = time.perf_counter()
        while got < high - start:
            got += sum(1 for m in consumer.consume(1000, 5) if m.error() is None)
            if time.perf_counter() - began > 120:
                raise RuntimeError(f"consumed {got} of {high - start}")
        rate = got / (time.perf_counter() - began)
        consumer.close()
        return {"rate": rate}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--client-connects", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--records", type=int, default=50000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coordinator", "serve", "--data-dir", tmp,
             "--log-level", "warning", "--topic", f"{TOPIC}:2", "-c",
             "listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
             "--sasl-user", f"{USER}:{PASSWORD}"],
            stdout=subprocess.PIPE, text=True, cwd=REPO)
        try:
            assert proc.stdout is not None
            ports = {}
            for _ in range(2):
                line = proc.stdout.readline().split()
                ports[line[-1].strip("()")] = int(line[-2].rsplit(":", 1)[1])
            time.sleep(1.0)  # fully loaded
            ca = os.path.join(tmp, "tls", "ca.pem")
            context = ssl.create_default_context(cafile=ca)

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

            raws = {"PLAINTEXT": Raw(proc.pid, opener("PLAINTEXT", None)),
                    "SASL_SSL PLAIN": Raw(proc.pid, opener("SASL_SSL", plain_client)),
                    "SASL_SSL SCRAM-SHA-512": Raw(proc.pid, opener(
                        "SASL_SSL", scram_client("SCRAM-SHA-512")))}
            clients = {
                "PLAINTEXT": Client(proc.pid, {
                    "bootstrap.servers": f"127.0.0.1:{ports['PLAINTEXT']}"}),
                "SASL_SSL SCRAM-SHA-512": Client(proc.pid, {
                    "bootstrap.servers": f"localhost:{ports['SASL_SSL']}",
                    "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": USER, "sasl.password": PASSWORD,
                    "ssl.ca.location": ca}),
            }
            steps: list[tuple[str, str, Callable[[], dict[str, Any]]]] = []
            for name, raw in raws.items():
                steps.append(("raw connect", name, lambda r=raw: r.connect(args.connections)))
                steps.append(("raw ping-pong", name, lambda r=raw: r.ping_pong(args.requests)))
            for name, client in clients.items():
                steps += [
                    ("client set-up", name, lambda c=client: c.setup(args.client_connects)),
                    ("client produce sequential", name,
                     lambda c=client: c.produce_sequential(args.seconds)),
                    ("client produce bulk", name, lambda c=client: c.produce_bulk(args.records)),
                    ("client consume", name, lambda c=client: c.consume(args.records)),
                ]
            results: dict[tuple[str, str], list[dict[str, Any]]] = {}
            rounds = []
            for round_no in range(args.repeats):
                loads = [os.getloadavg()[0]]
                began = time.strftime("%H:%M:%S", time.gmtime())
                # Listeners alternate within each row; which goes first alternates by round.
                ordered = []
                for row in dict.fromkeys(s[0] for s in steps):
                    same = [s for s in steps if s[0] == row]
                    ordered += same if round_no % 2 == 0 else same[::-1]
                for row, name, step in ordered:
                    results.setdefault((row, name), []).append(step())
                    loads.append(os.getloadavg()[0])
                rounds.append((began, time.strftime("%H:%M:%S", time.gmtime()),
                               min(loads), max(loads)))
                print(f"# round {round_no + 1}: {rounds[-1][0]}-{rounds[-1][1]} UTC, "
                      f"load average {rounds[-1][2]:.1f}-{rounds[-1][3]:.1f}", flush=True)
            peak = peak_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(15)
    print()
    print("| row | listener | median (rounds' range) | p50 / p99 ms | server CPU | "
          "vs PLAINTEXT |")
    print("|---|---|---:|---:|---:|---:|")
    base: dict[str, float] = {}
    for (row, name), runs in results.items():
        if "connect" in row or "set-up" in row:
            per = [statistics.median(r["ms"]) for r in runs]
            value = f"{statistics.median(per):.2f} ms ({min(per):.2f}-{max(per):.2f})"
            all_ms = [ms for r in runs for ms in r["ms"]]
            cpu = f"{statistics.median(r['cpu_ms'] for r in runs):.2f} ms/conn"
            key = statistics.median(per)
        else:
            per = [r["rate"] for r in runs]
            unit = "req/s" if "ping" in row else "records/s"
            value = f"{statistics.median(per):,.0f} {unit} ({min(per):,.0f}-{max(per):,.0f})"
            all_ms = [ms for r in runs for ms in r.get("ms", [])]
            cpu = (f"{statistics.median(r['cpu_us'] for r in runs):.1f} µs/req"
                   if "cpu_us" in runs[0] else "")
            key = statistics.median(per)
        latency = f"{pct(all_ms, 0.5):.2f} / {pct(all_ms, 0.99):.2f}" if all_ms else ""
        if name == "PLAINTEXT":
            base[row] = key
            versus = "1.00x"
        else:
            versus = f"{key / base[row]:.2f}x" if row in base else ""
        print(f"| {row} | {name} | {value} | {latency} | {cpu} | {versus} |")
    print(f"\nkcoord peak RSS (VmHWM) after every row: {peak:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
