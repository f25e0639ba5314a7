"""Heartbeat (API 12), versions 0-4 (v3 adds group.instance.id).

Per state (GroupCoordinator.handleHeartbeat): Empty -> UNKNOWN_MEMBER_ID; PreparingRebalance
-> REBALANCE_IN_PROGRESS with the session still refreshed; CompletingRebalance / Stable ->
NONE and refresh; Dead -> COORDINATOR_NOT_AVAILABLE. Member then generation are validated
first. This is the hot path: no Effects, responses are shared constants.
"""

from __future__ import annotations

from coordinator.core.classic.state import DEAD, EMPTY, PREPARING_REBALANCE
from coordinator.core.consumer.classic_members import classic_heartbeat_to_consumer_group
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import HeartbeatRequest, HeartbeatResponse, RequestContext
from coordinator.core.result import (
    Reply,
    ReplyToken,
    Result,
    ScheduleTimer,
    new_tuple,
    unchanged,
)
from wire.constants import ErrorCode

__all__ = ["handle_heartbeat"]

# Shared answers: nothing downstream mutates a response.
_RESPONSES: dict[ErrorCode, HeartbeatResponse] = {e: {"error_code": e} for e in ErrorCode}
_NONE = _RESPONSES[ErrorCode.NONE]
_REBALANCE = _RESPONSES[ErrorCode.REBALANCE_IN_PROGRESS]


def _answer(token: ReplyToken, error: ErrorCode) -> Result:
    return Result((), (Reply(token, _RESPONSES[error]),), (), (), (), unchanged)


def handle_heartbeat(
    manager: GroupManager, ctx: RequestContext, req: HeartbeatRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one Heartbeat."""
    group_id = req["group_id"]
    if not group_id:
        return _answer(token, ErrorCode.INVALID_GROUP_ID)
    group = manager.groups.get(group_id)
    if group is None:
        consumer_group = manager.consumer_groups.get(group_id)
        if consumer_group is None:
            return _answer(token, ErrorCode.UNKNOWN_MEMBER_ID)
        # A classic member inside a consumer group.
        fx = manager.effects()
        error = classic_heartbeat_to_consumer_group(manager, consumer_group, req, now_ms, fx)
        fx.reply(token, _RESPONSES[error])
        return fx.result()
    state = group.state
    if state is DEAD:
        return _answer(token, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    member_id = req["member_id"]
    instance_id = req["group_instance_id"]
    if instance_id is not None:
        current = group.static_members.get(instance_id)
        if current is None:
            return _answer(token, ErrorCode.UNKNOWN_MEMBER_ID)
        if current != member_id:
            return _answer(token, ErrorCode.FENCED_INSTANCE_ID)
    member = group.members.get(member_id)
    if member is None:
        return _answer(token, ErrorCode.UNKNOWN_MEMBER_ID)
    if req["generation_id"] != group.generation_id:
        return _answer(token, ErrorCode.ILLEGAL_GENERATION)
    if state is EMPTY:
        return _answer(token, ErrorCode.UNKNOWN_MEMBER_ID)
    deadline = now_ms + member.session_timeout_ms
    member.heartbeat_deadline = deadline
    response = _REBALANCE if state is PREPARING_REBALANCE else _NONE
    return new_tuple(Result, (  # (at_once)
        (), (new_tuple(Reply, (token, response)),),
        (new_tuple(ScheduleTimer, (member.heartbeat_key, deadline)),), (), (), unchanged))
