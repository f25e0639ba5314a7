"""ShareGroupHeartbeat (API 76), version 1: Kafka's GroupMetadataManager
``shareGroupHeartbeat`` and ``shareGroupLeave``.

One heartbeat: validate the request (INVALID_REQUEST by Kafka's rules), find or create the
share group (a classic or consumer group's id: GROUP_ID_NOT_FOUND) and the member (checking
its epoch and ``group.share.max.size``), update the member's metadata, bump the group epoch
when membership, subscriptions or the subscribed topics changed, recompute the target
assignment with the simple assignor (several members may share a partition) when the group
epoch is ahead of it, and move the member to its target (a share member has nothing to
revoke: ShareGroupAssignmentBuilder). Every change is a record, replayed into the group at
once and answered once in the log; a failed append rebuilds the group from what the log holds.

The topic partitions assigned for the first time are written to the group's
ShareGroupStatePartitionMetadata as initialized: kcoord's share coordinator keeps its state
in the same log and initializes a share partition on first use, so Kafka's
InitializeShareGroupState round (InitializingTopics, then InitializedTopics) is one step.
"""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

from coordinator.core.consumer.group import to_topic_partitions
from coordinator.core.consumer.records import RecordWriter
from coordinator.core.group_manager import GroupManager
from coordinator.core.group_rebuild import SHARE, RebuildOnFailure, arm_sessions, rebuild
from coordinator.core.messages import RequestContext
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.share_group.group import (
    PartitionMap,
    ShareGroup,
    ShareMember,
    state_partitions_value,
)
from coordinator.core.timers import ShareSessionTimerKey
from coordinator.share.assignor import simple_assign
from storage.records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
)
from wire.constants import ErrorCode

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "ShareGroupHeartbeatRequest",
    "ShareHeartbeatError",
    "expire_share_member",
    "fence_share_member",
    "handle_share_group_heartbeat",
    "share_group_for",
]

LEAVE_GROUP_MEMBER_EPOCH = -1


class ShareGroupHeartbeatRequest(TypedDict):
    """ShareGroupHeartbeat v1's request fields."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None


class ShareHeartbeatError(Exception):
    """A Kafka error answer (code and message); raised before any record is emitted."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> ShareHeartbeatError:
    return ShareHeartbeatError(ErrorCode.INVALID_REQUEST, message)


def handle_share_group_heartbeat(
    manager: GroupManager, ctx: RequestContext, req: ShareGroupHeartbeatRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one ShareGroupHeartbeat."""
    fx = manager.effects()
    try:
        response = _heartbeat(manager, ctx, req, now_ms, fx)
    except ShareHeartbeatError as exc:
        assert not fx.records, "a heartbeat error after records were emitted"
        response = _error_response(exc.code, exc.message)
    fx.reply(token, response)
    if fx.records:
        fx.after_append(RebuildShareGroupOnFailure(manager, req["group_id"], token))
    return fx.result()


def _error_response(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "member_id": None,
            "member_epoch": 0, "heartbeat_interval_ms": 0}


def _blank(value: str | None) -> bool:
    """Kafka's throwIfEmptyString test: set, but empty or all whitespace."""
    return value is not None and value.strip() == ""


def _validate(req: ShareGroupHeartbeatRequest) -> None:
    """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid (v1: the client names itself)."""
    epoch = req["member_epoch"]
    if _blank(req["group_id"]):
        raise _invalid("GroupId can't be empty.")
    if _blank(req["rack_id"]):
        raise _invalid("RackId can't be empty.")
    if _blank(req["member_id"]):
        raise _invalid("MemberId can't be empty.")
    if epoch == 0:
        if not req["subscribed_topic_names"]:
            raise _invalid("SubscribedTopicNames must be set in first request.")
    elif epoch < 0 and epoch != LEAVE_GROUP_MEMBER_EPOCH:
        raise _invalid("MemberEpoch is invalid.")


def share_group_for(manager: GroupManager, group_id: str, create: bool) -> ShareGroup:
    """The share group (created when ``create``); GROUP_ID_NOT_FOUND for an unknown id or
    one of another group type (Kafka's getOrMaybeCreatePersistedShareGroup)."""
    group = manager.share_groups.get(group_id)
    if group is not None:
        return group
    if group_id in manager.groups or group_id in manager.consumer_groups:
        raise ShareHeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND,
                                  f"Group {group_id} is not a share group.")
    if not create:
        raise ShareHeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND,
                                  f"Share group {group_id} not found.")
    group = manager.share_groups[group_id] = ShareGroup(group_id)
    return group


