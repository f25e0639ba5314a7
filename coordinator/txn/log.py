"""The transaction coordinator's records: Kafka's ``TransactionLogKey`` / ``TransactionLogValue``
(``__transaction_state``), and their form in kcoord's log (``storage.records``'
``TransactionStateKey`` / ``TransactionStateValue``: :func:`to_storage`, :func:`from_storage`).

Kafka's schemas (``transaction-coordinator/src/main/resources/common/message``):

- key, version 0 (not flexible): ``TransactionalId: string``. A record whose value is null
  is a tombstone: the transactional id expired.
- value, versions 0-1 (1 is flexible, written once ``transaction.version`` >= 1):
  ``ProducerId: int64``, ``ProducerEpoch: int16``, ``TransactionTimeoutMs: int32``,
  ``TransactionStatus: int8`` (the :class:`TransactionState` byte),
  ``TransactionPartitions: []{Topic: string, PartitionIds: []int32}`` (nullable; null in
  Empty), ``TransactionLastUpdateTimestampMs: int64``, ``TransactionStartTimestampMs: int64``,
  and in version 1 the tagged fields ``PreviousProducerId`` (tag 0, default -1),
  ``NextProducerId`` (tag 1, default -1), ``ClientTransactionVersion`` (tag 2, int16,
  default 0).

The last producer epoch is *not* persisted: a loaded id has ``last_producer_epoch`` -1, so a
KIP-360 retry of an InitProducerId that spans a reload is fenced, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.txn.state import (
    TopicPartition,
    TransactionMetadata,
    TxnTransitMetadata,
)
from coordinator.txn.transaction_state import TransactionState
from storage.records import (
    Record,
    TransactionStateKey,
    TransactionStateValue,
    TxnTopicPartitions,
)
from wire.constants import NO_PRODUCER_EPOCH

__all__ = [
    "TransactionLogKey",
    "TransactionLogRecord",
    "TransactionLogValue",
    "TxnPartitions",
    "from_storage",
    "metadata_from_value",
    "to_storage",
    "value_from_transit",
]


@dataclass(frozen=True, slots=True)
class TransactionLogKey:
    """Key of a transaction log record (version 0)."""

    transactional_id: str
    version: int = 0


@dataclass(frozen=True, slots=True)
class TxnPartitions:
    """One topic's partitions in ``TransactionPartitions`` (``PartitionsSchema``)."""

    topic: str
    partition_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TransactionLogValue:
    """A transactional id's persisted metadata (``TransactionLogValue``)."""

    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_status: int
    transaction_partitions: tuple[TxnPartitions, ...] | None
    transaction_last_update_timestamp_ms: int
    transaction_start_timestamp_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    version: int = 1

    @property
    def state(self) -> TransactionState:
        """The decoded status byte (ValueError for an unknown one, as Kafka throws)."""
        return TransactionState(self.transaction_status)


@dataclass(frozen=True, slots=True)
class TransactionLogRecord:
    """One ``__transaction_state`` record; ``value`` None is a tombstone."""

    key: TransactionLogKey
    value: TransactionLogValue | None


def value_from_transit(transit: TxnTransitMetadata, value_version: int) -> TransactionLogValue:
    """The record value Kafka writes for a transition (``TransactionLog.valueToBytes``).

    Version 0 cannot carry the tagged fields, so they are written as their defaults.
    """
    state = transit.txn_state
    if state == TransactionState.EMPTY and transit.topic_partitions:
        raise ValueError(f"an Empty transaction cannot hold partitions: {transit}")
    partitions: tuple[TxnPartitions, ...] | None = None
    if state != TransactionState.EMPTY:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(transit.topic_partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        partitions = tuple(TxnPartitions(t, tuple(ps)) for t, ps in by_topic.items())
    flexible = value_version >= 1
    return TransactionLogValue(
        producer_id=transit.producer_id,
        producer_epoch=transit.producer_epoch,
        transaction_timeout_ms=transit.txn_timeout_ms,
        transaction_status=int(state),
        transaction_partitions=partitions,
        transaction_last_update_timestamp_ms=transit.txn_last_update_timestamp,
        transaction_start_timestamp_ms=transit.txn_start_timestamp,
        previous_producer_id=transit.prev_producer_id if flexible else -1,
        next_producer_id=transit.next_producer_id if flexible else -1,
        client_transaction_version=transit.client_transaction_version if flexible else 0,
        version=value_version,
    )


def metadata_from_value(transactional_id: str, value: TransactionLogValue) -> TransactionMetadata:
    """The metadata a loaded record yields (``TransactionLog.readTxnRecordValue``)."""
    state = value.state
    partitions: set[TopicPartition] = set()
    if state != TransactionState.EMPTY and value.transaction_partitions:
        for entry in value.transaction_partitions:
            partitions.update(TopicPartition(entry.topic, p) for p in entry.partition_ids)
    return TransactionMetadata(
        transactional_id,
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        txn_timeout_ms=value.transaction_timeout_ms,
        state=state,
        txn_last_update_timestamp=value.transaction_last_update_timestamp_ms,
        prev_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        last_producer_epoch=NO_PRODUCER_EPOCH,
        topic_partitions=partitions,
        txn_start_timestamp=value.transaction_start_timestamp_ms,
        client_transaction_version=value.client_transaction_version,
    )


def to_storage(record: TransactionLogRecord) -> Record:
    """A transaction log record as kcoord's log stores it."""
    key = TransactionStateKey(record.key.transactional_id)
    value = record.value
    if value is None:
        return Record(key, None)
    return Record(key, TransactionStateValue(
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        transaction_timeout_ms=value.transaction_timeout_ms,
        transaction_status=value.transaction_status,
        transaction_partitions=tuple(
            TxnTopicPartitions(p.topic, p.partition_ids)
            for p in value.transaction_partitions or ()
        ),
        transaction_last_update_timestamp_ms=value.transaction_last_update_timestamp_ms,
        transaction_start_timestamp_ms=value.transaction_start_timestamp_ms,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        client_transaction_version=value.client_transaction_version,
    ))


def from_storage(record: Record) -> TransactionLogRecord:
    """A stored transaction state record back as the transaction log's."""
    assert isinstance(record.key, TransactionStateKey)
    key = TransactionLogKey(record.key.transactional_id)
    value = record.value
    if not isinstance(value, TransactionStateValue):
        return TransactionLogRecord(key, None)
    return TransactionLogRecord(key, TransactionLogValue(
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        transaction_timeout_ms=value.transaction_timeout_ms,
        transaction_status=value.transaction_status,
        transaction_partitions=tuple(
            TxnPartitions(p.topic, p.partition_ids) for p in value.transaction_partitions
        ) or None,
        transaction_last_update_timestamp_ms=value.transaction_last_update_timestamp_ms,
        transaction_start_timestamp_ms=value.transaction_start_timestamp_ms,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        client_transaction_version=value.client_transaction_version,
    ))
