"""SyncGroup (API 14), versions 0-5.

Version notes: v3 adds group.instance.id; v5 adds protocol type and name both ways (KIP-559):
when given they must match the group's, else INCONSISTENT_GROUP_PROTOCOL.
Decision procedure: GroupCoordinator.handleSyncGroup / doSyncGroup; followers park in
CompletingRebalance until the leader's assignment arrives, which is persisted with the group.
"""

from __future__ import annotations

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_size import MAX_GROUP_RECORD_BYTES, group_record_bytes
from coordinator.core.classic.join import validate_current_member
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from coordinator.core.consumer.classic_members import classic_sync_to_consumer_group
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    RequestContext,
    SyncGroupRequest,
    SyncGroupResponse,
    sync_group_error,
)
from coordinator.core.result import Effects, ReplyToken, Result
from wire.constants import ErrorCode

__all__ = ["handle_sync_group"]


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def handle_sync_group(
    manager: GroupManager, ctx: RequestContext, req: SyncGroupRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one SyncGroup; followers' replies are parked until the leader's assignment is
    in the log."""
    fx = manager.effects()
    _sync_group(manager, req, token, now_ms, fx)
    return fx.result()


def _sync_group(
    manager: GroupManager, req: SyncGroupRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    group_id = req["group_id"]
    if not valid_group_id(group_id, allow_empty=False):
        fx.reply(token, sync_group_error(ErrorCode.INVALID_GROUP_ID))
        return
    group = manager.groups.get(group_id)
    if group is None:
        consumer_group = manager.consumer_groups.get(group_id)
        if consumer_group is not None:  # a classic member inside a consumer group
            fx.reply(token, classic_sync_to_consumer_group(manager, consumer_group, req, now_ms,
                                                           fx))
            return
        fx.reply(token, sync_group_error(ErrorCode.UNKNOWN_MEMBER_ID))
        return
    member_id = req["member_id"]
    generation = req["generation_id"]
    if group.state is DEAD:
        error: ErrorCode | None = ErrorCode.COORDINATOR_NOT_AVAILABLE
    else:
        error = validate_current_member(group, member_id, req["group_instance_id"])
        if error is None:
            if generation != group.generation_id:
                error = ErrorCode.ILLEGAL_GENERATION
            elif _inconsistent(req["protocol_type"], group.protocol_type) or _inconsistent(
                req["protocol_name"], group.protocol_name
            ):
                error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    if error is not None:
        fx.reply(token, sync_group_error(error))
        return

    state = group.state
    if state is EMPTY:
        fx.reply(token, sync_group_error(ErrorCode.UNKNOWN_MEMBER_ID))
    elif state is PREPARING_REBALANCE:
        fx.reply(token, sync_group_error(ErrorCode.REBALANCE_IN_PROGRESS))
    elif state is COMPLETING_REBALANCE:
        member = group.members[member_id]
        if member.sync_token is not None:
            # Kafka overwrites the older parked SyncGroup; kcoord answers it instead.
            group.complete_sync(member, sync_group_error(ErrorCode.REBALANCE_IN_PROGRESS), fx)
        member.sync_token = token
        manager.remove_pending_sync_member(group, member_id, fx)
        if group.is_leader(member_id):
            assignment: dict[str, bytes] = {}
            for a in req["assignments"]:
                assignment[a["member_id"]] = bytes(a["assignment"])
            for other_id in group.members:
                assignment.setdefault(other_id, b"")
            if group_record_bytes(group, assignment) > MAX_GROUP_RECORD_BYTES:
                # An assignment the log could not store (group_size.py): every member
                # awaiting it gets MESSAGE_TOO_LARGE, and the group rebalances.
                manager.reset_and_propagate_assignment_error(
                    group, ErrorCode.MESSAGE_TOO_LARGE, now_ms, fx)
                manager.maybe_prepare_rebalance(
                    group, now_ms, f"assignment from {member_id} too large to store", fx)
                return
            # The group stays CompletingRebalance until the assignment is in the log.
            manager.store_group(group, assignment, fx)
            fx.after_append(_StoredAssignment(manager, group, generation, member_id, assignment))
    elif state is STABLE:
        manager.remove_pending_sync_member(group, member_id, fx)
        member = group.members[member_id]
        response: SyncGroupResponse = {
            "error_code": ErrorCode.NONE,
            "protocol_type": group.protocol_type,
            "protocol_name": group.protocol_name,
            "assignment": member.assignment,
        }
        fx.reply(token, response)
        manager.reschedule_heartbeat(member, now_ms, fx)


class _StoredAssignment:
    """The append outcome of a leader's assignment (Kafka's doSyncGroup callback). Another
    member may have joined meanwhile: only a group still CompletingRebalance in the same
    generation is touched."""

    __slots__ = ("assignment", "generation", "group", "manager", "member_id")

    def __init__(
        self,
        manager: GroupManager,
        group: ClassicGroup,
        generation: int,
        member_id: str,
        assignment: dict[str, bytes],
    ) -> None:
        self.manager = manager
        self.group = group
        self.generation = generation
        self.member_id = member_id
        self.assignment = assignment

    def _current(self) -> bool:
        group = self.group
        return (
            self.manager.groups.get(group.group_id) is group
            and group.state is COMPLETING_REBALANCE
            and group.generation_id == self.generation
        )

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Hand every member its assignment and go Stable."""
        if self._current():
            self.manager.set_and_propagate_assignment(self.group, self.assignment, now_ms, fx)
            self.group.transition_to(STABLE, now_ms)

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Answer every parked SyncGroup with the mapped error and rebalance."""
        if not self._current():
            return
        code = group_metadata_error(error)
        self.manager.reset_and_propagate_assignment_error(self.group, code, now_ms, fx)
        self.manager.maybe_prepare_rebalance(
            self.group,
            now_ms,
            f"Error {code.name} when storing group assignment during SyncGroup "
            f"(member: {self.member_id})",
            fx,
        )
