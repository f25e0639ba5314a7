"""DescribeProducers (key 61) over raw frames: a transactional producer's open transaction
(its first offset) and what is left after it commits, an idempotent producer's last
sequence, unknown topics and partitions, and a broker holding no replica on the
multi-broker model. After Kafka's DescribeProducers cases (PlaintextAdminIntegrationTest's
testDescribeProducers, KafkaApisTest's testDescribeProducers) where they apply."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import TxnClient, batch

from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE_PRODUCERS = 61
PRODUCE = 0
INIT_PRODUCER_ID = 22


def ask(**topics: list[int]) -> dict[str, Any]:
    return {"topics": [{"name": name, "partition_indexes": indexes}
                       for name, indexes in topics.items()]}


def producers(answer: Any, topic: int = 0, partition: int = 0) -> list[tuple[int, ...]]:
    p = answer.topics[topic].partitions[partition]
    assert p.error_code == ErrorCode.NONE
    return [(a.producer_id, a.producer_epoch, a.last_sequence, a.current_txn_start_offset)
            for a in p.active_producers]


async def test_describe_producers(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 2),))
    client = await connect(running.port)
    assert producers(await client.request(DESCRIBE_PRODUCERS, 0, ask(t=[0]))) == []
    # An idempotent producer: two batches, sequences 0-1 then 2-4.
    idempotent = await client.request(INIT_PRODUCER_ID, 4, {
        "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1,
        "producer_epoch": -1})
    pid, epoch = idempotent.producer_id, idempotent.producer_epoch
    for sequence, values in ((0, [b"a", b"b"]), (2, [b"c", b"d", b"e"])):
        answer = await client.request(PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [
                {"index": 0, "records": batch(values, pid, epoch, sequence, False)}]}]})
        assert answer.responses[0].partition_responses[0].error_code == 0
    # A transactional producer with a transaction open at offset 5.
    txn = TxnClient(await connect(running.port), "tx")
    assert (await txn.init()).error_code == 0
    assert await txn.add("t", 0) == {0: 0}
    assert (await txn.produce("t", 0, b"x")).error_code == 0
    described = await client.request(DESCRIBE_PRODUCERS, 0, ask(t=[0, 1]))
    assert sorted(producers(described)) == sorted([
        (pid, epoch, 4, -1), (txn.producer_id, txn.epoch, 0, 5)])
    assert producers(described, partition=1) == []
    last = {a.producer_id: a.last_timestamp for a in described.topics[0].partitions[0]
            .active_producers}
    assert last[pid] == 1_002  # the batch's max timestamp (raw_client stamps 1000 + i)
    assert await txn.end(commit=True) == 0
    after = await client.request(DESCRIBE_PRODUCERS, 0, ask(t=[0]))
    assert (txn.producer_id, txn.epoch, 0, -1) in producers(after)


async def test_describe_producers_unknown_topic_and_partition(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    answer = await client.request(DESCRIBE_PRODUCERS, 0, ask(t=[0, 3], missing=[0]))
    codes = [[(p.partition_index, p.error_code) for p in t.partitions] for t in answer.topics]
    assert codes == [[(0, ErrorCode.NONE), (3, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)],
                     [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]]


async def test_describe_producers_on_a_broker_without_a_replica(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, brokers=2, topics=(("t", 2),))
    client = await connect(running.brokers.ports[1])
    answer = await client.request(DESCRIBE_PRODUCERS, 0, ask(t=[0, 1]))
    assert [(p.partition_index, p.error_code) for p in answer.topics[0].partitions] == [
        (0, ErrorCode.NOT_LEADER_OR_FOLLOWER), (1, ErrorCode.NONE)]
