"""CreatePartitions (issue 12): a topic grows, with Kafka's controller errors; the new count
is persisted and a restart keeps it; Produce, Fetch and Metadata see the new partitions."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_support import VERSIONS, FakeState, call, make_batch
from test_topic_files import close, open_store, produce

from coordinator.broker.topics import TopicStore
from wire import ErrorCode

API = 37


def grow(name: str, count: int, assignments: list[list[int]] | None = None) -> dict:  # type: ignore[type-arg]
    return {"name": name, "count": count,
            "assignments": None if assignments is None else [
                {"broker_ids": ids} for ids in assignments]}


async def create_partitions(state: FakeState, version: int, *topics: dict,  # type: ignore[type-arg]
                            validate_only: bool = False) -> dict[str, tuple[int, str | None]]:
    answer = await call(state, API, version, {"topics": list(topics), "timeout_ms": 5_000,
                                               "validate_only": validate_only})
    assert answer is not None
    return {r.name: (r.error_code, r.error_message) for r in answer.results}


@pytest.mark.parametrize("version", VERSIONS[API])
async def test_a_topic_grows(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 2)
    before = state.topics.version
    assert await create_partitions(state, version, grow("t", 5)) == {"t": (0, None)}
    topic = state.topics.get("t")
    assert topic is not None and [p.index for p in topic.partitions] == [0, 1, 2, 3, 4]
    assert state.topics.version > before  # the consumer protocol's topics image follows
    assert produce(state.topics, "t", 4, make_batch([b"new"])) == 0


async def test_kafka_errors(state: FakeState) -> None:
    state.topics.create_topic("t", 3)
    answers = await create_partitions(
        state, 3, grow("t", 3), grow("missing", 4), grow("dup", 2), grow("dup", 3))
    assert answers["t"] == (ErrorCode.INVALID_PARTITIONS, "Topic already has 3 partition(s).")
    assert answers["missing"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert answers["dup"] == (ErrorCode.INVALID_REQUEST, "Duplicate topic in request.")
    shrink = await create_partitions(state, 3, grow("t", 2))
    assert shrink["t"][0] == ErrorCode.INVALID_PARTITIONS
    huge = await create_partitions(state, 3, grow("t", 2**31 - 1))
    assert huge["t"][0] == ErrorCode.INVALID_PARTITIONS
    topic = state.topics.get("t")
    assert topic is not None and len(topic.partitions) == 3


async def test_manual_assignments_are_checked(state: FakeState) -> None:
    state.topics.create_topic("t", 1)
    node = state.identity.node_id
    too_few = await create_partitions(state, 3, grow("t", 3, [[node]]))
    assert too_few["t"][0] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    unknown_broker = await create_partitions(state, 3, grow("t", 2, [[node + 7]]))
    assert unknown_broker["t"][0] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    two_replicas = await create_partitions(state, 3, grow("t", 2, [[node, node]]))
    assert two_replicas["t"][0] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert await create_partitions(state, 3, grow("t", 3, [[node], [node]])) == {"t": (0, None)}


async def test_validate_only_changes_nothing(state: FakeState) -> None:
    state.topics.create_topic("t", 1)
    assert await create_partitions(state, 3, grow("t", 4), validate_only=True) == {
        "t": (0, None)}
    topic = state.topics.get("t")
    assert topic is not None and len(topic.partitions) == 1


async def test_the_new_count_survives_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a"]))
    state = FakeState(topics=store)
    assert await create_partitions(state, 3, grow("t", 3)) == {"t": (0, None)}
    produce(store, "t", 2, make_batch([b"c"]))
    close(store)

    again: TopicStore = open_store(tmp_path)
    topic = again.get("t")
    assert topic is not None
    assert [p.high_watermark for p in topic.partitions] == [1, 0, 1]
    close(again)
