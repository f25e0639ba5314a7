"""Deleting a share group (DeleteGroups, Kafka's GroupMetadataManager.deleteGroup with
ShareGroup.createGroupTombstoneRecords and the persister's DeleteShareGroupState): only an
Empty group goes (NON_EMPTY_GROUP otherwise); its share-partition state (the share
coordinator's ShareSnapshot/ShareUpdate records of every partition the group initialized)
and its own records are tombstoned, and it is forgotten at once. A failed append rebuilds
it from the log."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from coordinator.core.consumer.records import RecordWriter
from coordinator.core.group_manager import GroupManager
from coordinator.core.result import Effects
from coordinator.core.share_group.group import ShareGroup
from coordinator.core.share_group.heartbeat import RebuildShareGroupOnFailure
from storage.records import (
    Record,
    ShareGroupMetadataKey,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupTargetAssignmentMetadataKey,
    ShareSnapshotKey,
    ShareUpdateKey,
)
from wire.constants import ErrorCode

__all__ = ["ShareStateDeleted", "delete_share_group", "share_state_tombstones"]


def share_state_tombstones(
    group_id: str, initialized: Mapping[uuid.UUID, tuple[str, frozenset[int]]]
) -> list[Record]:
    """Tombstones for the share coordinator's state of the ``initialized`` partitions (topic
    id -> (name, partitions)) of group ``group_id`` (Kafka's DeleteShareGroupState through
    the persister)."""
    out = []
    for topic_id, (_, partitions) in sorted(initialized.items()):
        for partition in sorted(partitions):
            out.append(Record(ShareUpdateKey(group_id, topic_id, partition), None))
            out.append(Record(ShareSnapshotKey(group_id, topic_id, partition), None))
    return out


def delete_share_group(manager: GroupManager, group: ShareGroup, fx: Effects) -> ErrorCode:
    """Delete an Empty share group and its share state."""
    if group.members:
        return ErrorCode.NON_EMPTY_GROUP
    tombstones = share_state_tombstones(group.group_id, group.initialized)
    for record in tombstones:
        fx.persist(record)
    if tombstones:
        fx.after_append(ShareStateDeleted(manager, tombstones))
    writer = RecordWriter(group, fx)
    gid = group.group_id
    writer.write(ShareGroupStatePartitionMetadataKey(gid), None)
    writer.write(ShareGroupTargetAssignmentMetadataKey(gid), None)
    writer.write(ShareGroupMetadataKey(gid), None)
    del manager.share_groups[gid]
    fx.after_append(RebuildShareGroupOnFailure(manager, gid, None))
    return ErrorCode.NONE


class ShareStateDeleted:
    """Once the share-state tombstones are in the log, the share coordinator forgets those
    share partitions (``GroupManager.share_state_deleted``): a group made again under the same
    id starts afresh, as a restart replaying the tombstones would."""

    __slots__ = ("manager", "tombstones")

    def __init__(self, manager: GroupManager, tombstones: list[Record]) -> None:
        self.manager = manager
        self.tombstones = tombstones

    def appended(self, now_ms: int, fx: Effects) -> None:
        if self.manager.share_state_deleted is not None:
            self.manager.share_state_deleted(self.tombstones)

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Nothing was deleted."""
