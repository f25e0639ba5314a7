"""The cluster API handlers (issue 30 item 3) at every version they serve, on one broker
with topic ``t`` (2 partitions): each answer goes through the real codec and kio reads the
whole encoded response (``broker_support.call``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from broker_support import VERSIONS, FakeState, call

from coordinator.broker.topics import TopicStore
from wire import ErrorCode

pytestmark = pytest.mark.trio

NOT_NEEDED = ErrorCode.ELECTION_NOT_NEEDED


@pytest.fixture
def one_topic(store: TopicStore) -> FakeState:
    store.create_topic("t", 2)
    return FakeState(topics=store, groups=SimpleNamespace(now_ms=lambda: 1_700_000_000_000))


def codes(answer: Any, topics: str, partitions: str) -> list[int]:
    return [p.error_code for t in getattr(answer, topics) for p in getattr(t, partitions)]


@pytest.mark.parametrize("version", VERSIONS[75])
async def test_describe_topic_partitions_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 75, version, {"topics": [{"name": "t"}, {"name": "u"}],
                                              "response_partition_limit": 1, "cursor": None})
    assert got is not None
    assert [(t.name, t.error_code, len(t.partitions)) for t in got.topics] == [("t", 0, 1)]
    assert (got.next_cursor.topic_name, got.next_cursor.partition_index) == ("t", 1)


@pytest.mark.parametrize("version", VERSIONS[35])
async def test_describe_log_dirs_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 35, version, {"topics": None})
    assert got is not None and got.results[0].error_code == 0
    assert [(t.name, len(t.partitions)) for t in got.results[0].topics] == [("t", 2)]


@pytest.mark.parametrize("version", VERSIONS[61])
async def test_describe_producers_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 61, version, {"topics": [
        {"name": "t", "partition_indexes": [0, 2]}]})
    assert got is not None
    assert codes(got, "topics", "partitions") == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


@pytest.mark.parametrize("version", VERSIONS[43])
async def test_elect_leaders_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 43, version, {
        "election_type": 0, "timeout_ms": 1000,
        "topic_partitions": [{"topic": "t", "partitions": [0]}]})
    assert got is not None
    assert codes(got, "replica_election_results", "partition_result") == [NOT_NEEDED]


@pytest.mark.parametrize("version", VERSIONS[55])
async def test_describe_quorum_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 55, version, {"topics": [
        {"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]})
    assert got is not None
    partition = got.topics[0].partitions[0]
    assert (partition.error_code, partition.leader_id) == (0, 0)


@pytest.mark.parametrize("version", VERSIONS[45])
async def test_alter_partition_reassignments_versions(one_topic: FakeState,
                                                      version: int) -> None:
    got = await call(one_topic, 45, version, {
        "timeout_ms": 1000, "allow_replication_factor_change": True, "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "replicas": [0]},
                                         {"partition_index": 1, "replicas": None}]}]})
    assert got is not None
    assert codes(got, "responses", "partitions") == [0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS]


@pytest.mark.parametrize("version", VERSIONS[46])
async def test_list_partition_reassignments_versions(one_topic: FakeState,
                                                     version: int) -> None:
    got = await call(one_topic, 46, version, {"timeout_ms": 1000, "topics": None})
    assert got is not None and got.error_code == 0 and list(got.topics) == []


@pytest.mark.parametrize("version", VERSIONS[34])
async def test_alter_replica_log_dirs_versions(one_topic: FakeState, version: int) -> None:
    got = await call(one_topic, 34, version, {"dirs": [
        {"path": "(memory)", "topics": [{"name": "t", "partitions": [0]}]},
        {"path": "/other", "topics": [{"name": "t", "partitions": [1]}]}]})
    assert got is not None
    assert codes(got, "results", "partitions") == [0, ErrorCode.LOG_DIR_NOT_FOUND]
