"""Leader epochs as Kafka stamps them (issue 30 item 4): every partition's epoch is >= 0 in
Metadata and ListOffsets, and every appended batch's ``partitionLeaderEpoch`` is it -- 0 on
one broker, the bumped epoch after a failover on several."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from raw_client import PRODUCE, batch

from wire import ErrorCode
from wire.records import parse_batches

pytestmark = pytest.mark.trio

METADATA, LIST_OFFSETS, FETCH = 3, 2, 1


async def produce(client: Any, partition: int, value: bytes) -> int:
    answer = await client.request(PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5_000,
        "topic_data": [{"name": "t", "partition_data": [
            {"index": partition, "records": batch([value], -1, -1, -1, transactional=False)}]}]})
    (p,) = answer.responses[0].partition_responses
    code: int = p.error_code
    return code


async def epochs(client: Any, partition: int) -> tuple[int, int]:
    """(Metadata's leader epoch, ListOffsets' for the latest offset) of a partition."""
    meta = await client.request(METADATA, 12, {
        "topics": [{"name": "t", "topic_id": uuid.UUID(int=0)}],
        "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    listed = await client.request(LIST_OFFSETS, 7, {
        "replica_id": -1, "isolation_level": 0, "topics": [{"name": "t", "partitions": [
            {"partition_index": partition, "current_leader_epoch": -1, "timestamp": -1}]}]})
    return (meta.topics[0].partitions[partition].leader_epoch,
            listed.topics[0].partitions[0].leader_epoch)


def stamped(running: Any, partition: int) -> list[int]:
    log = running.server.topics.partition("t", partition)
    return [h.partition_leader_epoch
            for h in parse_batches(b"".join(b.data for b in log.batches))]


async def test_one_broker_stamps_epoch_zero(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    assert await produce(client, 0, b"a") == 0
    assert await epochs(client, 0) == (0, 0)
    assert stamped(running, 0) == [0]


async def test_a_failover_bumps_the_epoch_batches_carry(start_server: Any,
                                                        connect: Any) -> None:
    running = await start_server({"default.replication.factor": "2"}, brokers=2,
                                 topics=(("t", 2),))
    leader = await connect(running.brokers.ports[0])
    assert await produce(leader, 0, b"before") == 0
    await running.brokers.stop(0)
    successor = await connect(running.brokers.ports[1])
    assert await epochs(successor, 0) == (1, 1)
    assert await produce(successor, 0, b"after") == 0
    assert stamped(running, 0) == [0, 1]


async def test_one_broker_knows_no_leader_epoch_after_zero(start_server: Any,
                                                           connect: Any) -> None:
    """Kafka's ``Partition.checkCurrentLeaderEpoch`` on Fetch and ListOffsets: a client's
    current leader epoch newer than the leader's is UNKNOWN_LEADER_EPOCH; 0 and -1 pass."""
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    assert await produce(client, 0, b"a") == 0
    codes = []
    for current in (-1, 0, 1):
        fetched = await client.request(FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [
                {"partition": 0, "current_leader_epoch": current, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
        listed = await client.request(LIST_OFFSETS, 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": "t", "partitions": [
                {"partition_index": 0, "current_leader_epoch": current, "timestamp": -1}]}]})
        codes.append((fetched.responses[0].partitions[0].error_code,
                      listed.topics[0].partitions[0].error_code))
    unknown = ErrorCode.UNKNOWN_LEADER_EPOCH
    assert codes == [(0, 0), (0, 0), (unknown, unknown)]
