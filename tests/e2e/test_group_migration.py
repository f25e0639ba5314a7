"""Online migration between the classic and consumer group protocols (KIP-848) with real
clients over TCP: a kafka-python (classic protocol, ``consumer`` protocol type, range /
roundrobin / sticky in its JoinGroup metadata) group consumes a topic; a confluent-kafka
consumer with ``group.protocol=consumer`` joins the same group, which becomes a consumer
group sharing the partitions between both; when the confluent consumer leaves, the group is
classic again and kafka-python gets every partition back. Every record is consumed exactly
once, with commits."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import exact_cover, wait_until
from kp_support import ConsumerThread, produce

confluent_kafka = pytest.importorskip("confluent_kafka")
confluent_admin = pytest.importorskip("confluent_kafka.admin")

TOPIC = "mig6"
PARTITIONS = frozenset(range(6))
GROUP = "gmig"
SERVER = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "3000",
}


def _group_type(bootstrap: str) -> Any:
    admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_consumer_groups([GROUP]).values()
    return future.result(timeout=10).type


def test_classic_group_upgrades_to_consumer_group_and_back(start_kcoord: Any) -> None:
    server = start_kcoord(topics=[f"{TOPIC}:6"], config=SERVER)
    bootstrap = server.bootstrap
    first = produce(bootstrap, TOPIC, 60, prefix="a")
    classic = ConsumerThread(bootstrap, GROUP, TOPIC, max_poll_interval_ms=20_000)
    classic.start()
    modern = None
    modern_seen: list[bytes] = []
    modern_assigned: set[int] = set()
    try:
        def classic_read(values: list[bytes]) -> bool:
            with classic.lock:
                return set(values) <= {v for _, _, v in classic.records}

        wait_until(lambda: classic.assignment == PARTITIONS and classic_read(first), 30,
                   what="kafka-python owning every partition and reading the first batch")
        assert _group_type(bootstrap) == confluent_kafka.ConsumerGroupType.CLASSIC

        # A consumer-protocol member joins: the group is upgraded and shared.
        modern = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": GROUP, "group.protocol": "consumer",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
        })

        def on_assign(_: Any, parts: list[Any]) -> None:
            modern_assigned.update(p.partition for p in parts)

        def on_revoke(_: Any, parts: list[Any]) -> None:
            modern_assigned.difference_update(p.partition for p in parts)

        modern.subscribe([TOPIC], on_assign=on_assign, on_revoke=on_revoke)

        def poll_modern() -> None:
            message = modern.poll(0.05)
            if message is not None and not message.error():
                modern_seen.append(message.value())
                modern.commit(message, asynchronous=False)

        def shared() -> bool:
            poll_modern()
            return bool(modern_assigned) and bool(classic.assignment) and exact_cover(
                [modern_assigned, classic.assignment], set(PARTITIONS))

        wait_until(shared, 30, interval=0, what="the partitions shared by both protocols")
        assert _group_type(bootstrap) == confluent_kafka.ConsumerGroupType.CONSUMER
        second = produce(bootstrap, TOPIC, 60, prefix="b")

        def second_read() -> bool:
            poll_modern()
            with classic.lock:
                seen = {v for _, _, v in classic.records} | set(modern_seen)
            return set(second) <= seen

        wait_until(second_read, 30, interval=0, what="the second batch read by both")
        assert modern_seen, "the consumer-protocol member read nothing"

        # The consumer-protocol member leaves: the group is classic again.
        modern.close()
        modern = None
        wait_until(lambda: classic.assignment == PARTITIONS, 30,
                   what="kafka-python owning every partition again")
        assert _group_type(bootstrap) == confluent_kafka.ConsumerGroupType.CLASSIC
        third = produce(bootstrap, TOPIC, 60, prefix="c")
        wait_until(lambda: classic_read(third), 30, what="the third batch")
    finally:
        if modern is not None:
            modern.close()
        classic.stop()

    consumed = [v for _, _, v in classic.records] + modern_seen
    assert sorted(consumed) == sorted(first + second + third)  # each record exactly once
    checker = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                                        "enable.auto.commit": False})
    try:
        committed = checker.committed(
            [confluent_kafka.TopicPartition(TOPIC, p) for p in sorted(PARTITIONS)], timeout=10)
    finally:
        checker.close()
    assert sum(tp.offset for tp in committed) == 180
