"""Offset expiration (KIP-211): the periodic retention scan.

Every ``offsets.retention.check.interval.ms`` the scan tombstones expired offsets and drops
Empty groups left without any (Kafka's GroupMetadataManager.cleanupGroupMetadata /
GroupMetadata.removeExpiredOffsets); packed groups a few at a time
(``PACKED_GROUPS_PER_SCAN``). A partition with a commit in flight never expires;
if the tombstones' append fails, nothing was applied and a dropped group comes back.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY, STABLE
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.consumer.records import drop_empty_consumer_group
from coordinator.core.group_manager import GroupManager
from coordinator.core.result import Effects
from coordinator.core.store import TopicPartition
from coordinator.core.timers import RetentionTimerKey
from storage.records import OffsetCommitValue
from wire.consumer_protocol import CONSUMER_PROTOCOL_TYPE

__all__ = ["PACKED_GROUPS_PER_SCAN", "expire_offsets", "schedule_retention_scan"]

#: Packed groups (``HardState.packed``: their offsets as a snapshot left them, not decoded
#: yet) one scan decodes, to a scratch copy: a scan after a restart on 10^6 offsets would
#: otherwise hold the event loop for seconds; the rest wait ``PACKED_SCAN_GAP_MS`` for the
#: next scan. A packed group of an offset-only group keeps when its first offset expires
#: (``HardState.packed_due``) and stays packed: later scans skip it until then.
PACKED_GROUPS_PER_SCAN = 200
PACKED_SCAN_GAP_MS = 1_000


def _expired_partitions(
    manager: GroupManager,
    group: ClassicGroup,
    offsets: Mapping[TopicPartition, OffsetCommitValue],
    now_ms: int,
    retention_ms: int,
) -> list[TopicPartition]:
    """KIP-211 (GroupMetadata.removeExpiredOffsets): which offsets of the group expire now."""
    protocol_type = group.protocol_type
    state = group.state
    skip: frozenset[str] = frozenset()
    use_state_time = False
    if protocol_type is not None and state is EMPTY:
        use_state_time = group.current_state_timestamp is not None
    elif (protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed_topics is not None
          and state is STABLE):
        skip = group.subscribed_topics
    elif protocol_type is not None:
        return []
    in_flight = manager.pending.keys(group.group_id)
    expired = []
    for tp, value in offsets.items():
        if tp[0] in skip or tp in in_flight:
            continue
        if value.expire_timestamp != -1:
            if now_ms >= value.expire_timestamp:
                expired.append(tp)
            continue
        base = value.commit_timestamp
        if use_state_time:
            assert group.current_state_timestamp is not None
            base = group.current_state_timestamp
        if now_ms - base >= retention_ms:
            expired.append(tp)
    return expired


def _offsets_may_expire(group: ClassicGroup) -> bool:
    """Whether ``_expired_partitions`` can find any offset of the group expired in its
    state (if not, a packed group's offsets need not be decoded to look)."""
    protocol_type = group.protocol_type
    return protocol_type is None or group.state is EMPTY or (
        protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed_topics is not None
        and group.state is STABLE)


def expire_offsets(manager: GroupManager, now_ms: int, fx: Effects) -> None:
    """The retention scan: tombstone expired offsets, drop Empty groups left without any,
    and re-arm the scan."""
    if manager.retention_deadline == -1 or manager.retention_deadline > now_ms:
        return
    retention_ms = manager.config.offsets_retention_ms
    store = manager.store
    budget = PACKED_GROUPS_PER_SCAN
    for group in list(manager.groups.values()):
        group_id = group.group_id
        packed = group_id in store.packed
        if packed:
            if not _offsets_may_expire(group):
                continue  # not decoded: none of them can expire in this state
            if group.protocol_type is None and store.packed_due.get(group_id, 0) > now_ms:
                continue  # nothing of it expires yet, and it has offsets: nothing to do
            if budget == 0:
                continue  # the next scan, which comes soon, looks at it
            budget -= 1
        offsets = store.peek_offsets(group_id)
        if offsets:
            expired = _expired_partitions(manager, group, offsets, now_ms, retention_ms)
            if expired:
                manager.delete_offsets(group_id, expired, fx)
            elif packed and group.protocol_type is None:
                store.packed_due[group_id] = min(
                    value.commit_timestamp + retention_ms if value.expire_timestamp == -1
                    else value.expire_timestamp for value in offsets.values())
        manager.maybe_drop_group(group, now_ms, "offsets expired", fx)
    for consumer_group in list(manager.consumer_groups.values()):
        _expire_consumer_group(manager, consumer_group, now_ms, retention_ms, fx)
    schedule_retention_scan(manager, now_ms, fx, soon=budget == 0)


def _expire_consumer_group(
    manager: GroupManager, group: ConsumerGroup, now_ms: int, retention_ms: int, fx: Effects
) -> None:
    """Kafka 4's consumer groups: offsets of topics no member subscribes to expire by their
    commit timestamp (or explicit expiry); an empty group left without offsets is deleted."""
    group_id = group.group_id
    offsets = manager.store.group_offsets(group_id)
    if offsets:
        subscribed = group.subscribed_topic_names(manager.topics_image)
        in_flight = manager.pending.keys(group_id)
        expired = [
            tp for tp, value in offsets.items()
            if tp[0] not in subscribed and tp not in in_flight and (
                now_ms >= value.expire_timestamp if value.expire_timestamp != -1
                else now_ms - value.commit_timestamp >= retention_ms
            )
        ]
        if expired:
            manager.delete_offsets(group_id, expired, fx)
    if not group.members and not manager.has_offsets(group_id):
        drop_empty_consumer_group(manager, group, fx)


def schedule_retention_scan(manager: GroupManager, now_ms: int, fx: Effects, *,
                            soon: bool = False) -> None:
    """Arm the next offset-expiration scan (``soon``: packed groups are left to look at)."""
    interval = manager.config.offsets_retention_check_interval_ms
    deadline = now_ms + (min(interval, PACKED_SCAN_GAP_MS) if soon else interval)
    manager.retention_deadline = deadline
    fx.schedule(RetentionTimerKey(), deadline)
