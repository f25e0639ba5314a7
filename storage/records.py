"""The records the coordinator emits and replays: its only way to change hard state.

They mirror the records Kafka writes to ``__consumer_offsets``
(group-coordinator ``OffsetCommitKey/Value``, ``GroupMetadataKey/Value``): a key naming what
the record is about and a value, where a value of ``None`` is a tombstone. ``storage/``
encodes them with Kafka's key/value schemas; the coordinator only ever sees these types.

kcoord also writes its own *event* records (``RebalanceEvent``): history for the data
pipeline that Kafka's record set does not carry. Replay ignores them; nothing depends on
them for correctness.

The transaction coordinator's records live in the same log. Kafka keeps transaction state
in its own topic, ``__transaction_state`` (``TransactionLogKey`` / ``TransactionLogValue``),
and writes transactional offsets to ``__consumer_offsets`` as offset commit records inside a
transactional batch, applied when the transaction's marker arrives. kcoord's log has no
batches of its own, so both are record types of their own, with key versions far above
Kafka's record types (as RebalanceEvent's 100):

- ``TransactionStateKey`` (101): one transactional id's metadata, the fields of Kafka's
  ``TransactionLogValue`` version 1 (a tombstone: the id expired). The partition list is
  empty, not null, outside a transaction.
- ``TxnOffsetCommitKey`` (102): an offset a transaction staged for a group partition, until
  the marker: a COMMIT writes the ordinary offset commit record and tombstones this one, an
  ABORT only tombstones it.

The share coordinator's records (``ShareSnapshotKey`` 103, ``ShareUpdateKey`` 104) are
declared in :mod:`storage.share_records`, the share group records (Kafka's types 10-15) in
:mod:`storage.share_group_records` (both re-exported here for the coordinator core), the
dynamic configuration records (``ConfigRecordKey`` 107, ``ClientQuotaRecordKey`` 108) in
:mod:`storage.config_records`, the security records (105, 106) in :mod:`storage.security_records`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from storage.config_records import (
    ClientQuotaRecordKey,
    ClientQuotaRecordValue,
    ConfigRecordKey,
    ConfigRecordValue,
)
from storage.security_records import SecurityKey, SecurityValue
from storage.share_group_records import (  # re-exported: the core reads record types here
    SHARE_GROUP_KEY_TYPES,
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupKey,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
    ShareGroupValue,
    ShareTopicInfo,
    ShareTopicPartitionsInfo,
)
from storage.share_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdateKey,
    ShareUpdateValue,
)
from storage.topic_partitions import TopicPartitions
from wire.bounded_cache import BoundedCache

__all__ = [
    "CONSUMER_GROUP_KEY_TYPES",
    "SHARE_GROUP_KEY_TYPES",
    "TRANSACTION_KEY_TYPES",
    "ClassicMemberMetadata",
    "ClassicProtocol",
    "ConsumerGroupCurrentMemberAssignmentKey",
    "ConsumerGroupCurrentMemberAssignmentValue",
    "ConsumerGroupKey",
    "ConsumerGroupMemberMetadataKey",
    "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupMetadataKey",
    "ConsumerGroupMetadataValue",
    "ConsumerGroupTargetAssignmentMemberKey",
    "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupTargetAssignmentMetadataKey",
    "ConsumerGroupTargetAssignmentMetadataValue",
    "ConsumerGroupValue",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "MemberMetadata",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "RebalanceEventKey",
    "RebalanceEventValue",
    "Record",
    "RecordKey",
    "RecordValue",
    "ShareGroupCurrentMemberAssignmentKey",
    "ShareGroupCurrentMemberAssignmentValue",
    "ShareGroupKey",
    "ShareGroupMemberMetadataKey",
    "ShareGroupMemberMetadataValue",
    "ShareGroupMetadataKey",
    "ShareGroupMetadataValue",
    "ShareGroupStatePartitionMetadataKey",
    "ShareGroupStatePartitionMetadataValue",
    "ShareGroupTargetAssignmentMemberKey",
    "ShareGroupTargetAssignmentMemberValue",
    "ShareGroupTargetAssignmentMetadataKey",
    "ShareGroupTargetAssignmentMetadataValue",
    "ShareGroupValue",
    "ShareSnapshotKey",
    "ShareTopicInfo",
    "ShareTopicPartitionsInfo",
    "ShareUpdateKey",
    "TopicPartitions",
    "TransactionStateKey",
    "TransactionStateValue",
    "TxnOffsetCommitKey",
    "TxnOffsetCommitValue",
    "TxnTopicPartitions",
    "offset_commit_record",
    "slot_setter",
]


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """Key of a committed offset: (group, topic, partition)."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """A committed offset. ``expire_timestamp`` is -1 unless the commit carried a retention
    time (OffsetCommit v2-4), in which case Kafka writes value version 1."""

    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """Key of a group's metadata record."""

    group: str


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """One member as persisted in GroupMetadataValue. ``subscription`` holds the member's
    metadata for the group's selected protocol only; ``assignment`` its assignment."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """A group's persisted metadata: an empty ``members`` tuple means the group is Empty."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...] = ()


