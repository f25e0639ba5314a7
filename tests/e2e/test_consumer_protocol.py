"""confluent-kafka with ``group.protocol=consumer`` (KIP-848) against a real kcoord process:
a group forms through ConsumerGroupHeartbeat, consumes every record exactly once, commits,
and is described with the consumer type; the requested server assignor is honoured; a regex
subscription picks up a topic created later."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import StartKcoord
from e2e_support import exact_cover, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
confluent_admin = pytest.importorskip("confluent_kafka.admin")

# The minimums lowered the way Kafka's own test setups lower them.
FAST = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "3000",
}


def _consumer(bootstrap: str, group: str, assigned: dict[str, set[int]], name: str,
              topics: list[str], **extra: Any) -> Any:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
        "auto.offset.reset": "earliest", "enable.auto.commit": False, **extra,
    })
    assigned[name] = set()

    def on_assign(_: Any, parts: list[Any]) -> None:
        assigned[name].update(p.partition for p in parts)

    def on_revoke(_: Any, parts: list[Any]) -> None:
        assigned[name].difference_update(p.partition for p in parts)

    consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke)
    return consumer


def _produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=str(i).encode(), partition=i % partitions)
    assert producer.flush(20) == 0


def test_three_consumers_consume_every_record_once_and_commit(
    start_kcoord: StartKcoord,
) -> None:
    server = start_kcoord(topics=["t12:12"], config=FAST)
    bootstrap = server.bootstrap
    _produce(bootstrap, "t12", 240, 12)
    assigned: dict[str, set[int]] = {}
    seen: dict[bytes, list[str]] = {}
    consumers = {n: _consumer(bootstrap, "g848", assigned, n, ["t12"]) for n in "abc"}
    try:
        def poll_all() -> bool:
            for name, consumer in consumers.items():
                message = consumer.poll(0.05)
                if message is not None and not message.error():
                    seen.setdefault(message.value(), []).append(name)
                    consumer.commit(message, asynchronous=False)
            return len(seen) == 240 and exact_cover(assigned.values(), set(range(12)))

        wait_until(poll_all, timeout=30, interval=0)
        assert all(len(names) == 1 for names in seen.values())
        assert sorted(len(parts) for parts in assigned.values()) == [4, 4, 4]
        admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
        (future,) = admin.describe_consumer_groups(["g848"]).values()
        description = future.result(timeout=10)
        assert description.type == confluent_kafka.ConsumerGroupType.CONSUMER
        assert len(description.members) == 3
        committed = consumers["a"].committed(
            [confluent_kafka.TopicPartition("t12", p) for p in range(12)], timeout=10)
        assert sum(tp.offset for tp in committed) == 240
    finally:
        for consumer in consumers.values():
            consumer.close()


@pytest.mark.parametrize("assignor", ["range", "uniform"])
def test_remote_assignor_is_honoured(start_kcoord: StartKcoord, assignor: str) -> None:
    server = start_kcoord(topics=["r4:4"], config=FAST)
    assigned: dict[str, set[int]] = {}
    consumers = [
        _consumer(server.bootstrap, f"g-{assignor}", assigned, name, ["r4"],
                  **{"group.remote.assignor": assignor})
        for name in ("a", "b")
    ]
    try:
        def settled() -> bool:
            for consumer in consumers:
                consumer.poll(0.05)
            return exact_cover(assigned.values(), set(range(4)))

        wait_until(settled, timeout=30, interval=0)
        assert sorted(len(p) for p in assigned.values()) == [2, 2]
        admin = confluent_admin.AdminClient({"bootstrap.servers": server.bootstrap})
        (future,) = admin.describe_consumer_groups([f"g-{assignor}"]).values()
        description = future.result(timeout=10)
        assert description.partition_assignor == assignor
        if assignor == "range":  # contiguous ranges
            assert sorted(sorted(p) for p in assigned.values()) == [[0, 1], [2, 3]]
    finally:
        for consumer in consumers:
            consumer.close()


def test_regex_subscription_picks_up_a_topic_created_later(start_kcoord: StartKcoord) -> None:
    server = start_kcoord(topics=["ev-a:2"], config=FAST)
    bootstrap = server.bootstrap
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "g-regex", "group.protocol": "consumer",
        "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 500,
    })
    topics_seen: set[str] = set()
    consumer.subscribe(["^ev-.*"], on_assign=lambda _, parts: topics_seen.update(
        p.topic for p in parts))
    try:
        wait_until(lambda: consumer.poll(0.05) is None and "ev-a" in topics_seen, timeout=30,
                   interval=0)
        admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([confluent_admin.NewTopic("ev-b", 2)]).values():
            future.result(timeout=10)
        _produce(bootstrap, "ev-b", 4, 2)
        got: list[str] = []

        def consumed_from_new_topic() -> bool:
            message = consumer.poll(0.05)
            if message is not None and not message.error():
                got.append(message.topic())
            return "ev-b" in got

        wait_until(consumed_from_new_topic, timeout=30, interval=0)
        assert "ev-b" in topics_seen
    finally:
        consumer.close()
