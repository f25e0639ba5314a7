"""SyncGroup (API 14), versions 0-5.

Version notes: v3 adds group.instance.id; v5 adds protocol type and name both ways (KIP-559):
when given they must match the group's, else INCONSISTENT_GROUP_PROTOCOL.
Decision procedure: GroupCoordinator.handleSyncGroup / doSyncGroup; followers park in
CompletingRebalance until the leader's assignment arrives, which is persisted with the group.
"""

from __future__ import annotations

from coordinator.core.engine import Engine, valid_group_id
from coordinator.core.join import validate_current_member
from coordinator.core.messages import SyncGroupRequest, SyncGroupResponse
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from wire.constants import ErrorCode

__all__ = ["handle_sync_group"]


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def handle_sync_group(
    engine: Engine, req: SyncGroupRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one SyncGroup; followers' replies are parked until the leader syncs."""
    if not valid_group_id(req.group_id, allow_empty=False):
        fx.reply(token, SyncGroupResponse(error_code=ErrorCode.INVALID_GROUP_ID))
        return
    group = engine.groups.get(req.group_id)
    if group is None:
        fx.reply(token, SyncGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID))
        return
    member_id = req.member_id
    if group.state is DEAD:
        error: ErrorCode | None = ErrorCode.COORDINATOR_NOT_AVAILABLE
    else:
        error = validate_current_member(group, member_id, req.group_instance_id)
        if error is None:
            if req.generation_id != group.generation_id:
                error = ErrorCode.ILLEGAL_GENERATION
            elif _inconsistent(req.protocol_type, group.protocol_type) or _inconsistent(
                req.protocol_name, group.protocol_name
            ):
                error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    if error is not None:
        fx.reply(token, SyncGroupResponse(error_code=error))
        return

    state = group.state
    if state is EMPTY:
        fx.reply(token, SyncGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID))
    elif state is PREPARING_REBALANCE:
        fx.reply(token, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
    elif state is COMPLETING_REBALANCE:
        member = group.members[member_id]
        if member.sync_token is not None:
            # Kafka overwrites the older parked SyncGroup; kcoord answers it instead.
            group.complete_sync(
                member, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS), fx
            )
        member.sync_token = token
        engine.remove_pending_sync_member(group, member_id, fx)
        if group.is_leader(member_id):
            assignment: dict[str, bytes] = {}
            for assigned_id, data in req.assignments:
                assignment[assigned_id] = bytes(data)
            for other_id in group.members:
                assignment.setdefault(other_id, b"")
            # Persist, then (the append being part of this same result) go Stable.
            engine.store_group(group, assignment, fx)
            engine.set_and_propagate_assignment(group, assignment, now_ms, fx)
            group.transition_to(STABLE, now_ms)
    elif state is STABLE:
        engine.remove_pending_sync_member(group, member_id, fx)
        member = group.members[member_id]
        fx.reply(
            token,
            SyncGroupResponse(
                error_code=ErrorCode.NONE,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                assignment=member.assignment,
            ),
        )
        engine.reschedule_heartbeat(member, now_ms, fx)