def _member_of(manager: GroupManager, group: ShareGroup, member_id: str, epoch: int) -> ShareMember:
    """The member (a new one on epoch 0), its epoch checked (Kafka's
    throwIfShareGroupIsFull, getOrMaybeSubscribeShareGroupMember and
    throwIfShareGroupMemberEpochIsInvalid)."""
    member = group.members.get(member_id)
    max_size = manager.config.group_share_max_size
    if member is None and len(group.members) >= max_size:
        raise ShareHeartbeatError(
            ErrorCode.GROUP_MAX_SIZE_REACHED,
            f"The share group has reached its maximum capacity of {max_size} members.")
    if epoch == 0:
        return member if member is not None else ShareMember(member_id)
    if member is None:
        raise ShareHeartbeatError(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"Member {member_id} is not a member of group {group.group_id}.")
    if epoch > member.member_epoch:
        raise ShareHeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The share group member has a greater member epoch ({epoch}) than the one known "
            f"by the group coordinator ({member.member_epoch}). The member must abandon all "
            "its partitions and rejoin.")
    if epoch < member.member_epoch and epoch != member.previous_member_epoch:
        raise ShareHeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The share group member has a smaller member epoch ({epoch}) than the one known "
            f"by the group coordinator ({member.member_epoch}). The member must abandon all "
            "its partitions and rejoin.")
    return member


def _heartbeat(
    manager: GroupManager, ctx: RequestContext, req: ShareGroupHeartbeatRequest, now_ms: int,
    fx: Effects,
) -> dict[str, Any]:
    _validate(req)
    epoch = req["member_epoch"]
    if epoch == LEAVE_GROUP_MEMBER_EPOCH:
        return _leave(manager, req, fx)
    group = share_group_for(manager, req["group_id"], create=epoch == 0)
    member_id = req["member_id"]
    member = _member_of(manager, group, member_id, epoch)
    new_member = member_id not in group.members
    old_assigned = member.assigned
    old = member.metadata_value()
    names = req["subscribed_topic_names"]
    updated = ShareGroupMemberMetadataValue(
        rack_id=req["rack_id"] if req["rack_id"] is not None else old.rack_id,
        client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        subscribed_topic_names=(tuple(sorted(set(names))) if names is not None
                                else old.subscribed_topic_names),
    )
    writer = RecordWriter(group, fx)
    subscription_changed = new_member or (
        updated.subscribed_topic_names != old.subscribed_topic_names)
    if new_member or updated != old:
        writer.write(ShareGroupMemberMetadataKey(group.group_id, member_id), updated)
        member = group.members[member_id]

    subscribed, metadata_hash = group.subscriptions(manager.topics_image)
    if subscription_changed or metadata_hash != group.metadata_hash:
        writer.write(ShareGroupMetadataKey(group.group_id),
                     ShareGroupMetadataValue(group.group_epoch + 1, metadata_hash))
    if group.group_epoch > group.assignment_epoch:
        _assign_target(manager, group, subscribed, writer)
    if subscription_changed or member.member_epoch != group.assignment_epoch:
        _reconcile(group, member, writer)

    fx.schedule(ShareSessionTimerKey(group.group_id, member_id),
                now_ms + manager.config.group_share_session_timeout_ms)
    response: dict[str, Any] = {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "member_id": member_id,
        "member_epoch": member.member_epoch,
        "heartbeat_interval_ms": manager.config.group_share_heartbeat_interval_ms,
    }
    # Kafka answers with the assignment on a join and when it changed; kcoord also when the
    # member heartbeats from its previous epoch: it lost the answer that carried the change.
    if epoch == 0 or member.assigned != old_assigned or epoch != member.member_epoch:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": tp.topic_id, "partitions": list(tp.partitions)}
            for tp in to_topic_partitions(member.assigned)
        ]}
    return response


