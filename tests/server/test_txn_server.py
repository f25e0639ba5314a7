"""Transactions over real TCP against an in-process server (issue 12): the coordinator's
answers with Kafka's error codes, markers in the log, the last stable offset, the aborted
index of read_committed fetches, staged transactional offsets, fencing and timeouts.

Clients in these tests speak raw frames, at the versions librdkafka sends
(``../shared/reference/kip848-and-transactions.md``): FindCoordinator v2, InitProducerId
v4, AddPartitionsToTxn v0..3, AddOffsetsToTxn v0, TxnOffsetCommit v3, EndTxn v1, Produce
v9, Fetch v11 and OffsetFetch v7."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from raw_client import ADD_PARTITIONS, INIT_PRODUCER_ID, OFFSET_FETCH, RawClient, TxnClient

from coordinator.server.app import RunningServer
from wire import ErrorCode
from wire.records import parse_batches

FIND_COORDINATOR, FETCH, LIST_OFFSETS = 10, 1, 2


async def fetch(client: RawClient, topic: str, partition: int, offset: int = 0,
                read_committed: bool = True) -> Any:
    answer = await client.request(FETCH, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
        "isolation_level": 1 if read_committed else 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [{
            "partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    (p,) = answer.responses[0].partitions
    return p


def batches_of(records: bytes) -> list[Any]:
    return parse_batches(records) if records else []


async def fetch_offset(client: RawClient, group: str, topic: str, partition: int,
                       require_stable: bool = True) -> tuple[int, int]:
    answer = await client.request(OFFSET_FETCH, 7, {
        "group_id": group, "topics": [{"name": topic, "partition_indexes": [partition]}],
        "require_stable": require_stable})
    (p,) = answer.topics[0].partitions
    return p.error_code, p.committed_offset


@pytest.fixture
async def producer(server: RunningServer, connect: Any) -> TxnClient:
    txn = TxnClient(await connect(server.port), "tx-a")
    assert (await txn.init()).error_code == 0
    return txn


async def test_find_coordinator_names_this_broker_for_a_transactional_id(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    answer = await client.request(FIND_COORDINATOR, 2, {"key": "tx-a", "key_type": 1})
    assert (answer.error_code, answer.node_id, answer.port) == (0, 0, server.port)
    batched = await client.request(FIND_COORDINATOR, 4, {
        "key_type": 1, "coordinator_keys": ["tx-a", "tx-b"]})
    assert [(c.key, c.error_code, c.port) for c in batched.coordinators] == [
        ("tx-a", 0, server.port), ("tx-b", 0, server.port)]


async def test_init_producer_id_bumps_the_epoch_and_fences_the_old_producer(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    zombie_epoch = producer.epoch
    successor = TxnClient(await connect(server.port), "tx-a")
    assert (await successor.init()).error_code == 0
    assert successor.producer_id == producer.producer_id
    assert successor.epoch == zombie_epoch + 1
    # The old instance is fenced: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before.
    assert await producer.add("t", 0, version=3) == {0: ErrorCode.PRODUCER_FENCED}
    assert await producer.add("t", 0, version=1) == {0: ErrorCode.INVALID_PRODUCER_EPOCH}
    assert await producer.end(True, version=2) == ErrorCode.PRODUCER_FENCED


async def test_a_transactional_batch_outside_the_transaction_is_invalid_txn_state(
    producer: TxnClient,
) -> None:
    answer = await producer.produce("t", 0, b"x")
    assert answer.error_code == ErrorCode.INVALID_TXN_STATE
    assert await producer.add("t", 0) == {0: 0}
    assert (await producer.produce("t", 1, b"x")).error_code == ErrorCode.INVALID_TXN_STATE
    assert (await producer.produce("t", 0, b"x")).error_code == 0


async def test_add_partitions_with_an_unknown_partition_fails_them_all(
    producer: TxnClient,
) -> None:
    assert await producer.add("t", 0, 99) == {
        0: ErrorCode.OPERATION_NOT_ATTEMPTED, 99: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


async def test_records_are_hidden_from_read_committed_until_the_commit(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    reader = await connect(server.port)
    assert await producer.add("t", 0) == {0: 0}
    first = await producer.produce("t", 0, b"a", b"b")
    assert (first.error_code, first.base_offset) == (0, 0)
    pending = await fetch(reader, "t", 0)
    assert (pending.high_watermark, pending.last_stable_offset) == (2, 0)
    assert pending.records == b"" and pending.aborted_transactions == []
    uncommitted = await fetch(reader, "t", 0, read_committed=False)
    assert [b.record_count for b in batches_of(uncommitted.records)] == [2]

    assert await producer.end(True) == 0
    done = await fetch(reader, "t", 0)
    assert (done.high_watermark, done.last_stable_offset) == (3, 3)
    data, marker = batches_of(done.records)
    assert data.is_transactional and not data.is_control
    assert marker.is_control and marker.base_offset == 2
    assert marker.producer_id == producer.producer_id
    assert done.aborted_transactions == []
    # ListOffsets "latest" for read_committed is the LSO.
    listed = await reader.request(LIST_OFFSETS, 5, {
        "replica_id": -1, "isolation_level": 1, "topics": [{"name": "t", "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    assert listed.topics[0].partitions[0].offset == 3


async def test_an_abort_is_listed_to_read_committed_fetches(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    reader = await connect(server.port)
    assert await producer.add("t", 1) == {1: 0}
    assert (await producer.produce("t", 1, b"gone")).error_code == 0
    assert await producer.end(False) == 0
    assert await producer.add("t", 1) == {1: 0}
    assert (await producer.produce("t", 1, b"kept")).error_code == 0
    assert await producer.end(True) == 0
    answer = await fetch(reader, "t", 1)
    assert (answer.high_watermark, answer.last_stable_offset) == (4, 4)
    assert [(a.producer_id, a.first_offset) for a in answer.aborted_transactions] == [
        (producer.producer_id, 0)]
    # From past the aborted range, it is no longer listed.
    later = await fetch(reader, "t", 1, offset=2)
    assert later.aborted_transactions == []


async def test_end_txn_without_an_ongoing_transaction_is_invalid_txn_state(
    producer: TxnClient,
) -> None:
    assert await producer.end(True) == ErrorCode.INVALID_TXN_STATE
    unknown = TxnClient(producer.client, "never-initialized")
    unknown.producer_id, unknown.epoch = 4242, 0
    assert await unknown.end(True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING


async def test_transactional_offsets_are_unstable_until_the_commit(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    reader = await connect(server.port)
    assert await producer.add_offsets("eos") == 0
    assert await producer.commit_offsets("eos", "t", {0: 17}) == {0: 0}
    assert await fetch_offset(reader, "eos", "t", 0) == (ErrorCode.UNSTABLE_OFFSET_COMMIT, -1)
    assert await fetch_offset(reader, "eos", "t", 0, require_stable=False) == (0, -1)
    assert await producer.end(True) == 0
    assert await fetch_offset(reader, "eos", "t", 0) == (0, 17)

    assert await producer.add_offsets("eos") == 0
    assert await producer.commit_offsets("eos", "t", {0: 99}) == {0: 0}
    assert await producer.end(False) == 0
    assert await fetch_offset(reader, "eos", "t", 0) == (0, 17)


async def test_txn_offset_commit_checks_group_and_topic(producer: TxnClient) -> None:
    # A missing group with a generation: ILLEGAL_GENERATION (Kafka's
    # validateTransactionalOffsetCommit); an unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
    assert await producer.commit_offsets("nobody", "t", {0: 1}, generation=3) == {
        0: ErrorCode.ILLEGAL_GENERATION}
    assert await producer.commit_offsets("g", "missing", {0: 1}) == {
        0: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


async def test_a_transaction_past_its_timeout_is_aborted(
    server: RunningServer, connect: Any, autojump_clock: Any
) -> None:
    txn = TxnClient(await connect(server.port), "slow")
    assert (await txn.init(timeout_ms=2_000)).error_code == 0
    assert await txn.add("t", 2) == {2: 0}
    assert (await txn.produce("t", 2, b"late")).error_code == 0
    reader = await connect(server.port)
    assert (await fetch(reader, "t", 2)).last_stable_offset == 0
    # The abort job runs every 10 s (transaction.abort.timed.out.transaction.cleanup.interval.ms).
    await trio.sleep(12)
    answer = await fetch(reader, "t", 2)
    assert (answer.high_watermark, answer.last_stable_offset) == (2, 2)
    assert [a.first_offset for a in answer.aborted_transactions] == [0]
    # The producer was fenced by the abort's epoch bump (INVALID_PRODUCER_EPOCH before v2).
    assert await txn.end(True, version=2) == ErrorCode.PRODUCER_FENCED
    assert await txn.end(True, version=1) == ErrorCode.INVALID_PRODUCER_EPOCH


async def test_transaction_max_timeout_bounds_the_producer_timeout(
    start_server: Any, connect: Any
) -> None:
    server = await start_server({"transaction.max.timeout.ms": "5000"})
    txn = TxnClient(await connect(server.port), "bounded")
    assert (await txn.init(timeout_ms=60_000)).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert (await txn.init(timeout_ms=5_000)).error_code == 0


async def test_describe_and_list_transactions(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    admin = await connect(server.port)
    assert await producer.add("t", 3, 4) == {3: 0, 4: 0}
    described = await admin.request(65, 0, {"transactional_ids": ["tx-a", "nobody", ""]})
    ongoing, unknown, empty = described.transaction_states
    assert (ongoing.error_code, ongoing.transaction_state, ongoing.producer_id,
            ongoing.producer_epoch, ongoing.transaction_timeout_ms) == (
        0, "Ongoing", producer.producer_id, producer.epoch, 60_000)
    assert [(t.topic, list(t.partitions)) for t in ongoing.topics] == [("t", [3, 4])]
    assert unknown.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert empty.error_code == ErrorCode.INVALID_REQUEST
    listed = await admin.request(66, 1, {"state_filters": ["Ongoing", "Bogus"],
                                         "producer_id_filters": [], "duration_filter": -1})
    assert list(listed.unknown_state_filters) == ["Bogus"]
    assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [
        ("tx-a", "Ongoing")]
    assert await producer.end(True) == 0
    after = await admin.request(66, 0, {"state_filters": ["Ongoing"], "producer_id_filters": []})
    assert list(after.transaction_states) == []


async def test_batched_add_partitions_adds_and_verifies(
    server: RunningServer, connect: Any, producer: TxnClient
) -> None:
    """AddPartitionsToTxn v4+ (what brokers send, KIP-890): several transactions at once;
    ``verify_only`` answers whether a partition is in the transaction without adding it."""
    broker = await connect(server.port)
    assert await producer.add("t", 0) == {0: 0}

    def txn(verify_only: bool, partitions: list[int], txn_id: str = "tx-a") -> dict[str, Any]:
        return {"transactional_id": txn_id, "producer_id": producer.producer_id,
                "producer_epoch": producer.epoch, "verify_only": verify_only,
                "topics": [{"name": "t", "partitions": partitions}]}

    answer = await broker.request(ADD_PARTITIONS, 5, {"transactions": [
        txn(True, [0, 5]), txn(False, [6], "nobody")]})
    assert answer.error_code == 0
    verified, unknown = answer.results_by_transaction
    # Not in the transaction: TRANSACTION_ABORTABLE (120), as Kafka's coordinator answers.
    assert {p.partition_index: p.partition_error_code
            for p in verified.topic_results[0].results_by_partition} == {0: 0, 5: 120}
    assert unknown.topic_results[0].results_by_partition[0].partition_error_code == (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    added = await broker.request(ADD_PARTITIONS, 4, {"transactions": [txn(False, [7])]})
    assert added.results_by_transaction[0].topic_results[0].results_by_partition[0] \
        .partition_error_code == 0
    assert (await producer.produce("t", 7, b"x")).error_code == 0


async def test_kip360_epoch_recovery(server: RunningServer, connect: Any,
                                     producer: TxnClient) -> None:
    """InitProducerId v3+ with the producer's id and epoch bumps the epoch and keeps the
    id; a stale epoch is fenced."""
    pid, epoch = producer.producer_id, producer.epoch
    recovered = await producer.client.request(INIT_PRODUCER_ID, 4, {
        "transactional_id": "tx-a", "transaction_timeout_ms": 60_000,
        "producer_id": pid, "producer_epoch": epoch})
    assert (recovered.error_code, recovered.producer_id, recovered.producer_epoch) == (
        0, pid, epoch + 1)
    stale = await producer.client.request(INIT_PRODUCER_ID, 4, {
        "transactional_id": "tx-a", "transaction_timeout_ms": 60_000,
        "producer_id": pid, "producer_epoch": epoch - 1 if epoch > 0 else 7})
    assert stale.error_code == ErrorCode.PRODUCER_FENCED
