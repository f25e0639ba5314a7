"""Share groups (KIP-932) against consumer groups: the same records, the same client library.

    python tests/benchmarks/bench_share.py [--records 50000] [--consumers 1,4,16]
        [--repeats 3] [--size 100] [--modes share,share-sync,classic,consumer,...]

confluent-kafka (librdkafka) consumers, one Python thread each, all in this process, against
one kcoord subprocess started afresh for every run (``--fsync interval``, the default; the
share group's heartbeat interval 500 ms and ``group.initial.rebalance.delay.ms=0``, so
groups form quickly). ``--records`` records of ``--size`` bytes are produced first; then the
consumers start together and read until every record has arrived once.

Modes (one row each per consumer count):

* ``share``: ``ShareConsumer`` on a topic of **one** partition, ``share.auto.offset.reset``
  earliest (IncrementalAlterConfigs on the GROUP resource through the AdminClient), implicit
  acknowledgement: each poll's records are accepted by the next ShareFetch;
* ``share-sync``: the same, with ``commit_sync()`` after every poll (a ShareAcknowledge
  round trip): its wall time is the acknowledgement latency (p50/p99);
* ``classic`` / ``consumer``: ``Consumer`` with ``group.protocol`` classic / consumer on a
  topic of **16** partitions, ``auto.offset.reset`` earliest, ``consume(500)`` batches,
  auto-commit (the default, every 5 s);
* ``classic-sync`` / ``consumer-sync``: the same with ``commit(asynchronous=False)`` after
  every batch: the OffsetCommit latency, beside ``share-sync``'s.

Per row: records/s from the consumers' start (subscribed, group not yet formed) to the last
new record, the time to the first record, records/s from the first record to the last
(for consumer groups this mostly drains librdkafka's prefetch queue, so it is not the
broker's rate), the ack/commit latency
(sync modes), the server's CPU per record (``/proc``, from the consumers' start to the last
record), its peak RSS (VmHWM), and how many records arrived twice (share: a record whose
lock expired or that was released -- in brackets, how many share deliveries had a delivery
count above 1; groups: re-reads after a rebalance). Implicit-mode share consumers
``commit_sync()`` before ``close()``: ``close()`` alone releases the records of their last
poll (as Kafka's broker does at a final-epoch ShareAcknowledge without acknowledgements),
and a consumer still polling would count them twice. Medians over the
repeats; rows alternate within each round, their order rotating, so the machine's other
load weighs on all alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka
from bench_brokers import REPO, Broker, free_port
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

SHARE_TOPIC = "share-bench"
GROUP_TOPIC = "group-bench"
GROUP_PARTITIONS = 16
MODES = ["share", "share-sync", "classic", "consumer", "classic-sync", "consumer-sync"]
FAST = {
    "group.initial.rebalance.delay.ms": "0",
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}


def kcoord(data_dir: str) -> Broker:
    port = free_port()
    argv = [sys.executable, "-m", "coordinator", "serve", "--port", str(port),
            "--data-dir", data_dir, "--log-level", "warning",
            "--topic", f"{SHARE_TOPIC}:1", "--topic", f"{GROUP_TOPIC}:{GROUP_PARTITIONS}"]
    for key, value in FAST.items():
        argv += ["-c", f"{key}={value}"]
    return Broker("kcoord", argv, port)


def produce(bootstrap: str, topic: str, records: int, size: int) -> None:
    producer = confluent_kafka.Producer({
        "bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
        "queue.buffering.max.messages": records + 1000, "log_level": 0})
    value = b"x" * size
    partitions = 1 if topic == SHARE_TOPIC else GROUP_PARTITIONS
    for i in range(records):
        producer.produce(topic, value, partition=i % partitions)
        if i % 10000 == 9999:
            producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError("records not delivered")


def share_earliest(bootstrap: str, group: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest",
                    incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


@dataclass
class Tally:
    """What the consumer threads saw, under one lock."""

    target: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: set[tuple[int, int]] = field(default_factory=set)
    duplicates: int = 0
    first_at: dict[int, float] = field(default_factory=dict)  # consumer -> first record
    redelivered: int = 0  # share records with a delivery count above 1
    done_at: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)
    ack_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, who: int, batch: list[Any], consumers: int) -> None:
        now = time.perf_counter()
        with self.lock:
            if batch and who not in self.first_at:
                self.first_at[who] = now
            for message in batch:
                count = getattr(message, "delivery_count", None)
                if count is not None and (count() or 0) > 1:
                    self.redelivered += 1
                key = (message.partition(), message.offset())
                if key in self.seen:
                    self.duplicates += 1
                else:
                    self.seen.add(key)
            if len(self.seen) >= self.target and not self.done.is_set():
                self.done_at = now
                self.done.set()


def run_consumer(mode: str, who: int, bootstrap: str, group: str, tally: Tally,
                 consumers: int, started: threading.Barrier) -> None:
    sync = mode.endswith("-sync")
    try:
        if mode.startswith("share"):
            consumer: Any = confluent_kafka.ShareConsumer({
                "bootstrap.servers": bootstrap, "group.id": group, "log_level": 0})
            consumer.subscribe([SHARE_TOPIC])
        else:
            consumer = confluent_kafka.Consumer({
                "bootstrap.servers": bootstrap, "group.id": group, "log_level": 0,
                "group.protocol": mode.removesuffix("-sync"),
                "auto.offset.reset": "earliest", "enable.auto.commit": not sync,
                **({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
                   if mode.startswith("classic") else {})})
            consumer.subscribe([GROUP_TOPIC])
        started.wait(60)
        while not tally.done.is_set():
            if mode.startswith("share"):
                batch = [m for m in consumer.poll(0.2) or [] if m.error() is None]
            else:
                batch = [m for m in consumer.consume(500, 0.2) if m.error() is None]
            tally.add(who, batch, consumers)
            if sync and batch:
                began = time.perf_counter()
                if mode.startswith("share"):
                    consumer.commit_sync()
                else:
                    consumer.commit(asynchronous=False)
                with tally.lock:
                    tally.ack_ms.append((time.perf_counter() - began) * 1000)
        if mode == "share":
            # Implicit acknowledgement accepts a poll's records at the next poll or commit;
            # close() alone releases them (KafkaShareConsumer's contract: the final-epoch
            # ShareAcknowledge carries no acknowledgements), and the consumers still polling
            # would get them again: a second delivery the run did not cause.
            consumer.commit_sync()
        consumer.close()
    except Exception as exc:  # reported, and the run ends
        tally.errors.append(f"{mode} consumer {who}: {exc!r}")
        tally.done.set()


@dataclass
class Result:
    rate: float
    drain_rate: float
    redelivered: int
    first_s: float
    cpu_us_per_record: float
    peak_mib: float
    duplicates: int
    ack_ms: list[float]


def one_run(mode: str, consumers: int, records: int, size: int, tmp: str,
            timeout: float) -> Result:
    broker = kcoord(os.path.join(tmp, f"d{time.monotonic_ns()}"))
    broker.start()
    try:
        bootstrap = f"127.0.0.1:{broker.port}"
        group = f"bench-{mode}-{consumers}"
        if mode.startswith("share"):
            share_earliest(bootstrap, group)
        produce(bootstrap, SHARE_TOPIC if mode.startswith("share") else GROUP_TOPIC,
                records, size)
        tally = Tally(records)
        started = threading.Barrier(consumers + 1)
        threads = [threading.Thread(target=run_consumer, daemon=True,
                                    args=(mode, i, bootstrap, group, tally, consumers, started))
                   for i in range(consumers)]
        for thread in threads:
            thread.start()
        started.wait(60)
        cpu0 = broker.cpu_seconds()
        began = time.perf_counter()
        if not tally.done.wait(timeout):
            raise RuntimeError(f"{mode} x{consumers}: {len(tally.seen)} of {records} records "
                               f"after {timeout} s")
        cpu = broker.cpu_seconds() - cpu0
        for thread in threads:
            thread.join(30)
        if tally.errors:
            raise RuntimeError("; ".join(tally.errors))
        first = min(tally.first_at.values())
        return Result(
            rate=records / (tally.done_at - began),
            drain_rate=records / (tally.done_at - first) if tally.done_at > first else float("nan"),
            redelivered=tally.redelivered,
            first_s=first - began,
            cpu_us_per_record=cpu / records * 1e6,
            peak_mib=broker.memory_mib()["VmHWM"],
            duplicates=tally.duplicates,
            ack_ms=tally.ack_ms,
        )
    finally:
        broker.stop()


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--consumers", default="1,4,16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    counts = [int(c) for c in args.consumers.split(",")]
    modes = args.modes.split(",")
    rows = [(mode, n) for n in counts for mode in modes]
    print(f"# confluent-kafka {confluent_kafka.version()[0]} (librdkafka "
          f"{confluent_kafka.libversion()[0]}); {args.records} records of {args.size} B; "
          f"{args.repeats} rounds; kcoord from {REPO}")
    results: dict[tuple[str, int], list[Result]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-share-") as tmp:
        for round_no in range(args.repeats):
            shift = round_no % len(rows)
            loads = [os.getloadavg()[0]]
            began = time.strftime("%H:%M:%S", time.gmtime())
            for mode, n in rows[shift:] + rows[:shift]:
                result = one_run(mode, n, args.records, args.size, tmp, args.timeout)
                results.setdefault((mode, n), []).append(result)
                loads.append(os.getloadavg()[0])
                print(f"#   {mode} x{n}: {result.rate:,.0f} records/s, first after "
                      f"{result.first_s:.2f} s, {result.duplicates} twice", flush=True)
            print(f"# round {round_no + 1}: {began}-{time.strftime('%H:%M:%S', time.gmtime())}"
                  f" UTC, load average {min(loads):.1f}-{max(loads):.1f}", flush=True)
    print()
    print("| mode | consumers | records/s, start to last | first record after | "
          "records/s, first to last | ack/commit p50/p99 ms | server CPU µs/record | "
          "kcoord peak RSS | read twice (redelivered) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, n in rows:
        runs = results[(mode, n)]
        acks = [ms for r in runs for ms in r.ack_ms]
        print(f"| {mode} | {n} | {statistics.median(r.rate for r in runs):,.0f} | "
              f"{statistics.median(r.first_s for r in runs):.2f} s | "
              f"{statistics.median(r.drain_rate for r in runs):,.0f} | "
              + (f"{percentile(acks, 0.5):.2f}/{percentile(acks, 0.99):.2f}" if acks else "-")
              + f" | {statistics.median(r.cpu_us_per_record for r in runs):.1f} | "
              f"{max(r.peak_mib for r in runs):.1f} MiB | "
              f"{statistics.median(r.duplicates for r in runs):.0f} "
              f"({statistics.median(r.redelivered for r in runs):.0f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
