"""Coordinator failover (issue 13): time from stopping the group coordinator's broker to the
group serving again, with real clients against ``kcoord serve --brokers 3``.

    python tests/benchmarks/bench_failover.py [--repeats 5]

For kafka-python and confluent-kafka, at default client settings and at test settings
(session 6 s, heartbeat 0.5 s), two consumers in a group consume a topic (6 partitions,
3 replicas) that a producer keeps writing to, committing after every poll. Then
``POST /brokers/{coordinator}/stop`` goes to the control API; the row's time runs from that
request to the moment every member has committed successfully again (a commit needs the
member found at the new coordinator under its generation, so the group serves again). The
broker is started again and the group moved back before the next repeat. Medians and p99
(over the repeats) per row, the number of rebalances the failovers caused (Kafka causes
none), and kcoord's peak RSS (VmHWM).

Tansu runs one node and librdkafka's mock cluster cannot stop brokers from Python, so no
peer runs beside kcoord here: the rows are kcoord's alone.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_brokers import REPO, free_port

from coordinator.txn.placement import partition_for

PARTITIONS = 6
TEST_SETTINGS = {"session_ms": 6000, "heartbeat_ms": 500}


class Cluster:
    """``kcoord serve --brokers 3`` with its control API."""

    def __init__(self, data_dir: str) -> None:
        self.port = free_port()
        self.control = free_port()
        argv = [sys.executable, "-m", "coordinator", "serve", "--brokers", "3",
                "--port", "0", "--data-dir", data_dir, "--control-port", str(self.control),
                "--log-level", "warning", "--topic", f"fo:{PARTITIONS}",
                "-c", "group.initial.rebalance.delay.ms=0",
                "-c", "default.replication.factor=3"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, cwd=REPO)
        assert self.proc.stdout is not None
        lines = [self.proc.stdout.readline().strip() for _ in range(4)]
        self.bootstraps = [line.rsplit(" ", 1)[1] for line in lines[:3]]

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.control}{path}", data=data, method=method,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def peak_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(15)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Member(threading.Thread):
    """One consumer polling and committing in its own thread; the time of its last
    successful commit."""

    def __init__(self, make: Callable[[], Any], poll: Callable[[Any], bool],
                 close: Callable[[Any], None]) -> None:
        super().__init__(daemon=True)
        self.make, self.poll, self.close = make, poll, close
        self.last_commit = 0.0
        self.halt = threading.Event()

    def run(self) -> None:
        consumer = self.make()
        while not self.halt.is_set():
            try:
                if self.poll(consumer):
                    self.last_commit = time.perf_counter()
            except Exception:  # a failed commit during the failover: poll again
                continue
        self.close(consumer)


def kafka_python_member(bootstrap: list[str], group: str, settings: dict[str, int]) -> Member:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from kafka import KafkaConsumer

    extra = ({"session_timeout_ms": settings["session_ms"],
              "heartbeat_interval_ms": settings["heartbeat_ms"]} if settings else {})

    def make() -> Any:
        return KafkaConsumer("fo", bootstrap_servers=bootstrap, group_id=group,
                             enable_auto_commit=False, auto_offset_reset="earliest", **extra)

    def poll(consumer: Any) -> bool:
        # Long polls (records keep arriving, so they return at once): kafka-python 3.0.12
        # loses a finished join when a short poll expires mid-join (tests/e2e/kp_support.py).
        batch = consumer.poll(timeout_ms=1000)
        if batch:
            consumer.commit()
            return True
        return False

    return Member(make, poll, lambda c: c.close())


def confluent_member(bootstrap: list[str], group: str, settings: dict[str, int]) -> Member:
    from confluent_kafka import Consumer

    extra = ({"session.timeout.ms": settings["session_ms"],
              "heartbeat.interval.ms": settings["heartbeat_ms"]} if settings else {})

    def make() -> Any:
        consumer = Consumer({"bootstrap.servers": ",".join(bootstrap), "group.id": group,
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "logger": _quiet_logger(), **extra})
        consumer.subscribe(["fo"])
        return consumer

    def poll(consumer: Any) -> bool:
        messages = [m for m in consumer.consume(50, 0.1) if m.error() is None]
        if messages:
            consumer.commit(asynchronous=False)
            return True
        return False

    return Member(make, poll, lambda c: c.close())


def _quiet_logger() -> Any:
    import logging

    logger = logging.getLogger("bench-failover-librdkafka")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def producing(bootstrap: list[str], halt: threading.Event) -> threading.Thread:
    from confluent_kafka import Producer

    def run() -> None:
        producer = Producer({"bootstrap.servers": ",".join(bootstrap), "linger.ms": 5,
                             "logger": _quiet_logger()})
        i = 0
        while not halt.is_set():
            producer.produce("fo", value=b"x" * 100, partition=i % PARTITIONS)
            producer.poll(0)
            i += 1
            time.sleep(0.001)
        producer.flush(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def committed_since(members: list[Member], moment: float) -> Callable[[], bool]:
    """Whether every member has committed successfully after ``moment``."""
    return lambda: all(m.last_commit > moment for m in members)


def wait(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the group did not serve again in time")
        time.sleep(0.002)


def row(client: str, settings: dict[str, int], repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-failover-") as data_dir:
        cluster = Cluster(data_dir)
        group = next(g for g in (f"fo-{i}" for i in range(1000))
                     if partition_for(g, 50) % 3 == 1)
        halt = threading.Event()
        producer = producing(cluster.bootstraps, halt)
        factory = kafka_python_member if client == "kafka-python" else confluent_member
        members = [factory(cluster.bootstraps, group, settings) for _ in range(2)]
        for member in members:
            member.start()
        times: list[float] = []
        rebalances = 0
        try:
            for _ in range(repeats):
                wait(lambda: all(m.last_commit > 0 for m in members), 120)
                wait(lambda: cluster.call("GET", f"/groups/{group}")["state"] == "Stable", 60)
                stable = cluster.call("GET", f"/groups/{group}")
                node = 1  # the group's coordinator (moved back to it after each repeat)
                began = time.perf_counter()
                cluster.call("POST", f"/brokers/{node}/stop")
                wait(committed_since(members, began), 120)
                times.append(time.perf_counter() - began)
                after = cluster.call("GET", f"/groups/{group}")
                rebalances += after["generation_id"] - stable["generation_id"]
                cluster.call("POST", f"/brokers/{node}/start")
                cluster.call("POST", f"/groups/{group}/coordinator", {"node_id": node})
                moved = time.perf_counter()
                wait(committed_since(members, moved), 120)
            rss = cluster.peak_rss_mib()
        finally:
            halt.set()
            for member in members:
                member.halt.set()
            for member in members:
                member.join(30)
            producer.join(30)
            cluster.stop()
    ordered = sorted(times)
    return {
        "client": client,
        "settings": "test" if settings else "default",
        "median_ms": statistics.median(times) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000,
        "rebalances": rebalances,
        "repeats": repeats,
        "peak_rss_mib": rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"# bench_failover on {platform.python_implementation()} "
          f"{platform.python_version()}, {args.repeats} failovers per row")
    print("| client | client settings | stop → serving median | p99 | rebalances | "
          "kcoord peak RSS |")
    print("|---|---|---|---|---|---|")
    for client in ("kafka-python", "confluent-kafka"):
        for settings in ({}, TEST_SETTINGS):
            r = row(client, settings, args.repeats)
            print(f"| {r['client']} | {r['settings']} | {r['median_ms']:.0f} ms | "
                  f"{r['p99_ms']:.0f} ms | {r['rebalances']} | {r['peak_rss_mib']:.0f} MiB |",
                  flush=True)


if __name__ == "__main__":
    main()
