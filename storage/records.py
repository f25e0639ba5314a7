"""The records the coordinator emits and replays: its only way to change hard state.

They mirror the records Kafka writes to ``__consumer_offsets``
(group-coordinator ``OffsetCommitKey/Value``, ``GroupMetadataKey/Value``): a key naming what
the record is about and a value, where a value of ``None`` is a tombstone. ``storage/``
encodes them with Kafka's key/value schemas; the coordinator only ever sees these types.

kcoord also writes its own *event* records (``RebalanceEvent``): history for the data
pipeline that Kafka's record set does not carry. Replay ignores them; nothing depends on
them for correctness.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
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
    "member_join", "member_leave", "member_expired", "static_replace", "group_deleted".
    ``reason`` is the trigger as Kafka words it (e.g. "leader rejoin", "session timeout")."""

    event: str
    timestamp: int
    generation: int
    member_id: str = ""
    group_instance_id: str | None = None
    reason: str = ""
    members: tuple[str, ...] = ()


RecordKey = OffsetCommitKey | GroupMetadataKey | RebalanceEventKey
RecordValue = OffsetCommitValue | GroupMetadataValue | RebalanceEventValue


@dataclass(frozen=True, slots=True)
class Record:
    """A key and its value; ``value is None`` is a tombstone for the key."""

    key: RecordKey
    value: RecordValue | None
