"""AlterPartitionReassignments (key 45) and ListPartitionReassignments (key 46) over raw
frames on the multi-broker model: a partition moved to other replicas at once (Metadata,
DescribeLogDirs and failover follow it; the leader gives way at the next epoch; cluster.json
keeps it across a restore), Kafka's INVALID_REPLICA_ASSIGNMENT / INVALID_REPLICATION_FACTOR
/ NO_REASSIGNMENT_IN_PROGRESS / UNKNOWN_TOPIC_OR_PARTITION with its messages, and List
finding nothing ongoing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from coordinator.server.cluster import Cluster
from wire import ErrorCode

pytestmark = pytest.mark.trio

ALTER = 45
LIST = 46
METADATA = 3
ZERO_UUID = uuid.UUID(int=0)


def alter(allow: bool = True, **topics: dict[int, list[int] | None]) -> dict[str, Any]:
    return {"timeout_ms": 10000, "allow_replication_factor_change": allow, "topics": [
        {"name": name, "partitions": [{"partition_index": i, "replicas": r}
                                      for i, r in parts.items()]}
        for name, parts in topics.items()]}


def outcome(answer: Any) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.name, p.partition_index): (p.error_code, p.error_message)
            for t in answer.responses for p in t.partitions}


async def partition_of(client: Any, topic: str, index: int) -> tuple[int, int, list[int]]:
    answer = await client.request(METADATA, 12, {
        "topics": [{"name": topic, "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})
    p = answer.topics[0].partitions[index]
    return p.leader_id, p.leader_epoch, list(p.replica_nodes)


async def test_alter_partition_reassignments_moves_replicas_at_once(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({"default.replication.factor": "2"}, brokers=3,
                                 topics=(("t", 3),))
    client = await connect(running.brokers.ports[2])
    assert await partition_of(client, "t", 0) == (0, 0, [0, 1])
    answer = await client.request(ALTER, 1, alter(t={0: [2, 1], 1: [1, 2]}))
    assert answer.error_code == ErrorCode.NONE and answer.error_message is None
    assert outcome(answer) == {("t", 0): (0, None), ("t", 1): (0, None)}
    # Leader 0 left out: the first new replica leads at the next epoch.
    assert await partition_of(client, "t", 0) == (2, 1, [2, 1])
    assert await partition_of(client, "t", 1) == (1, 0, [1, 2])  # unchanged
    # Broker 0 no longer holds t-0: of t's replicas ([2, 1], [1, 2], [2, 0]) only t-2.
    first = await connect(running.brokers.ports[0])
    log_dirs = await first.request(35, 4, {"topics": None})
    assert [(t.name, [p.partition_index for p in t.partitions])
            for t in log_dirs.results[0].topics] == [("t", [2])]
    await running.brokers.stop(2)
    client = await connect(running.brokers.ports[1])
    assert await partition_of(client, "t", 0) == (1, 2, [2, 1])
    listed = await client.request(LIST, 0, {"timeout_ms": 1000, "topics": None})
    assert (listed.error_code, list(listed.topics)) == (ErrorCode.NONE, [])
    state = running.brokers.cluster.state()
    assert state["assignments"] == [["t", 0, [2, 1]]]
    restored = Cluster(3, replication_factor=2)
    assert restored.restore(state) and restored.replicas(0, -1, "t") == [2, 1]


async def test_alter_partition_reassignments_errors(start_server: Any, connect: Any) -> None:
    running = await start_server({}, brokers=2, topics=(("t", 1),))
    client = await connect(running.brokers.ports[0])
    answer = await client.request(ALTER, 1, alter(
        False, t={0: [1, 0]}, missing={0: [0]}, __consumer_offsets={0: [1]}))
    assert outcome(answer) == {
        ("t", 0): (ErrorCode.INVALID_REPLICATION_FACTOR,
                   "The replication factor is changed from 1 to 2 but "
                   "allowReplicationFactorChange is false"),
        ("missing", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                         "This server does not host this topic-partition."),
        ("__consumer_offsets", 0): (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                    "The partitions of __consumer_offsets are led by their "
                                    "coordinators and cannot be reassigned.")}
    answer = await client.request(ALTER, 0, alter(t={0: [], 3: [0]}))
    assert outcome(answer) == {
        ("t", 0): (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                   "The manual partition assignment includes an empty replica list."),
        ("t", 3): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:3.")}
    for replicas, message in (
        ([0, 0], "The manual partition assignment includes the broker 0 more than once."),
        ([0, 5], "The manual partition assignment includes broker 5, but no such broker is "
                 "registered."),
    ):
        got = await client.request(ALTER, 1, alter(t={0: replicas}))
        assert outcome(got) == {("t", 0): (ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)}
    cancel = await client.request(ALTER, 1, alter(t={0: None}))
    assert outcome(cancel) == {("t", 0): (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                                          "No partition reassignment is in progress.")}
    assert await partition_of(client, "t", 0) == (0, 0, [0])  # nothing moved
    # Growing the replica set is allowed by default; the leader stays.
    grown = await client.request(ALTER, 1, alter(t={0: [0, 1]}))
    assert outcome(grown) == {("t", 0): (0, None)}
    assert await partition_of(client, "t", 0) == (0, 0, [0, 1])


async def test_list_partition_reassignments_names_unknown_partitions(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    listed = await client.request(LIST, 0, {"timeout_ms": 1000, "topics": [
        {"name": "t", "partition_indexes": [0, 9]}, {"name": "missing", "partition_indexes": [0]}]})
    assert (listed.error_code, list(listed.topics)) == (ErrorCode.NONE, [])
    same = await client.request(ALTER, 1, alter(t={0: [0]}))
    assert outcome(same) == {("t", 0): (0, None)}
