"""The transaction coordinator's records, kept in the same log as the group records.

Kafka keeps transaction state in its own topic, ``__transaction_state``, with
``TransactionLogKey`` / ``TransactionLogValue``; transactional offsets go to
``__consumer_offsets`` as offset commit records inside a transactional batch, applied when
the transaction's marker arrives. kcoord's log has no batches of its own, so both are
records of their own type here, with key versions far above Kafka's record types (as
kcoord's RebalanceEvent, 100):

- ``TransactionStateKey`` (101): one transactional id's metadata, the fields of Kafka's
  ``TransactionLogValue`` version 1 (a tombstone: the id expired). The partition list is
  empty, not null, outside a transaction.
- ``TxnOffsetCommitKey`` (102): an offset a transaction staged for a group partition, until
  the marker: a COMMIT writes the ordinary offset commit record and tombstones this one, an
  ABORT only tombstones it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "TRANSACTION_KEY_TYPES",
    "TRANSACTION_STATE_KEY_VERSION",
    "TXN_OFFSET_COMMIT_KEY_VERSION",
    "TransactionStateKey",
    "TransactionStateValue",
    "TxnOffsetCommitKey",
    "TxnOffsetCommitValue",
    "TxnTopicPartitions",
]

TRANSACTION_STATE_KEY_VERSION = 101
TXN_OFFSET_COMMIT_KEY_VERSION = 102


@dataclass(frozen=True, slots=True)
class TransactionStateKey:
    """Key of a transactional id's state."""

    transactional_id: str


@dataclass(frozen=True, slots=True)
class TxnTopicPartitions:
    """One topic's partitions in a transaction (Kafka's ``PartitionsSchema``)."""

    topic: str
    partition_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TransactionStateValue:
    """A transactional id's metadata (Kafka's ``TransactionLogValue`` v1 fields)."""

    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_status: int
    transaction_partitions: tuple[TxnTopicPartitions, ...]
    transaction_last_update_timestamp_ms: int
    transaction_start_timestamp_ms: int
    previous_producer_id: int
    next_producer_id: int
    client_transaction_version: int


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitKey:
    """Key of an offset staged by producer ``producer_id``'s open transaction."""

    producer_id: int
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitValue:
    """The staged offset (what the commit marker turns into an OffsetCommitValue)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


TRANSACTION_KEY_TYPES: tuple[type, ...] = (TransactionStateKey, TxnOffsetCommitKey)
