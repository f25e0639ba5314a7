"""The share coordinator's records (KIP-932): the durable state of one share partition.

They carry the fields of Kafka's share-coordinator records
(``share-coordinator/src/main/resources/common/message/ShareSnapshotKey/Value.json`` and
``ShareUpdateKey/Value.json``): a snapshot holds the whole state (state epoch, start offset,
and the state batches -- offset ranges with their delivery state and count -- at or above
the start offset that are not plain available records); an update holds state batches
changed since the snapshot of the same ``snapshot_epoch``.

Kafka keeps them in ``__share_group_state`` with record types 0 and 1; kcoord's log shares
its key versions with ``__consumer_offsets``, so they get key versions of their own (103 and
104, beside the transaction records' 101 and 102). kcoord's log is compacted by key, which
keeps only the newest update of a partition, so kcoord's updates are cumulative: each one
holds every batch changed since its snapshot (Kafka prunes by snapshot instead), and the
newest snapshot plus the newest update of its epoch are the whole state.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

__all__ = [
    "SHARE_KEY_TYPES",
    "ShareSnapshotKey",
    "ShareSnapshotValue",
    "ShareStateBatch",
    "ShareUpdateKey",
    "ShareUpdateValue",
]


@dataclass(frozen=True, slots=True)
class ShareStateBatch:
    """Records ``first_offset..last_offset`` (inclusive) in one delivery state (Kafka's ids:
    0 available, 2 acknowledged, 4 archived) with one delivery count."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class ShareSnapshotKey:
    """Key of a share partition's snapshot: (group, topic id, partition)."""

    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True, slots=True)
class ShareSnapshotValue:
    """A share partition's whole durable state."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: tuple[ShareStateBatch, ...]
    delivery_complete_count: int = -1


@dataclass(frozen=True, slots=True)
class ShareUpdateKey:
    """Key of a share partition's update since its snapshot."""

    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True, slots=True)
class ShareUpdateValue:
    """The batches changed since snapshot ``snapshot_epoch`` and the start offset."""

    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: tuple[ShareStateBatch, ...]
    delivery_complete_count: int = -1


SHARE_KEY_TYPES: tuple[type, ...] = (ShareSnapshotKey, ShareUpdateKey)
