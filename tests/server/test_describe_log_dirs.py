"""DescribeLogDirs (key 35) over raw frames: the data directory as the one log dir, each
partition's size read from its segment files (growing with every produce, equal to the
files' bytes on disk), offset lag 0, Kafka's topic grouping when partitions are named, the
v4 volume sizes, and replicas per broker on the multi-broker model; AlterReplicaLogDirs to
that one directory (NONE), elsewhere (LOG_DIR_NOT_FOUND), on a broker without a replica. Named after
DescribeLogDirsRequestTest.testDescribeLogDirsRequest where it applies."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import trio
from raw_client import batch

from coordinator.server.apis.describe_log_dirs import IN_MEMORY_LOG_DIR
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE_LOG_DIRS = 35
ALTER_REPLICA_LOG_DIRS = 34
PRODUCE = 0


async def produce(client: Any, topic: str, partition: int, *values: bytes) -> None:
    answer = await client.request(PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": partition, "records": batch(list(values), -1, -1, -1, False)}]}]})
    assert answer.responses[0].partition_responses[0].error_code == 0


def sizes(result: Any) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.partition_size
            for t in result.topics for p in t.partitions}


def bytes_on_disk(data_dir: Path) -> int:
    return sum(f.stat().st_size for f in (data_dir / "topics").rglob("*")
               if f.is_file() and not f.name.endswith(".json"))


async def test_describe_log_dirs_request(
    nursery: trio.Nursery, tmp_path: Path, connect: Any
) -> None:
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=str(tmp_path), topics=(("a", 2), ("b", 1)))
    running: RunningServer = await nursery.start(serve, options)
    client = await connect(running.port)
    before = await client.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
    (result,) = before.results
    assert (before.error_code, result.error_code) == (0, 0)
    assert result.log_dir == os.path.abspath(tmp_path)
    assert result.total_bytes > 0 and 0 <= result.usable_bytes <= result.total_bytes
    assert sizes(result).keys() == {("a", 0), ("a", 1), ("b", 0)}
    await produce(client, "a", 0, b"x" * 100, b"y" * 100)
    await produce(client, "b", 0, b"z")
    after = (await client.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})).results[0]
    grown = sizes(after)
    assert grown[("a", 0)] > sizes(result)[("a", 0)] + 200
    assert grown[("b", 0)] > sizes(result)[("b", 0)]
    assert grown[("a", 1)] == sizes(result)[("a", 1)]
    # The sizes are the segment files' bytes (the files may be preallocated no further).
    assert sum(grown.values()) == bytes_on_disk(tmp_path)
    assert all(p.offset_lag == 0 and not p.is_future_key
               for t in after.topics for p in t.partitions)
    # Named partitions: every topic is listed (Kafka groups before it filters); unknown
    # topics and partitions are left out without an error.
    named = await client.request(DESCRIBE_LOG_DIRS, 2, {"topics": [
        {"topic": "a", "partitions": [0, 7]}, {"topic": "missing", "partitions": [0]}]})
    assert [(t.name, [p.partition_index for p in t.partitions])
            for t in named.results[0].topics] == [("a", [0]), ("b", [])]
    old = await client.request(DESCRIBE_LOG_DIRS, 1, {"topics": None})
    assert sizes(old.results[0]) == grown


async def test_describe_log_dirs_in_memory(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("a", 1),))
    client = await connect(running.port)
    await produce(client, "a", 0, b"v" * 50)
    (result,) = (await client.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})).results
    assert result.log_dir == IN_MEMORY_LOG_DIR
    assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    assert sizes(result)[("a", 0)] > 50


async def test_describe_log_dirs_lists_each_brokers_replicas(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, brokers=3, topics=(("a", 3),))
    hosted = []
    for node_id in range(3):
        client = await connect(running.brokers.ports[node_id])
        answer = await client.request(DESCRIBE_LOG_DIRS, 3, {"topics": None})
        hosted.append(sorted(sizes(answer.results[0])))
    # Replication factor 1: partition p lives on broker p.
    assert hosted == [[("a", 0)], [("a", 1)], [("a", 2)]]


async def test_alter_replica_log_dirs_to_the_one_log_dir(
    nursery: trio.Nursery, tmp_path: Path, connect: Any
) -> None:
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=str(tmp_path), topics=(("a", 1),))
    running: RunningServer = await nursery.start(serve, options)
    client = await connect(running.port)
    here = os.path.abspath(tmp_path)
    answer = await client.request(ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
        {"path": here, "topics": [{"name": "a", "partitions": [0, 4]},
                                  {"name": "missing", "partitions": [0]}]},
        {"path": "/elsewhere", "topics": [{"name": "a", "partitions": [0]}]}]})
    assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in answer.results] == [
        ("a", [(0, ErrorCode.NONE), (4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
               (0, ErrorCode.LOG_DIR_NOT_FOUND)]),
        ("missing", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]


async def test_alter_replica_log_dirs_without_a_replica(start_server: Any, connect: Any) -> None:
    running = await start_server({}, brokers=2, topics=(("a", 2),))
    client = await connect(running.brokers.ports[1])
    answer = await client.request(ALTER_REPLICA_LOG_DIRS, 1, {"dirs": [
        {"path": IN_MEMORY_LOG_DIR, "topics": [{"name": "a", "partitions": [0, 1]}]}]})
    assert [(p.partition_index, p.error_code) for p in answer.results[0].partitions] == [
        (0, ErrorCode.REPLICA_NOT_AVAILABLE), (1, ErrorCode.NONE)]
