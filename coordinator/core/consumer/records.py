"""Writing a consumer group's records: each record is replayed into the group as it is
emitted (``RecordWriter``), a failed append rebuilds the group from the log
(``RebuildConsumerGroupOnFailure``), and removing a member writes its three tombstones and
bumps the group epoch (``fence_member``: a leave, a session or rebalance timeout)."""

from __future__ import annotations

from typing import Any

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import CONSUMER_STABLE, ConsumerGroup, ConsumerMember
from coordinator.core.group_manager import GroupManager
from coordinator.core.group_rebuild import (
    CONSUMER,
    RebuildOnFailure,
    RecordGroup,
    arm_sessions,
    rebuild,
)
from coordinator.core.result import Effects
from coordinator.core.timers import ConsumerRebalanceTimerKey, ConsumerSessionTimerKey
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
    RecordKey,
    RecordValue,
)
from wire.constants import ErrorCode

__all__ = [
    "RebuildConsumerGroupOnFailure",
    "RecordWriter",
    "drop_empty_consumer_group",
    "emit_event",
    "fence_member",
    "note_if_stable",
    "remove_member_records",
]


def drop_empty_consumer_group(manager: GroupManager, group: ConsumerGroup, fx: Effects) -> None:
    """Forget an empty consumer group (a classic JoinGroup takes the id, DeleteGroups, or
    offset expiry left it without offsets): its epoch and target records are tombstoned;
    offsets are the caller's business."""
    writer = RecordWriter(group, fx)
    writer.write(ConsumerGroupTargetAssignmentMetadataKey(group.group_id), None)
    writer.write(ConsumerGroupMetadataKey(group.group_id), None)
    del manager.consumer_groups[group.group_id]
    fx.after_append(RebuildConsumerGroupOnFailure(manager, group.group_id, None))


def emit_event(
    fx: Effects,
    group: ConsumerGroup,
    event: str,
    now_ms: int,
    *,
    reason: str = "",
    member: ConsumerMember | None = None,
) -> None:
    """A RebalanceEvent history record for a consumer group: the generation is the group
    epoch (the assignment epoch for rebalance_end), members the current member ids."""
    ending = event == "rebalance_end" and group.members
    generation = group.assignment_epoch if ending else group.group_epoch
    fx.event(Record(
        RebalanceEventKey(group.group_id),
        RebalanceEventValue(
            event=event,
            timestamp=now_ms,
            generation=generation,
            member_id="" if member is None else member.member_id,
            group_instance_id=None if member is None else member.instance_id,
            reason=reason,
            members=tuple(group.members) if event == "rebalance_end" else (),
        ),
    ))


def note_if_stable(group: ConsumerGroup, now_ms: int, fx: Effects) -> None:
    """rebalance_end, once per assignment epoch, when every member has reconciled."""
    if group.stable_epoch != group.assignment_epoch and group.state == CONSUMER_STABLE:
        group.stable_epoch = group.assignment_epoch
        emit_event(fx, group, "rebalance_end", now_ms)


def remove_member_records(group: ConsumerGroup, member_id: str, writer: RecordWriter) -> None:
    gid = group.group_id
    writer.write(ConsumerGroupCurrentMemberAssignmentKey(gid, member_id), None)
    writer.write(ConsumerGroupTargetAssignmentMemberKey(gid, member_id), None)
    writer.write(ConsumerGroupMemberMetadataKey(gid, member_id), None)


def fence_member(
    manager: GroupManager,
    group: ConsumerGroup,
    member: ConsumerMember,
    fx: Effects,
    now_ms: int,
    event: str,
    reason: str,
) -> None:
    """Remove the member and bump the group epoch (Kafka's removeMember + fence): its
    partitions go back to the pool at the next assignment. ``event`` (member_leave or
    member_expired) and a rebalance_start go to the history."""
    writer = RecordWriter(group, fx)
    remove_member_records(group, member.member_id, writer)
    _, metadata_hash = group.subscriptions(manager.topics_image)
    writer.write(ConsumerGroupMetadataKey(group.group_id),
                 ConsumerGroupMetadataValue(group.group_epoch + 1, metadata_hash))
    emit_event(fx, group, event, now_ms, reason=reason, member=member)
    emit_event(fx, group, "rebalance_start", now_ms, reason=reason)
    if not group.members:  # the last member left: the group is Empty, nothing to reconcile
        emit_event(fx, group, "rebalance_end", now_ms)
    fx.cancel(ConsumerSessionTimerKey(group.group_id, member.member_id))
    if member.current.state is MemberState.UNREVOKED_PARTITIONS:
        fx.cancel(ConsumerRebalanceTimerKey(group.group_id, member.member_id,
                                            member.member_epoch))


class RecordWriter:
    """Emits a record and replays it into the group at once (consumer and share groups)."""

    __slots__ = ("fx", "group")

    def __init__(self, group: RecordGroup, fx: Effects) -> None:
        self.group = group
        self.fx = fx

    def write(self, key: RecordKey, value: RecordValue | None) -> None:
        record = Record(key, value)
        self.group.replay(record)
        self.fx.persist(record)


class RebuildConsumerGroupOnFailure(RebuildOnFailure):
    """A consumer group whose records did not reach the log: rebuilt from hard state, and
    the member answered as a ConsumerGroupHeartbeat (classic APIs override
    ``error_response``)."""

    __slots__ = ()

    def rebuild(self, now_ms: int, fx: Effects) -> None:
        """The consumer group its records describe, or -- a migration that did not reach
        the log -- the classic group its record describes (members' sessions re-armed)."""
        manager, gid = self.manager, self.group_id
        converted = manager.groups.pop(gid, None) is not None
        group = rebuild(manager, CONSUMER, gid)
        if group is not None:
            if converted:
                arm_sessions(manager, CONSUMER, group, now_ms, fx,
                             lambda member: _session_timeout_ms(manager, gid, member))
        elif gid in manager.store.groups:
            classic = manager.groups[gid] = ClassicGroup.from_record(gid, manager.store.groups[gid])
            for classic_member in classic.members.values():
                manager.reschedule_heartbeat(classic_member, now_ms, fx)

    def error_response(self, code: ErrorCode) -> Any:
        return {"error_code": code, "error_message": None, "member_epoch": -1}


def _session_timeout_ms(manager: GroupManager, group_id: str, member: ConsumerMember) -> int:
    """A member's session timeout: its classic one, or the consumer protocol's."""
    if member.classic is not None:
        return member.classic.session_timeout_ms
    return manager.consumer_session_timeout_ms(group_id)
