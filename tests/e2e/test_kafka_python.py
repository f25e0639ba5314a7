"""kafka-python (the heart of conformance) against a real ``kcoord serve``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import KcoordProcess
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kp_support import ConsumerThread, produce, wait_for

ALL12 = frozenset(range(12))


def covered(consumers: list[ConsumerThread], expected: frozenset[int] = ALL12) -> bool:
    owned = [p for c in consumers for p in c.assignment]
    balanced = all(c.assignment for c in consumers)  # every member got its share
    return balanced and len(owned) == len(set(owned)) and set(owned) == expected


def stably_covered(consumers: list[ConsumerThread], timeout: float, what: str) -> float:
    """Wait until the consumers cover every partition exactly once, for 0.5 s running."""
    start = time.monotonic()
    while True:
        try:
            wait_for(lambda: covered(consumers), timeout - (time.monotonic() - start), what)
        except AssertionError as exc:
            state = [(sorted(c.assignment), c.generation, c.member_id, c.error) for c in consumers]
            raise AssertionError(f"{exc}; consumers: {state}") from None
        took = time.monotonic() - start
        settled = time.monotonic() + 0.5
        while time.monotonic() < settled and covered(consumers):
            time.sleep(0.05)
        if covered(consumers):
            return took


@pytest.fixture
def consumers() -> Iterator[list[ConsumerThread]]:
    started: list[ConsumerThread] = []
    yield started
    for c in started:
        if c.is_alive():
            c._stop_event.set()
            c.join(10)


def start_consumer(registry: list[ConsumerThread], *args: Any, **kwargs: Any) -> ConsumerThread:
    consumer = ConsumerThread(*args, **kwargs)
    registry.append(consumer)
    consumer.start()
    return consumer


def admin(kcoord: KcoordProcess) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=kcoord.bootstrap, request_timeout_ms=10_000)


def test_three_consumers_consume_every_message_exactly_once(
    kcoord: KcoordProcess, consumers: list[ConsumerThread]
) -> None:
    group = [start_consumer(consumers, kcoord.bootstrap, "exactly-once", "t12") for _ in range(3)]
    stably_covered(group, 30, "3 consumers to share 12 partitions")
    assert all(len(c.assignment) == 4 for c in group)
    values = produce(kcoord.bootstrap, "t12", 600)
    wait_for(lambda: sum(len(c.records) for c in group) >= 600, 30, "600 messages consumed")
    time.sleep(0.3)  # anything extra (a duplicate) would arrive now
    consumed = [r for c in group for r in c.records]
    assert sorted(v for _, _, v in consumed) == sorted(values)
    assert len({(p, o) for p, o, _ in consumed}) == 600
    for c in group:  # each consumer only saw its own partitions
        assert {p for p, _, _ in c.records} <= c.assignment
    assert all(c.commit_failures == 0 for c in group)
    for c in group:
        c.stop()
    client = admin(kcoord)
    try:
        offsets = client.list_group_offsets({"exactly-once": None})["exactly-once"]
        ends = {}
        for p, o, _ in consumed:
            ends[p] = max(ends.get(p, -1), o + 1)
        assert {tp.partition: om.offset for tp, om in offsets.items()} == ends
    finally:
        client.close()


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_join_leave_and_crash_rebalances_keep_exact_coverage(
    kcoord: KcoordProcess, consumers: list[ConsumerThread], tmp_path: Path
) -> None:
    a = start_consumer(consumers, kcoord.bootstrap, "churn", "t12")
    stably_covered([a], 20, "one consumer owning everything")
    b = start_consumer(consumers, kcoord.bootstrap, "churn", "t12")
    stably_covered([a, b], 20, "a joining consumer")
    # A crash: a consumer in another process, SIGKILLed (no LeaveGroup, sockets reset).
    proc = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("kp_consumer_proc.py")),
            kcoord.bootstrap,
            "churn",
            "t12",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        latest: dict[str, Any] = {}

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                latest.update(json.loads(line))

        threading.Thread(target=read, daemon=True).start()

        def three_way() -> bool:
            crashed = frozenset(latest.get("assignment", ()))
            owned = [*a.assignment, *b.assignment, *crashed]
            return len(owned) == 12 and set(owned) == ALL12 and bool(crashed)

        wait_for(three_way, 30, "the third (crashable) consumer to get partitions")
        proc.kill()
        crash_took = stably_covered([a, b], 30, "survivors to take over after a crash")
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    # session.timeout.ms is 6 s: detection within it, rebalance right after.
    assert crash_took <= 6 + 6, crash_took
    # A graceful leave: the survivor takes everything at once (no session timeout).
    b.stop(close=True)
    leave_took = stably_covered([a], 20, "the last consumer to own everything after a leave")
    assert leave_took < 5, leave_took


def test_static_member_restart_keeps_assignment_without_rebalance(
    kcoord: KcoordProcess, consumers: list[ConsumerThread]
) -> None:
    static = {"session_timeout_ms": 10_000}
    a = start_consumer(
        consumers, kcoord.bootstrap, "static", "t12", group_instance_id="a", **static
    )
    b = start_consumer(
        consumers, kcoord.bootstrap, "static", "t12", group_instance_id="b", **static
    )
    stably_covered([a, b], 30, "two static members sharing the topic")
    generation, owned_b, member_b = a.generation, b.assignment, b.member_id
    b.stop(close=True)  # static members send no LeaveGroup on close
    b2 = start_consumer(
        consumers, kcoord.bootstrap, "static", "t12", group_instance_id="b", **static
    )
    wait_for(lambda: b2.assignment == owned_b, 10, "the restarted static member's assignment")
    assert b2.generation == generation == a.generation  # no rebalance happened
    assert b2.member_id != member_b  # a new member id for the same instance
    assert a.assignment | b2.assignment == ALL12


def test_cooperative_sticky_assignor(
    kcoord: KcoordProcess, consumers: list[ConsumerThread]
) -> None:
    coop = {"partition_assignment_strategy": [CooperativeStickyAssignor]}
    a = start_consumer(consumers, kcoord.bootstrap, "coop", "t12", **coop)
    stably_covered([a], 20, "the first cooperative consumer")
    b = start_consumer(consumers, kcoord.bootstrap, "coop", "t12", **coop)
    stably_covered([a, b], 30, "cooperative rebalance to two consumers")
    assert len(a.assignment) == len(b.assignment) == 6
    c = start_consumer(consumers, kcoord.bootstrap, "coop", "t12", **coop)
    before_a, before_b = a.assignment, b.assignment
    stably_covered([a, b, c], 30, "cooperative rebalance to three consumers")
    # Sticky: A and B only gave partitions away.
    assert a.assignment <= before_a and b.assignment <= before_b
    client = admin(kcoord)
    try:
        described = client.describe_groups(["coop"])["coop"]
        assert described["protocol_data"] == "cooperative-sticky"
    finally:
        client.close()


def test_admin_list_describe_offsets_delete(
    kcoord: KcoordProcess, consumers: list[ConsumerThread]
) -> None:
    produce(kcoord.bootstrap, "t12", 24)
    a = start_consumer(consumers, kcoord.bootstrap, "admin-g", "t12")
    stably_covered([a], 20, "the consumer of admin-g")
    wait_for(lambda: len(a.records) >= 24, 20, "24 messages")
    client = admin(kcoord)
    try:
        groups = {g["group_id"]: g for g in client.list_groups()}
        assert groups["admin-g"]["protocol_type"] == "consumer"
        described = client.describe_groups(["admin-g"])["admin-g"]
        assert described["group_state"] == "Stable"
        assert len(described["members"]) == 1
        wait_for(
            lambda: (
                sum(
                    om.offset
                    for om in client.list_group_offsets({"admin-g": None})["admin-g"].values()
                )
                == 24
            ),
            10,
            "commits of all 24 messages",
        )
        # A group with members cannot be deleted.
        assert client.delete_groups(["admin-g"]) == {"admin-g": "NonEmptyGroupError"}
        a.stop(close=True)
        wait_for(
            lambda: client.describe_groups(["admin-g"])["admin-g"]["group_state"] == "Empty",
            10,
            "the group to become Empty",
        )
        result = client.delete_group_offsets("admin-g", [TopicPartition("t12", 0)])
        assert result[TopicPartition("t12", 0)].__name__ == "NoError"
        assert (
            TopicPartition("t12", 0) not in client.list_group_offsets({"admin-g": None})["admin-g"]
        )
        assert client.delete_groups(["admin-g"]) == {"admin-g": "OK"}
        assert "admin-g" not in {g["group_id"] for g in client.list_groups()}
    finally:
        client.close()


def test_committed_offsets_survive_a_server_restart(start_kcoord: Any, tmp_path: Path) -> None:
    data = tmp_path / "persistent"
    server = start_kcoord(data_dir=data, topics=["t12:12"])
    port = server.port
    consumer = KafkaConsumer(
        bootstrap_servers=server.bootstrap,
        group_id="durable",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    try:
        partitions = [TopicPartition("t12", p) for p in range(12)]
        # Commits without consuming (the topic data itself lives in memory only).
        from kafka.structs import OffsetAndMetadata

        consumer.commit(
            {tp: OffsetAndMetadata(100 + tp.partition, "meta", -1) for tp in partitions}
        )
    finally:
        consumer.close()
    assert server.stop() == 0
    restarted = start_kcoord(data_dir=data, topics=["t12:12"], port=port)
    client = admin(restarted)
    try:
        offsets = client.list_group_offsets({"durable": None})["durable"]
        assert {tp.partition: (om.offset, om.metadata) for tp, om in offsets.items()} == {
            p: (100 + p, "meta") for p in range(12)
        }
    finally:
        client.close()
