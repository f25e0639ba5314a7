"""Hard state: committed offsets and the last group metadata record per group.

It changes only through ``HardState.apply(record)``, which is both the replay path at
startup and the path every live handler's emitted record takes, so the two agree by
construction. kcoord's RebalanceEvent records are history and are ignored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)

__all__ = ["HardState", "HardStateSnapshot", "TopicPartition"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class HardStateSnapshot:
    """A comparable copy of hard state: offsets per group and the last group record per group."""

    offsets: Mapping[str, Mapping[TopicPartition, OffsetCommitValue]]
    groups: Mapping[str, GroupMetadataValue]


class HardState:
    """Committed offsets and persisted group metadata, as the log says (last record wins)."""

    __slots__ = ("groups", "offsets")

    def __init__(self) -> None:
        self.offsets: dict[str, dict[TopicPartition, OffsetCommitValue]] = {}
        self.groups: dict[str, GroupMetadataValue] = {}

    def apply(self, record: Record) -> None:
        """Apply one record: last value per key wins, a None value is a tombstone."""
        key = record.key
        value = record.value
        if isinstance(key, OffsetCommitKey):
            if value is None:
                group_offsets = self.offsets.get(key.group)
                if group_offsets is not None:
                    group_offsets.pop((key.topic, key.partition), None)
                    if not group_offsets:
                        del self.offsets[key.group]
            elif isinstance(value, OffsetCommitValue):
                self.offsets.setdefault(key.group, {})[(key.topic, key.partition)] = value
        elif isinstance(key, GroupMetadataKey):
            if value is None:
                self.groups.pop(key.group, None)
            elif isinstance(value, GroupMetadataValue):
                self.groups[key.group] = value

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetCommitValue]:
        """The group's committed offsets (a live view; do not mutate)."""
        return self.offsets.get(group_id, _NO_OFFSETS)

    def snapshot(self) -> HardStateSnapshot:
        """A detached, comparable copy."""
        return HardStateSnapshot(
            offsets={gid: dict(offsets) for gid, offsets in self.offsets.items()},
            groups=dict(self.groups),
        )


_NO_OFFSETS: dict[TopicPartition, OffsetCommitValue] = {}
