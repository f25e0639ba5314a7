"""DescribeQuorum (key 55) over raw frames: a single-voter KRaft quorum led by the
controller, its high watermark following metadata changes, observers and the voter's
endpoint on the multi-broker model, and UNKNOWN_TOPIC_OR_PARTITION for anything but
``__cluster_metadata`` partition 0 (KafkaRaftClientTest's testDescribeQuorum* cases where
they apply)."""

from __future__ import annotations

from typing import Any

import pytest

from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE_QUORUM = 55
CREATE_TOPICS = 19


def ask(topic: str = "__cluster_metadata", *partitions: int) -> dict[str, Any]:
    return {"topics": [{"topic_name": topic,
                        "partitions": [{"partition_index": p} for p in partitions or (0,)]}]}


async def test_describe_quorum_with_single_voter(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("a", 1),))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_QUORUM, 2, ask())
    assert (got.error_code, got.error_message) == (ErrorCode.NONE, None)
    (topic,) = got.topics
    (partition,) = topic.partitions
    assert (topic.topic_name, partition.partition_index, partition.error_code) == (
        "__cluster_metadata", 0, ErrorCode.NONE)
    assert (partition.leader_id, partition.leader_epoch) == (0, 1)
    (voter,) = partition.current_voters
    assert voter.replica_id == 0 and voter.log_end_offset == partition.high_watermark
    assert voter.last_caught_up_timestamp == voter.last_fetch_timestamp > 0
    assert voter.replica_directory_id.int != 0
    assert list(partition.observers) == []
    (node,) = got.nodes
    assert [(lst.name, lst.port) for lst in node.listeners] == [("CONTROLLER", running.port)]
    created = await client.request(CREATE_TOPICS, 7, {"topics": [
        {"name": "b", "num_partitions": 1, "replication_factor": -1, "assignments": [],
         "configs": []}], "timeout_ms": 5000, "validate_only": False})
    assert created.topics[0].error_code == 0
    later = await client.request(DESCRIBE_QUORUM, 0, ask())
    assert later.topics[0].partitions[0].high_watermark > partition.high_watermark


async def test_describe_quorum_request_to_brokers(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, brokers=3)
    client = await connect(running.brokers.ports[2])
    partition = (await client.request(DESCRIBE_QUORUM, 1, ask())).topics[0].partitions[0]
    assert partition.leader_id == 0
    assert [v.replica_id for v in partition.current_voters] == [0]
    assert [o.replica_id for o in partition.observers] == [1, 2]
    await running.brokers.stop(0)
    moved = (await client.request(DESCRIBE_QUORUM, 2, ask()))
    assert moved.topics[0].partitions[0].leader_id == 1
    assert [o.replica_id for o in moved.topics[0].partitions[0].observers] == [2]
    assert moved.nodes[0].node_id == 1


@pytest.mark.parametrize("request_body", [
    ask("other"), ask("__cluster_metadata", 1), ask("__cluster_metadata", 0, 1),
    {"topics": []},
], ids=["other-topic", "partition-1", "two-partitions", "no-topic"])
async def test_describe_quorum_unknown_partition(
    start_server: Any, connect: Any, request_body: dict[str, Any]
) -> None:
    running = await start_server({})
    client = await connect(running.port)
    got = await client.request(DESCRIBE_QUORUM, 2, request_body)
    assert got.error_code == ErrorCode.NONE
    asked = [(t["topic_name"], p["partition_index"]) for t in request_body["topics"]
             for p in t["partitions"]]
    assert [(t.topic_name, p.partition_index, p.error_code, p.error_message)
            for t in got.topics for p in t.partitions] == [
        (name, index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
         "This server does not host this topic-partition.") for name, index in asked]
