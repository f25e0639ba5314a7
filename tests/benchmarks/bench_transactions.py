"""Transactions (issue 12): kcoord beside Tansu in the same run, with real confluent-kafka
clients.

    python tests/benchmarks/bench_transactions.py [--seconds 5] [--repeats 3]
        [--fetch-records 100000] [--restart-records 1000000]

Rows:

* transactions/s from 1 and from 8 producers (one thread each, its own transactional id),
  each transaction 10 records and an offset commit (``send_offsets_to_transaction``), with
  p50/p99 of a transaction's begin-to-committed time;
* the cost of read_committed against read_uncommitted Fetch: a consumer reading
  ``--fetch-records`` committed transactional records (in transactions of 100, every tenth
  aborted) from the start, records/s for each isolation level;
* kcoord's restart with ``--restart-records`` stored records: spawn to the first
  ListOffsets that answers the restored high watermark (Tansu's memory storage keeps
  nothing, so it has no such row);
* peak RSS (VmHWM) of each broker at the end of its rows.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_brokers import Broker, kcoord_broker, negotiate, tansu_binary, tansu_broker
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from wire import decode_response, encode_request

TOPICS = (("txn-in", 8), ("txn-out", 8), ("txn-read", 1), ("restart", 8))


def create_topics(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, p, 1) for n, p in TOPICS]).values():
        try:
            future.result(30)
        except Exception as exc:  # already there (kcoord's --topic)
            if "already exists" not in str(exc).lower() and "TOPIC_ALREADY_EXISTS" not in str(
                exc
            ):
                raise


def transactions(bootstrap: str, producers: int, seconds: float) -> tuple[float, float, float]:
    """(transactions/s, p50 ms, p99 ms) of ``producers`` threads over ``seconds``."""
    latencies: list[list[float]] = [[] for _ in range(producers)]
    metadata = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-eos"})
    group = metadata.consumer_group_metadata()
    ready = threading.Barrier(producers + 1)
    stop = threading.Event()

    def run(index: int) -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0,
                             "transactional.id": f"bench-{producers}-{index}-{time.time_ns()}"})
        producer.init_transactions(30)
        ready.wait()
        offset = 0
        while not stop.is_set():
            began = time.perf_counter()
            producer.begin_transaction()
            for _ in range(10):
                producer.produce("txn-out", value=b"x" * 100, partition=index % 8)
            offset += 10
            producer.send_offsets_to_transaction(
                [TopicPartition("txn-in", index % 8, offset)], group, 30)
            producer.commit_transaction(30)
            latencies[index].append(time.perf_counter() - began)
        producer.flush(10)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(producers)]
    for thread in threads:
        thread.start()
    ready.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(60)
    elapsed = time.perf_counter() - began
    metadata.close()
    every = sorted(x for per in latencies for x in per)
    count = len(every)
    p99 = every[min(count - 1, count * 99 // 100)]
    return count / elapsed, every[count // 2] * 1000, p99 * 1000


def fill_for_reads(bootstrap: str, records: int) -> int:
    """Transactions of 100 records on ``txn-read``, every tenth aborted; committed count."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                         "transactional.id": f"bench-fill-{time.time_ns()}"})
    producer.init_transactions(30)
    committed = 0
    n = 0
    while committed < records:
        producer.begin_transaction()
        for _ in range(100):
            producer.produce("txn-read", value=b"y" * 100, partition=0)
        if n % 10 == 9:
            producer.flush(30)
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            committed += 100
        n += 1
    return committed


