"""Produce with durable topics (issue 12): kcoord writing every batch to its data directory
(``--fsync never`` and the default ``interval``) against kcoord keeping topics in memory
(``--topic-storage memory``), beside Tansu (memory storage), in the same run.

    python tests/benchmarks/bench_produce.py [--seconds 3] [--repeats 3]

Rows: one batch of 10 records of 100 bytes per request (acks=1, no producer id), on one
connection sequentially, and over 8 connections, each 1 request in flight; median req/s
over the repeats with p50/p99 latency. The target: ``never`` within 10% of memory.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
import warnings
from typing import Any

from bench_brokers import (
    PARTITIONS,
    TOPIC,
    Broker,
    kcoord_broker,
    negotiate,
    tansu_binary,
    tansu_broker,
)
from bench_load import create_topic, drive

from wire import decode_response, encode_request

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder


def produce_frame(versions: dict[int, int]) -> tuple[bytes, Any]:
    version = min(versions[0], 9)
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 16)
    for i in range(10):
        builder.append(i, timestamp=int(time.time() * 1000), key=None, value=b"v" * 100,
                       headers=[])
    frame = encode_request(0, version, 1, "bench", {
        "transactional_id": None, "acks": 1, "timeout_ms": 5000,
        "topic_data": [{"name": TOPIC, "partition_data": [
            {"index": 0, "records": bytes(builder.build())}]}]})

    def ok(payload: bytes) -> bool:
        _, body = decode_response(0, version, payload)
        return bool(body.responses[0].partition_responses[0].error_code == 0)

    return frame, ok


def rows(broker: Broker, seconds: float, repeats: int) -> dict[str, Any]:
    broker.start()
    try:
        versions = negotiate(broker.port)
        if broker.name == "tansu":
            create_topic(broker.port, versions)
        frame, ok = produce_frame(versions)
        out = {}
        for name, connections in (("sequential", 1), ("8 connections", 8)):
            runs = [drive(broker.port, frame, connections=connections, inflight=1,
                          seconds=seconds, check=ok) for _ in range(repeats)]
            assert all(r.errors == 0 for r in runs), f"{broker.name}: produce errors"
            out[name] = (statistics.median(r.rate for r in runs),
                         statistics.median(r.p50_ms for r in runs),
                         statistics.median(r.p99_ms for r in runs))
        return out
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; {PARTITIONS}-partition topic, batches to partition 0")
    dirs = [tempfile.mkdtemp(prefix="kcoord-bench-produce-") for _ in range(3)]
    try:
        memory = kcoord_broker(dirs[0], "never")
        memory.name = "kcoord memory"
        memory.argv += ["--topic-storage", "memory"]
        never = kcoord_broker(dirs[1], "never")
        never.name = "kcoord disk, never"
        interval = kcoord_broker(dirs[2], "interval")
        interval.name = "kcoord disk, interval"
        brokers = [memory, never, interval]
        binary = tansu_binary()
        if binary is not None:
            brokers.append(tansu_broker(binary))
        results = {b.name: rows(b, args.seconds, args.repeats) for b in brokers}
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    base = results["kcoord memory"]
    print("| broker | sequential req/s (p50/p99 ms) | 8 connections req/s (p50/p99 ms) | "
          "vs kcoord memory |")
    print("|---|---:|---:|---:|")
    for name, got in results.items():
        cells = [f"{got[r][0]:,.0f} ({got[r][1]:.2f}/{got[r][2]:.2f})"
                 for r in ("sequential", "8 connections")]
        ratio = " / ".join(f"{got[r][0] / base[r][0]:.2f}x"
                           for r in ("sequential", "8 connections"))
        print(f"| {name} | {cells[0]} | {cells[1]} | {ratio} |")


if __name__ == "__main__":
    main()
