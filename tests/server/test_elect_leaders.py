"""ElectLeaders (key 43) over raw frames on the multi-broker model: a preferred election
gives a failed-over partition back to its first replica (epoch bumped, Metadata agrees,
cluster.json keeps it), ELECTION_NOT_NEEDED / PREFERRED_LEADER_NOT_AVAILABLE /
ELIGIBLE_LEADERS_NOT_AVAILABLE / UNKNOWN_TOPIC_OR_PARTITION with Kafka's messages, the
all-partitions form listing only partitions that needed an election, and an unknown
election type. Named after ControllerApisTest / ReplicationControlManagerTest cases."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from wire import ErrorCode

pytestmark = pytest.mark.trio

ELECT_LEADERS = 43
METADATA = 3
ZERO_UUID = uuid.UUID(int=0)


def elect(election_type: int = 0, **topics: list[int]) -> dict[str, Any]:
    return {"election_type": election_type, "timeout_ms": 10000,
            "topic_partitions": [{"topic": t, "partitions": p} for t, p in topics.items()]}


def everything(election_type: int = 0) -> dict[str, Any]:
    return {"election_type": election_type, "timeout_ms": 10000, "topic_partitions": None}


def outcome(answer: Any) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.topic, p.partition_id): (p.error_code, p.error_message)
            for t in answer.replica_election_results for p in t.partition_result}


async def leader_of(client: Any, topic: str, partition: int) -> tuple[int, int]:
    answer = await client.request(METADATA, 12, {
        "topics": [{"name": topic, "topic_id": ZERO_UUID}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})
    p = answer.topics[0].partitions[partition]
    return p.leader_id, p.leader_epoch


NOT_NEEDED = (ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")


async def test_elect_preferred_leaders(start_server: Any, connect: Any) -> None:
    running = await start_server({"default.replication.factor": "2"}, brokers=3,
                                 topics=(("t", 3),))
    client = await connect(running.brokers.ports[2])
    assert outcome(await client.request(ELECT_LEADERS, 2, elect(t=[0, 1]))) == {
        ("t", 0): NOT_NEEDED, ("t", 1): NOT_NEEDED}
    await running.brokers.stop(0)
    assert await leader_of(client, "t", 0) == (1, 1)
    # The preferred replica is stopped.
    assert outcome(await client.request(ELECT_LEADERS, 1, elect(t=[0]))) == {
        ("t", 0): (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                   "The preferred leader was not available.")}
    await running.brokers.start(0)
    assert await leader_of(client, "t", 0) == (1, 1)  # not taken back by itself
    answer = await client.request(ELECT_LEADERS, 2, elect(t=[0, 2]))
    assert answer.error_code == ErrorCode.NONE
    assert outcome(answer) == {("t", 0): (ErrorCode.NONE, None), ("t", 2): NOT_NEEDED}
    assert await leader_of(client, "t", 0) == (0, 2)
    assert running.brokers.cluster.state()["leaders"] == [["t", 0, 0, 2]]


async def test_elect_leaders_for_all_partitions_lists_only_elections_made(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({"default.replication.factor": "2"}, brokers=3,
                                 topics=(("a", 3), ("b", 1)))
    client = await connect(running.brokers.ports[2])
    assert (await client.request(ELECT_LEADERS, 2, everything())).replica_election_results == []
    await running.brokers.stop(1)
    await running.brokers.start(1)
    # Partition a-1 (replicas 1, 2) failed over to 2; the sweep gives it back to 1.
    assert outcome(await client.request(ELECT_LEADERS, 2, everything())) == {
        ("a", 1): (ErrorCode.NONE, None)}
    assert await leader_of(client, "a", 1) == (1, 2)


async def test_elect_leaders_unknown_topic_and_partition(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    answer = await client.request(ELECT_LEADERS, 1, elect(t=[0, 5], missing=[0],
                                                          __consumer_offsets=[0]))
    assert outcome(answer) == {
        ("t", 0): NOT_NEEDED,  # one broker leads everything as the only replica
        ("t", 5): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-5"),
        ("missing", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as missing"),
        ("__consumer_offsets", 0): NOT_NEEDED}
    v0 = await client.request(ELECT_LEADERS, 0, elect(t=[0]))
    assert outcome(v0) == {("t", 0): NOT_NEEDED}


async def test_elect_unclean_leaders(start_server: Any, connect: Any) -> None:
    running = await start_server({}, brokers=2, topics=(("t", 2),))
    client = await connect(running.brokers.ports[1])
    await running.brokers.stop(0)
    # Replication factor 1: t-0 lived on broker 0 alone and is offline; t-1 has its leader.
    assert outcome(await client.request(ELECT_LEADERS, 2, elect(1, t=[0, 1]))) == {
        ("t", 0): (ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                   "Eligible topic partition leaders are not available."),
        ("t", 1): NOT_NEEDED}


async def test_elect_leaders_unknown_election_type(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    answer = await client.request(ELECT_LEADERS, 2, elect(7, t=[0]))
    assert answer.error_code == ErrorCode.INVALID_REQUEST
    assert outcome(answer) == {("t", 0): (ErrorCode.INVALID_REQUEST, "Unknown election type 7")}