@dataclass(frozen=True, slots=True)
class RebalanceEventKey:
    """kcoord's own history record (not in Kafka's record set): one event in a group's life.
    Replay ignores it; the data pipeline reads it to explain rebalances."""

    group: str


@dataclass(frozen=True, slots=True)
class RebalanceEventValue:
    """What happened: ``event`` is one of "rebalance_start", "rebalance_end",
    "member_join", "member_leave", "member_expired", "static_replace", "group_deleted",
    "group_upgraded", "group_downgraded" (online migration between the group protocols).
    ``reason`` is the trigger as Kafka words it (e.g. "leader rejoin", "session timeout")."""

    event: str
    timestamp: int
    generation: int
    member_id: str = ""
    group_instance_id: str | None = None
    reason: str = ""
    members: tuple[str, ...] = ()


# ------------------------------------------------------------------ consumer groups (KIP-848)
# Kafka 4's records of a consumer group, key types 3, 5, 6, 7 and 8 (ConsumerGroupMetadata,
# ConsumerGroupMemberMetadata, ConsumerGroupTargetAssignmentMetadata,
# ConsumerGroupTargetAssignmentMember, ConsumerGroupCurrentMemberAssignment). A member's three
# records are tombstoned when it leaves, the group's two when the group is deleted.


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataKey:
    """Key of a consumer group's epoch record."""

    group: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataValue:
    """The group epoch (bumped by every change of membership, subscriptions or topics) and
    the hash of the subscribed topics' metadata it was computed for (Kafka 4.1, KIP-1101)."""

    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataKey:
    """Key of one consumer-protocol member's metadata."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ClassicProtocol:
    """One protocol a classic-protocol member supports: its name and JoinGroup metadata."""

    name: str
    metadata: bytes


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """What a member using the classic protocol inside a consumer group joined with (Kafka's
    ConsumerGroupMemberMetadataValue.ClassicMemberMetadata, KIP-848 online migration)."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataValue:
    """What the member told the coordinator: its ids, subscription and assignor; a member
    using the classic protocol also carries its ``classic_member_metadata`` (None for a
    consumer-protocol member)."""

    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None = None


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataKey:
    """Key of a consumer group's target assignment epoch."""

    group: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    """The epoch of the group's target assignment."""

    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberKey:
    """Key of one member's target assignment."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberValue:
    """The partitions the assignor gave the member."""

    topic_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentKey:
    """Key of one member's reconciliation state."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    """The member's epochs, state (Kafka's MemberState values) and partitions."""

    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...]
    partitions_pending_revocation: tuple[TopicPartitions, ...]


ConsumerGroupKey = (
    ConsumerGroupMetadataKey
    | ConsumerGroupMemberMetadataKey
    | ConsumerGroupTargetAssignmentMetadataKey
    | ConsumerGroupTargetAssignmentMemberKey
    | ConsumerGroupCurrentMemberAssignmentKey
)
ConsumerGroupValue = (
    ConsumerGroupMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupTargetAssignmentMemberValue
    | ConsumerGroupCurrentMemberAssignmentValue
)
CONSUMER_GROUP_KEY_TYPES: tuple[type, ...] = (
    ConsumerGroupMetadataKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupCurrentMemberAssignmentKey,
)

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