def _assign_target(
    manager: GroupManager, group: ShareGroup, subscribed: dict[str, frozenset[uuid.UUID]],
    writer: RecordWriter,
) -> None:
    """Recompute the target assignment at the group epoch (Kafka's updateTargetAssignment
    with the simple assignor); only changed members' targets get a record. Newly assigned
    topic partitions are recorded as initialized (the module docstring)."""
    image = manager.topics_image
    counts = {tid: image.by_name[image.by_id[tid]][1]
              for ids in subscribed.values() for tid in ids}
    current = {mid: dict(group.target_of(mid)) for mid in group.members}
    new_target = simple_assign(subscribed, counts, current)
    gid = group.group_id
    for mid in group.members:
        assignment: PartitionMap = new_target.get(mid, {})
        if mid not in group.target or dict(assignment) != dict(group.target_of(mid)):
            writer.write(ShareGroupTargetAssignmentMemberKey(gid, mid),
                         ShareGroupTargetAssignmentMemberValue(to_topic_partitions(assignment)))
    writer.write(ShareGroupTargetAssignmentMetadataKey(gid),
                 ShareGroupTargetAssignmentMetadataValue(group.group_epoch))
    initialized = dict(group.initialized)
    for assignment in new_target.values():
        for tid, parts in assignment.items():
            name, known = initialized.get(tid, (image.by_id[tid], frozenset()))
            if not parts <= known:
                initialized[tid] = (name, known | parts)
    if initialized != group.initialized:
        writer.write(ShareGroupStatePartitionMetadataKey(gid), state_partitions_value(initialized))


def _reconcile(group: ShareGroup, member: ShareMember, writer: RecordWriter) -> None:
    """Move the member to the target assignment at the assignment epoch (Kafka's
    ShareGroupAssignmentBuilder: a share member has no partitions to revoke first)."""
    moved = ShareMember(member.member_id)
    moved.previous_member_epoch = member.member_epoch
    moved.member_epoch = group.assignment_epoch
    moved.assigned = group.target_of(member.member_id)
    if (moved.member_epoch, moved.assigned) != (member.member_epoch, member.assigned):
        writer.write(ShareGroupCurrentMemberAssignmentKey(group.group_id, member.member_id),
                     moved.current_value())


def _leave(manager: GroupManager, req: ShareGroupHeartbeatRequest, fx: Effects) -> dict[str, Any]:
    """Kafka's shareGroupLeave: the member is fenced and the group epoch bumped."""
    group = share_group_for(manager, req["group_id"], create=False)
    member_id = req["member_id"]
    member = group.members.get(member_id)
    if member is None:
        raise ShareHeartbeatError(
            ErrorCode.UNKNOWN_MEMBER_ID,
            f"Member {member_id} is not a member of group {group.group_id}.")
    fence_share_member(manager, group, member, fx)
    return {"error_code": ErrorCode.NONE, "error_message": None, "member_id": member_id,
            "member_epoch": LEAVE_GROUP_MEMBER_EPOCH, "heartbeat_interval_ms": 0}


def fence_share_member(manager: GroupManager, group: ShareGroup, member: ShareMember,
                       fx: Effects) -> None:
    """Remove the member (its three tombstones) and bump the group epoch (Kafka's
    shareGroupFenceMember); its partitions go to the others at the next assignment."""
    writer = RecordWriter(group, fx)
    gid, mid = group.group_id, member.member_id
    writer.write(ShareGroupCurrentMemberAssignmentKey(gid, mid), None)
    writer.write(ShareGroupTargetAssignmentMemberKey(gid, mid), None)
    writer.write(ShareGroupMemberMetadataKey(gid, mid), None)
    _, metadata_hash = group.subscriptions(manager.topics_image)
    writer.write(ShareGroupMetadataKey(gid),
                 ShareGroupMetadataValue(group.group_epoch + 1, metadata_hash))
    fx.cancel(ShareSessionTimerKey(gid, mid))


def expire_share_member(manager: GroupManager, key: ShareSessionTimerKey, fx: Effects) -> None:
    """A share member's session timed out: it is fenced (as a leave)."""
    group = manager.share_groups.get(key.group_id)
    member = None if group is None else group.members.get(key.member_id)
    if group is None or member is None:
        return
    fence_share_member(manager, group, member, fx)
    fx.after_append(RebuildShareGroupOnFailure(manager, group.group_id, None))


class RebuildShareGroupOnFailure(RebuildOnFailure):
    """A share group whose records did not reach the log: rebuilt from hard state, its
    members' sessions re-armed (a fence that did not reach the log had cancelled one); the
    member hears the mapped error."""

    __slots__ = ()

    def rebuild(self, now_ms: int, fx: Effects) -> None:
        group = rebuild(self.manager, SHARE, self.group_id)
        if group is not None:
            arm_sessions(self.manager, SHARE, group, now_ms, fx)

    def error_response(self, code: ErrorCode) -> Any:
        return _error_response(code, None)
