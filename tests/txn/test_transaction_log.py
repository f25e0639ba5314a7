"""Kafka's TransactionLogTest.scala (the record-level parts), mirrored on coordinator.txn.log,
plus the producer-id block records."""

from __future__ import annotations

import pytest
from txn_support import meta

from coordinator.txn.log import (
    TransactionLogValue,
    TxnPartitions,
    metadata_from_value,
    value_from_transit,
)
from coordinator.txn.state import TopicPartition, TxnTransitMetadata
from coordinator.txn.transaction_state import TransactionState
from wire.constants import NO_PRODUCER_EPOCH

S = TransactionState
PARTITIONS = {TopicPartition("topic1", 0), TopicPartition("topic1", 1)} | {
    TopicPartition("topic2", p) for p in range(3)
}


def test_should_throw_exception_write_invalid_txn() -> None:
    m = meta(S.EMPTY, transactional_id="transactionalId", producer_id=23423)
    m.add_partitions(PARTITIONS)
    with pytest.raises(ValueError):
        value_from_transit(m.prepare_no_transit(), 1)


def test_should_read_write_messages() -> None:
    states = {
        0: S.EMPTY,
        1: S.ONGOING,
        2: S.PREPARE_COMMIT,
        3: S.COMPLETE_COMMIT,
        4: S.PREPARE_ABORT,
        5: S.COMPLETE_ABORT,
    }
    names = ["zero", "one", "two", "three", "four", "five"]
    for pid, txn_id in enumerate(names):
        m = meta(
            states[pid],
            transactional_id=txn_id,
            producer_id=pid,
            producer_epoch=0,
            txn_timeout_ms=1000,
        )
        if m.state != S.EMPTY:
            m.add_partitions(PARTITIONS)
        value = value_from_transit(m.prepare_no_transit(), 1)
        loaded = metadata_from_value(txn_id, value)
        assert (loaded.producer_id, loaded.producer_epoch, loaded.txn_timeout_ms) == (pid, 0, 1000)
        assert loaded.state == states[pid]
        assert loaded.topic_partitions == (set() if m.state == S.EMPTY else PARTITIONS)
        # Partitions are grouped by topic; Empty writes a null list.
        if m.state == S.EMPTY:
            assert value.transaction_partitions is None
        else:
            assert value.transaction_partitions == (
                TxnPartitions("topic1", (0, 1)),
                TxnPartitions("topic2", (0, 1, 2)),
            )


def _transit() -> TxnTransitMetadata:
    return TxnTransitMetadata(1, 1, 1, 1, 1, 1000, S.COMPLETE_COMMIT, frozenset(), 500, 500, 0)


def test_serialize_transaction_log_value_to_highest_non_flexible_version() -> None:
    value = value_from_transit(_transit(), 0)
    assert value.version == 0
    # Version 0 has no tagged fields: they read back as their defaults.
    assert (value.previous_producer_id, value.next_producer_id) == (-1, -1)


def test_serialize_transaction_log_value_to_flexible_version() -> None:
    value = value_from_transit(_transit(), 1)
    assert value.version == 1
    assert (value.previous_producer_id, value.next_producer_id) == (1, 1)


def test_deserialize_highest_supported_transaction_log_value() -> None:
    value = TransactionLogValue(
        producer_id=100,
        producer_epoch=50,
        transaction_timeout_ms=500,
        transaction_status=int(S.COMPLETE_COMMIT),
        transaction_partitions=(TxnPartitions("topic", (0,)),),
        transaction_last_update_timestamp_ms=1000,
        transaction_start_timestamp_ms=750,
    )
    m = metadata_from_value("transactionId", value)
    assert (m.producer_id, m.producer_epoch, m.state) == (100, 50, S.COMPLETE_COMMIT)
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp, m.txn_timeout_ms) == (
        750,
        1000,
        500,
    )
    assert m.topic_partitions == {TopicPartition("topic", 0)}
    # The last epoch is not in the record.
    assert m.last_producer_epoch == NO_PRODUCER_EPOCH
