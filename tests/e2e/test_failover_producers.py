"""Failover beyond classic groups (issue 13), with confluent-kafka against three brokers in
one kcoord: an acks=all idempotent producer keeps producing through its partition leader's
stop with no acknowledged record lost or duplicated; a KIP-848 consumer group and a
transactional producer keep working when their coordinators' broker stops."""

from __future__ import annotations

import time
from typing import Any

import pytest
from e2e_support import exact_cover, wait_until

from coordinator.testing.double import KcoordServer
from coordinator.txn.placement import partition_for

confluent_kafka = pytest.importorskip("confluent_kafka")

CONFIG = {
    "group.min.session.timeout.ms": "1000",
    "default.replication.factor": "3",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "3000",
}
TIMEOUT_S = 60.0


@pytest.fixture
def cluster(tmp_path: Any) -> Any:
    server = KcoordServer(CONFIG, data_dir=str(tmp_path / "data"), brokers=3,
                          topics={"t": 3, "out": 3})
    server.start()
    try:
        yield server
    finally:
        server.close()


def key_on(node: int, prefix: str) -> str:
    return next(k for k in (f"{prefix}-{i}" for i in range(1000))
                if partition_for(k, 50) % 3 == node)


def read_all(server: KcoordServer, topic: str, expected: int,
             isolation: str = "read_uncommitted") -> list[bytes]:
    """Every record of ``topic`` (assigned, not subscribed), until ``expected`` arrived."""
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": ",".join(server.bootstraps), "group.id": "reader",
        "enable.auto.commit": False, "isolation.level": isolation,
    })
    consumer.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                     for p in range(3)])
    values: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while len(values) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
        end = time.monotonic() + 1.0  # anything beyond ``expected`` would show up now
        while time.monotonic() < end:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def test_acks_all_producer_loses_nothing_through_a_leader_stop(cluster: KcoordServer) -> None:
    producer = confluent_kafka.Producer({
        "bootstrap.servers": ",".join(cluster.bootstraps), "acks": "all",
        "enable.idempotence": True, "linger.ms": 2,
        "topic.metadata.refresh.interval.ms": 1000,
    })
    acked: list[bytes] = []
    failed: list[Any] = []

    def delivered(error: Any, message: Any) -> None:
        (failed if error is not None else acked).append(error or message.value())

    total = 3000
    for i in range(total):
        producer.produce("t", value=f"v{i}".encode(), partition=i % 3, on_delivery=delivered)
        if i == total // 3:
            assert producer.flush(30) == 0
            cluster.stop_broker(1)  # the leader of partition 1
        producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    assert failed == []
    assert len(acked) == total
    values = read_all(cluster, "t", total)
    assert sorted(values) == sorted(acked)  # every acknowledged record, once


def test_consumer_protocol_group_survives_its_coordinators_stop(
    cluster: KcoordServer,
) -> None:
    group_id = key_on(1, "kip848")
    assigned: dict[str, set[int]] = {}
    seen: list[bytes] = []

    def consumer(name: str) -> Any:
        c = confluent_kafka.Consumer({
            "bootstrap.servers": ",".join(cluster.bootstraps), "group.id": group_id,
            "group.protocol": "consumer", "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        })
        assigned[name] = set()
        c.subscribe(["t"],
                    on_assign=lambda _, ps: assigned[name].update(p.partition for p in ps),
                    on_revoke=lambda _, ps: assigned[name].difference_update(
                        p.partition for p in ps))
        return c

    consumers = {name: consumer(name) for name in "ab"}
    producer = confluent_kafka.Producer({"bootstrap.servers": ",".join(cluster.bootstraps)})

    def produce(first: int, count: int) -> None:
        for i in range(first, first + count):
            producer.produce("t", value=f"k{i}".encode(), partition=i % 3)
        assert producer.flush(30) == 0

    def caught_up(count: int) -> bool:
        for c in consumers.values():
            message = c.poll(0.05)
            if message is not None and message.error() is None:
                seen.append(message.value())
                c.commit(message, asynchronous=False)
        return (len(set(seen)) == count and exact_cover(assigned.values(), {0, 1, 2})
                and sum(cluster.committed(group_id).values()) == count)

    try:
        produce(0, 150)
        wait_until(lambda: caught_up(150), TIMEOUT_S, 0, "the group consuming 150 records")
        before = cluster.describe_group(group_id)
        assert before is not None and before["type"] == "consumer"
        cluster.stop_broker(1)
        assert cluster.coordinator_of(group_id) == 2
        produce(150, 90)
        wait_until(lambda: caught_up(240), TIMEOUT_S, 0, "the group consuming after the stop")
        after = cluster.describe_group(group_id)
        assert after is not None
        # Reloaded from its records: same group epoch, same members, no new assignment.
        assert after["generation_id"] == before["generation_id"]
        assert {m["member_id"] for m in after["members"]} == {
            m["member_id"] for m in before["members"]}
        assert len(seen) == len(set(seen))
    finally:
        for c in consumers.values():
            c.close()


def test_transactions_commit_across_their_coordinators_stop(cluster: KcoordServer) -> None:
    """Records produced and offsets staged before the stop, more records after it: the
    commit reaches the new coordinator, and read_committed sees all of it."""
    txn_id = key_on(2, "txn")
    group_id = key_on(2, "txn-group")
    producer = confluent_kafka.Producer({
        "bootstrap.servers": ",".join(cluster.bootstraps), "transactional.id": txn_id,
    })
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(10):
        producer.produce("out", value=f"a{i}".encode(), partition=i % 3)
    assert producer.flush(30) == 0
    offsets = [confluent_kafka.TopicPartition("t", 0, 7)]
    producer.send_offsets_to_transaction(offsets, _group_metadata(cluster, group_id), 30)
    staged = [t for t in cluster.describe_transactions() if t["transactional_id"] == txn_id]
    assert staged[0]["staged_offsets"] == {group_id: [["t", 0, 7]]}
    cluster.stop_broker(2)  # the transaction's and the group's coordinator
    for i in range(10, 20):
        producer.produce("out", value=f"a{i}".encode(), partition=i % 3)
    producer.commit_transaction(30)  # the staged offsets moved with the group
    producer.begin_transaction()
    producer.produce("out", value=b"aborted", partition=0)
    assert producer.flush(30) == 0
    producer.abort_transaction(30)
    values = read_all(cluster, "out", 20, isolation="read_committed")
    assert sorted(values) == sorted(f"a{i}".encode() for i in range(20))
    assert cluster.committed(group_id) == {("t", 0): 7}
    described = cluster.describe_transactions()
    (state,) = [t for t in described if t["transactional_id"] == txn_id]
    assert state["state"] == "CompleteAbort"


def _group_metadata(cluster: KcoordServer, group_id: str) -> Any:
    """A consumer's group metadata for ``send_offsets_to_transaction`` (an admin-style
    commit: the consumer itself need not be in the group)."""
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": ",".join(cluster.bootstraps), "group.id": group_id,
    })
    try:
        return consumer.consumer_group_metadata()
    finally:
        consumer.close()
