"""DescribeTopicPartitions (key 75, KIP-966) over raw frames: Kafka's paging by
response_partition_limit and cursor, unknown and illegal topic names, the cursor's topic
missing from the named topics, internal topics, and a leaderless partition of the
multi-broker model (leader -1, error NONE). Names after KafkaApisTest's
testDescribeTopicPartitions* cases where they apply."""

from __future__ import annotations

from typing import Any

import pytest

from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE_TOPIC_PARTITIONS = 75
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))


def body(*names: str, limit: int = 2000, cursor: tuple[str, int] | None = None) -> dict[str, Any]:
    return {"topics": [{"name": n} for n in names], "response_partition_limit": limit,
            "cursor": None if cursor is None else {"topic_name": cursor[0],
                                                   "partition_index": cursor[1]}}


def pages(got: Any) -> list[tuple[str, list[int]]]:
    return [(t.name, [p.partition_index for p in t.partitions]) for t in got.topics]


def cursor_of(got: Any) -> tuple[str, int] | None:
    c = got.next_cursor
    return None if c is None else (c.topic_name, c.partition_index)


async def test_describe_topic_partitions_request(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("a", 2), ("b", 3)))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("b", "a"))
    assert pages(got) == [("a", [0, 1]), ("b", [0, 1, 2])] and got.next_cursor is None
    first = got.topics[0]
    assert first.error_code == ErrorCode.NONE and not first.is_internal
    assert first.topic_authorized_operations == TOPIC_OPERATIONS
    p = first.partitions[0]
    assert (p.error_code, p.leader_id, list(p.replica_nodes), list(p.isr_nodes),
            list(p.offline_replicas), list(p.eligible_leader_replicas),
            list(p.last_known_elr)) == (0, 0, [0], [0], [], [], [])
    metadata = await client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    assert {t.name: t.topic_id for t in metadata.topics}["a"] == first.topic_id


async def test_describe_topic_partitions_request_with_unknown_and_illegal_topics(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, topics=(("a", 1),))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("a", "missing", "bad/name"))
    by_name = {t.name: t for t in got.topics}
    assert by_name["missing"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert by_name["bad/name"].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert list(by_name["missing"].partitions) == [] and by_name["missing"].topic_id.int == 0
    assert by_name["a"].error_code == ErrorCode.NONE
    # Not created by asking (Metadata would auto-create; this API never does).
    again = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("missing"))
    assert again.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_describe_topic_partitions_request_with_edge_cases(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, topics=(("a", 3), ("b", 2), ("c", 1)))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("a", "b", "c", limit=4))
    assert pages(got) == [("a", [0, 1, 2]), ("b", [0])] and cursor_of(got) == ("b", 1)
    rest = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0,
                                body("a", "b", "c", limit=4, cursor=("b", 1)))
    assert pages(rest) == [("b", [1]), ("c", [0])] and rest.next_cursor is None
    # The limit reached exactly at a topic's end: the cursor names the next topic's start.
    exact = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("a", "b", limit=3))
    assert pages(exact) == [("a", [0, 1, 2])] and cursor_of(exact) == ("b", 0)
    # Every topic, paged one partition at a time, covers each partition once, in order.
    seen: list[tuple[str, int]] = []
    cursor: tuple[str, int] | None = ("a", 0)  # the internal topics sort first
    for _ in range(20):
        page = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body(limit=1, cursor=cursor))
        seen.extend((name, i) for name, indexes in pages(page) for i in indexes)
        cursor = cursor_of(page)
        if cursor is None:
            break
    assert seen[:6] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("c", 0)]


async def test_describe_topic_partitions_cursor_topic_must_be_requested(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, topics=(("a", 1), ("b", 1)))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("a", cursor=("b", 0)))
    assert [(t.name, t.error_code) for t in got.topics] == [("a", ErrorCode.INVALID_REQUEST)]


async def test_describe_topic_partitions_all_topics_include_internal(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({"offsets.topic.num.partitions": "3",
                                  "transaction.state.log.num.partitions": "2"},
                                 topics=(("a", 1),))
    client = await connect(running.port)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body())
    assert pages(got) == [("__consumer_offsets", [0, 1, 2]), ("__transaction_state", [0, 1]),
                          ("a", [0])]
    assert [t.is_internal for t in got.topics] == [True, True, False]


async def test_describe_topic_partitions_leaderless_partition(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, brokers=2, topics=(("a", 2),))
    client = await connect(running.brokers.ports[1])
    await running.brokers.stop(0)
    got = await client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body("a"))
    p0, p1 = got.topics[0].partitions
    # Replication factor 1: partition 0 lived on broker 0 alone.
    assert (p0.error_code, p0.leader_id, list(p0.offline_replicas)) == (0, -1, [0])
    assert p0.leader_epoch == 1 and list(p0.isr_nodes) == []
    assert (p1.error_code, p1.leader_id, p1.leader_epoch) == (0, 1, 0)
