"""Topic compaction with a real client over TCP (issue 30 item 2): confluent-kafka produces
keys to a ``cleanup.policy=compact`` topic with small segments, the log cleaner (every
100 ms here) cleans the closed segments, and a consumer reading from the beginning sees
only the latest value of each key, at the offsets the producer was acknowledged, with
gaps, offsets only ever rising, the earliest offset still 0 -- and the same after SIGKILL
and a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_support import wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

KEYS, ROUNDS, FILLER = 40, 10, 60


def produce(bootstrap: str) -> dict[bytes, tuple[int, bytes]]:
    """Every key ROUNDS times, then FILLER unique keys (they roll the final round out of
    the active segment); each key's latest (offset, value) as acknowledged."""
    latest: dict[bytes, tuple[int, bytes]] = {}
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0,
                                         "acks": "all"})

    def delivered(err: Any, message: Any) -> None:
        assert err is None, err
        latest[message.key()] = (message.offset(), message.value())

    for round_ in range(ROUNDS):
        for key in range(KEYS):
            producer.produce("compacted", key=b"k%d" % key, value=b"v%d-%d" % (key, round_),
                             on_delivery=delivered)
        producer.flush(30)
    for i in range(FILLER):
        producer.produce("compacted", key=b"f%d" % i, value=b"x" * 50, on_delivery=delivered)
        producer.flush(30)
    return latest


def consume_all(bootstrap: str, end: int) -> list[tuple[int, bytes, bytes]]:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
        "auto.offset.reset": "earliest"})
    partition = confluent_kafka.TopicPartition("compacted", 0, 0)
    consumer.assign([partition])
    got: list[tuple[int, bytes, bytes]] = []
    try:
        def done() -> bool:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                got.append((message.offset(), message.key(), message.value()))
            return bool(got) and got[-1][0] >= end - 1
        wait_until(done, timeout=30, interval=0, what="the log end")
        low, high = consumer.get_watermark_offsets(partition, timeout=10)
        assert (low, high) == (0, end)  # ListOffsets earliest unchanged by cleaning
    finally:
        consumer.close()
    return got


def check(got: list[tuple[int, bytes, bytes]], latest: dict[bytes, tuple[int, bytes]]) -> None:
    offsets = [o for o, _, _ in got]
    assert offsets == sorted(set(offsets))  # never backwards, never twice
    assert {key: (offset, value) for offset, key, value in got} == latest
    assert len(got) == len(latest)  # only the latest value of each key is left


def test_a_compacted_topic_keeps_the_latest_value_per_key(start_kcoord: Any,
                                                          tmp_path: Path) -> None:
    config = {"log.cleaner.backoff.ms": "100"}
    server = start_kcoord(data_dir=tmp_path / "data", config=config)
    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    futures = admin.create_topics([NewTopic("compacted", 1, 1, config={
        "cleanup.policy": "compact", "segment.bytes": "2048",
        "min.cleanable.dirty.ratio": "0.01"})])
    futures["compacted"].result(30)
    latest = produce(server.bootstrap)
    end = KEYS * ROUNDS + FILLER
    # every record before the final round of keys is cleaned away (bounded wait)
    first_final = min(offset for key, (offset, _) in latest.items() if key.startswith(b"k"))

    def cleaned() -> bool:
        got = consume_all(server.bootstrap, end)
        return all(offset >= first_final for offset, _, _ in got)

    wait_until(cleaned, timeout=60, interval=0.5, what="the cleaner to clean the topic")
    check(consume_all(server.bootstrap, end), latest)

    server.kill()
    again = start_kcoord(data_dir=tmp_path / "data", config=config)
    check(consume_all(again.bootstrap, end), latest)
