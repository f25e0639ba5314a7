"""LeaveGroup (API 13), versions 0-5.

Version notes: v0-2 carry one member id and the response has only a top-level error, to
which the member's error is copied (LeaveGroupResponse's constructor); v3 batches members
with group.instance.id (KIP-345: member id "" + instance id removes by instance id); v5 adds
a per-member reason (KIP-800). Decision procedure: GroupCoordinator.handleLeaveGroup.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.join import validate_current_member
from coordinator.core.classic.state import DEAD
from coordinator.core.consumer.classic_members import (
    LeaveRebuildOnFailure,
    classic_leave_to_consumer_group,
)
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    MemberIdentity,
    RequestContext,
)
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.timers import HeartbeatTimerKey
from wire.constants import ErrorCode

__all__ = ["handle_leave_group"]


def handle_leave_group(
    manager: GroupManager, ctx: RequestContext, req: LeaveGroupRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one LeaveGroup."""
    fx = manager.effects()
    legacy = ctx.api_version < 3
    if legacy:  # v0-2: one member id, no batch
        identities: Sequence[MemberIdentity] = (
            {"member_id": req["member_id"], "group_instance_id": None, "reason": None},
        )
    else:
        identities = req["members"]
    group_id = req["group_id"]
    of_consumer_group = group_id in manager.consumer_groups
    response = _leave(manager, group_id, identities, now_ms, fx)
    if of_consumer_group and fx.records:  # classic members left: answered once in the log
        fx.after_append(LeaveRebuildOnFailure(manager, group_id, token))
    if legacy and response["error_code"] == ErrorCode.NONE and response["members"]:
        # v0-2 answers with the member's error at the top level (LeaveGroupResponse's
        # constructor does the same).
        response = {"error_code": response["members"][0]["error_code"],
                    "members": response["members"]}
    fx.reply(token, response)
    return fx.result()


def _leave(
    manager: GroupManager,
    group_id: str,
    identities: Sequence[MemberIdentity],
    now_ms: int,
    fx: Effects,
) -> LeaveGroupResponse:
    if not valid_group_id(group_id, allow_empty=False):
        return {"error_code": ErrorCode.INVALID_GROUP_ID, "members": ()}
    if group_id in manager.share_groups:  # Kafka: UnknownMemberIdException, for the request
        return {"error_code": ErrorCode.UNKNOWN_MEMBER_ID, "members": ()}
    group = manager.groups.get(group_id)
    consumer_group = manager.consumer_groups.get(group_id)
    if group is None and consumer_group is not None:  # classic members of a consumer group
        return classic_leave_to_consumer_group(manager, consumer_group, list(identities), now_ms,
                                               fx)
    if group is None:
        return {
            "error_code": ErrorCode.NONE,
            "members": tuple(
                LeaveGroupResponseMember(
                    member_id=m["member_id"],
                    group_instance_id=m["group_instance_id"],
                    error_code=ErrorCode.UNKNOWN_MEMBER_ID,
                )
                for m in identities
            ),
        }
    if group.state is DEAD:
        return {"error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "members": ()}
    results = []
    for identity in identities:
        error = _leave_one(manager, group, identity, now_ms, fx)
        results.append(
            LeaveGroupResponseMember(
                member_id=identity["member_id"],
                group_instance_id=identity["group_instance_id"],
                error_code=error,
            )
        )
    return {"error_code": ErrorCode.NONE, "members": tuple(results)}


def _leave_one(
    manager: GroupManager, group: ClassicGroup, identity: MemberIdentity, now_ms: int, fx: Effects
) -> ErrorCode:
    member_id = identity["member_id"]
    instance_id = identity["group_instance_id"]
    reason = identity["reason"]
    if member_id == "":
        # Administrative removal by group.instance.id.
        current = None if instance_id is None else group.static_members.get(instance_id)
        if current is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        _remove_current_member(manager, group, current, reason, now_ms, fx)
        return ErrorCode.NONE
    if member_id in group.pending_members:
        fx.cancel(HeartbeatTimerKey(group.group_id, member_id))
        manager.remove_pending_member_and_update_group(group, member_id, now_ms, fx)
        return ErrorCode.NONE
    error = validate_current_member(group, member_id, instance_id)
    if error is not None:
        return error
    _remove_current_member(manager, group, member_id, reason, now_ms, fx)
    return ErrorCode.NONE


def _remove_current_member(
    manager: GroupManager,
    group: ClassicGroup,
    member_id: str,
    reason: str | None,
    now_ms: int,
    fx: Effects,
) -> None:
    member = group.members[member_id]
    manager.event(fx, group, "member_leave", now_ms, reason=reason or "", member=member)
    manager.cancel_heartbeat(member, fx)
    manager.remove_member_and_update_group(group, member, now_ms, "member leave", fx)