RecordKey = (
    OffsetCommitKey
    | GroupMetadataKey
    | RebalanceEventKey
    | ConsumerGroupKey
    | TransactionStateKey
    | TxnOffsetCommitKey
    | ShareSnapshotKey
    | ShareUpdateKey
    | ShareGroupKey
    | ConfigRecordKey | ClientQuotaRecordKey
    | SecurityKey
)
RecordValue = (
    OffsetCommitValue
    | GroupMetadataValue
    | RebalanceEventValue
    | ConsumerGroupValue
    | TransactionStateValue
    | TxnOffsetCommitValue
    | ShareSnapshotValue
    | ShareUpdateValue
    | ShareGroupValue
    | ConfigRecordValue | ClientQuotaRecordValue
    | SecurityValue
)


@dataclass(frozen=True, slots=True)
class Record:
    """A key and its value; ``value is None`` is a tombstone for the key."""

    key: RecordKey
    value: RecordValue | None


# The commit hot path builds three frozen dataclasses per partition. Their generated
# ``__init__`` sets each field through ``object.__setattr__`` (about 1.3 us per object);
# setting the slots through their descriptors skips the frozen check's name lookups and the
# Python-level ``__init__`` call, for the same objects (equal, hashing alike, frozen).
_new = object.__new__


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of slot ``name`` of ``cls`` (it bypasses a frozen class's __setattr__)."""
    setter: Callable[[Any, Any], None] = cls.__dict__[name].__set__
    return setter


_set_group = slot_setter(OffsetCommitKey, "group")
_set_topic = slot_setter(OffsetCommitKey, "topic")
_set_partition = slot_setter(OffsetCommitKey, "partition")
_set_offset = slot_setter(OffsetCommitValue, "offset")
_set_leader_epoch = slot_setter(OffsetCommitValue, "leader_epoch")
_set_metadata = slot_setter(OffsetCommitValue, "metadata")
_set_commit_timestamp = slot_setter(OffsetCommitValue, "commit_timestamp")
_set_expire_timestamp = slot_setter(OffsetCommitValue, "expire_timestamp")
_set_key = slot_setter(Record, "key")
_set_value = slot_setter(Record, "value")


def offset_commit_record(
    group: str,
    topic: str,
    partition: int,
    offset: int,
    leader_epoch: int,
    metadata: str,
    commit_timestamp: int,
    expire_timestamp: int,
) -> Record:
    """``Record(OffsetCommitKey(group, topic, partition), OffsetCommitValue(offset,
    leader_epoch, metadata, commit_timestamp, expire_timestamp))``, built about twice as
    fast (the OffsetCommit hot path: one per committed partition). The key, immutable and
    the same for every commit of a partition, is shared (``COMMIT_KEYS_LIMIT``)."""
    key = _COMMIT_KEYS.get((group, topic, partition))
    if key is None:
        key = _commit_key(group, topic, partition)
    value = _new(OffsetCommitValue)
    _set_offset(value, offset)
    _set_leader_epoch(value, leader_epoch)
    _set_metadata(value, metadata)
    _set_commit_timestamp(value, commit_timestamp)
    _set_expire_timestamp(value, expire_timestamp)
    record: Record = _new(Record)
    _set_key(record, key)
    _set_value(record, value)
    return record


#: (group, topic, partition) -> its OffsetCommitKey (bounded: cleared when full).
COMMIT_KEYS_LIMIT = 8192
_COMMIT_KEYS: BoundedCache[tuple[str, str, int], OffsetCommitKey] = BoundedCache(
    COMMIT_KEYS_LIMIT)


def _commit_key(group: str, topic: str, partition: int) -> OffsetCommitKey:
    key = _new(OffsetCommitKey)
    _set_group(key, group)
    _set_topic(key, topic)
    _set_partition(key, partition)
    return _COMMIT_KEYS.put((group, topic, partition), key)