def read_rate(bootstrap: str, isolation: str, want: int) -> float:
    """Records/s a consumer reads from the start of ``txn-read`` until ``want`` records."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{time.time_ns()}",
                         "isolation.level": isolation, "enable.auto.commit": False,
                         "fetch.max.bytes": 8 << 20})
    consumer.assign([TopicPartition("txn-read", 0, 0)])
    got = 0
    began = time.perf_counter()
    deadline = began + 300
    while got < want and time.perf_counter() < deadline:
        got += sum(1 for m in consumer.consume(10_000, 0.5) if not m.error())
    elapsed = time.perf_counter() - began
    consumer.close()
    if got < want:
        raise RuntimeError(f"{isolation}: {got} of {want} records")
    return got / elapsed


def vm_hwm_mib(broker: Broker) -> float:
    assert broker.proc is not None
    for line in Path(f"/proc/{broker.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def high_watermark(port: int, versions: dict[int, int]) -> int | None:
    """ListOffsets latest of restart-0, or None while not served."""
    import socket

    version = min(versions.get(2, 5), 7)
    body = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "restart", "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(encode_request(2, version, 1, "bench", body))
            data = b""
            while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return None
                data += chunk
        _, response = decode_response(2, version, data[4:])
    except OSError:
        return None
    partition = response.topics[0].partitions[0]
    return int(partition.offset) if partition.error_code == 0 else None


def restart_rows(records: int) -> dict[str, float]:
    """kcoord with ``records`` stored: spawn to the restored high watermark answered."""
    data_dir = tempfile.mkdtemp(prefix="kcoord-bench-restart-")
    try:
        broker = kcoord_broker(data_dir, "never")
        broker.start()
        bootstrap = f"127.0.0.1:{broker.port}"
        create_topics(bootstrap)
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20,
                             "batch.num.messages": 10_000, "queue.buffering.max.messages": 1 << 20})
        for i in range(records):
            while True:
                try:
                    producer.produce("restart", value=b"z" * 50, partition=i % 8)
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(120) == 0
        versions = negotiate(broker.port)
        expected = high_watermark(broker.port, versions)
        broker.stop()
        began = time.perf_counter()
        broker.start()
        while high_watermark(broker.port, versions) != expected:
            if time.perf_counter() - began > 120:
                raise RuntimeError("the restored high watermark was never answered")
            time.sleep(0.002)
        loaded = time.perf_counter() - began
        hwm = vm_hwm_mib(broker)
        broker.stop()
        return {"restart_s": loaded, "restart_hwm_mib": hwm, "partition0_hwm": float(expected or 0)}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def broker_rows(broker: Broker, args: argparse.Namespace) -> dict[str, Any]:
    broker.start()
    try:
        bootstrap = f"127.0.0.1:{broker.port}"
        create_topics(bootstrap)
        out: dict[str, Any] = {}
        for producers in (1, 8):
            runs = [transactions(bootstrap, producers, args.seconds) for _ in range(args.repeats)]
            out[f"txn_{producers}"] = (
                statistics.median(r[0] for r in runs),
                statistics.median(r[1] for r in runs),
                statistics.median(r[2] for r in runs),
            )
        committed = fill_for_reads(bootstrap, args.fetch_records)
        for isolation in ("read_uncommitted", "read_committed"):
            out[isolation] = statistics.median(
                read_rate(bootstrap, isolation, committed) for _ in range(args.repeats))
        out["vm_hwm_mib"] = vm_hwm_mib(broker)
        return out
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fetch-records", type=int, default=100_000)
    parser.add_argument("--restart-records", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {time.strftime('%Y-%m-%d')}")
    results: dict[str, dict[str, Any]] = {}
    data_dir = tempfile.mkdtemp(prefix="kcoord-bench-txn-")
    try:
        brokers = [kcoord_broker(data_dir, "interval")]
        binary = tansu_binary()
        if binary is not None:
            brokers.append(tansu_broker(binary))
        for broker in brokers:
            try:
                results[broker.name] = broker_rows(broker, args)
            except Exception as exc:
                print(f"{broker.name}: failed: {exc!r}")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    kcoord, tansu = results.get("kcoord", {}), results.get("tansu", {})
    print("| row | kcoord | Tansu | kcoord/Tansu |")
    print("|---|---:|---:|---:|")
    for producers in (1, 8):
        key = f"txn_{producers}"
        k, t = kcoord.get(key), tansu.get(key)
        ks = f"{k[0]:,.0f} ({k[1]:.1f}/{k[2]:.1f})" if k else "-"
        ts = f"{t[0]:,.0f} ({t[1]:.1f}/{t[2]:.1f})" if t else "-"
        ratio = f"{k[0] / t[0]:.2f}x" if k and t else "-"
        print(f"| transactions/s, {producers} producer(s), p50/p99 ms | {ks} | {ts} | {ratio} |")
    for isolation in ("read_uncommitted", "read_committed"):
        k, t = kcoord.get(isolation), tansu.get(isolation)
        ratio = f"{k / t:.2f}x" if k and t else "-"
        print(f"| {isolation} records/s | {k or 0:,.0f} | {t or 0:,.0f} | {ratio} |")
    print(f"| peak RSS (VmHWM) MiB | {kcoord.get('vm_hwm_mib', 0):.0f} | "
          f"{tansu.get('vm_hwm_mib', 0):.0f} | - |")
    if args.restart_records:
        restart = restart_rows(args.restart_records)
        print(f"| restart with {args.restart_records:,} records: spawn to restored high "
              f"watermark | {restart['restart_s']:.2f} s (VmHWM {restart['restart_hwm_mib']:.0f}"
              f" MiB) | - | - |")


if __name__ == "__main__":
    main()
