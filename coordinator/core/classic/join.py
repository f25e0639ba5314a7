"""JoinGroup (API 11), versions 0-9.

Version notes (what the coordinator does differently):
- v0: no rebalance timeout; the session timeout is used (``maybeOverrideRebalanceTimeout``).
- v4: KIP-394 -- a dynamic member joining with an empty member id is given an id and told to
  rejoin (MEMBER_ID_REQUIRED); the id waits in the group's pending set. v0-3 join at once.
- v5: group.instance.id (KIP-345 static membership).
- v7: protocol type in the response (KIP-559); v8: reason (KIP-800, logged only).
- v9: skip_assignment for a static leader rejoining a Stable group (KIP-814).
Decision procedure: GroupCoordinator.handleJoinGroup / doNewMemberJoinGroup /
doCurrentMemberJoinGroup / updateStaticMemberAndRebalance.
"""

from __future__ import annotations

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member, Protocols
from coordinator.core.classic.group_size import MAX_GROUP_RECORD_BYTES, joined_record_bytes
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from coordinator.core.consumer.classic_members import classic_join_to_consumer_group
from coordinator.core.consumer.records import drop_empty_consumer_group
from coordinator.core.errors import CoordinatorStateError
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    JoinGroupRequest,
    RequestContext,
    join_group_error,
)
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.timers import NEW_MEMBER_JOIN_TIMEOUT_MS, HeartbeatTimerKey
from wire.constants import ErrorCode

__all__ = ["handle_join_group", "validate_current_member"]


def _error(token: ReplyToken, member_id: str, error: ErrorCode, fx: Effects) -> None:
    fx.reply(token, join_group_error(error, member_id))


def validate_current_member(
    group: ClassicGroup, member_id: str, group_instance_id: str | None
) -> ErrorCode | None:
    """Kafka's validateCurrentMember: instance id mapped to another member id is fenced; an
    unknown instance id or member id is UNKNOWN_MEMBER_ID."""
    if group_instance_id is not None:
        current = group.static_members.get(group_instance_id)
        if current is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if current != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
        return None
    if member_id not in group.members:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def _accept_joining_member(manager: GroupManager, group: ClassicGroup, member_id: str) -> bool:
    """KIP-389 admission: while preparing, count awaiting members so the last rejoiners are
    the ones kicked out when the group is over capacity."""
    state = group.state
    max_size = manager.config.group_max_size
    if state is EMPTY or state is DEAD:
        return True
    if state is PREPARING_REBALANCE:
        member = group.members.get(member_id)
        if member is not None and member.join_token is not None:
            return True
        return group.num_awaiting_join < max_size
    return member_id in group.members or len(group.members) < max_size


def handle_join_group(
    manager: GroupManager, ctx: RequestContext, req: JoinGroupRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one JoinGroup; the reply may be parked until the join phase completes."""
    fx = manager.effects()
    _join_group(manager, ctx, req, token, now_ms, fx)
    return fx.result()


def _protocols(req: JoinGroupRequest) -> Protocols:
    return tuple((p["name"], bytes(p["metadata"])) for p in req["protocols"])


def _rebalance_timeout(ctx: RequestContext, req: JoinGroupRequest) -> int:
    # v0 has no rebalance timeout: Kafka uses the session timeout.
    return req["session_timeout_ms"] if ctx.api_version == 0 else req["rebalance_timeout_ms"]


def _join_group(
    manager: GroupManager,
    ctx: RequestContext,
    req: JoinGroupRequest,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    group_id = req["group_id"]
    if not valid_group_id(group_id, allow_empty=False):
        _error(token, req["member_id"], ErrorCode.INVALID_GROUP_ID, fx)
        return
    config = manager.config
    session_timeout = req["session_timeout_ms"]
    if not (
        config.group_min_session_timeout_ms
        <= session_timeout
        <= config.group_max_session_timeout_ms
    ):
        _error(token, req["member_id"], ErrorCode.INVALID_SESSION_TIMEOUT, fx)
        return
    if group_id in manager.share_groups:  # Kafka: the group exists but is no consumer group
        _error(token, "", ErrorCode.INCONSISTENT_GROUP_PROTOCOL, fx)
        return
    is_unknown = req["member_id"] == ""
    consumer_group = manager.consumer_groups.get(group_id)
    if consumer_group is not None:
        if consumer_group.members:
            # A classic member inside a consumer group (KIP-848 online migration).
            classic_join_to_consumer_group(manager, consumer_group, ctx, req, token, now_ms, fx)
            return
        drop_empty_consumer_group(manager, consumer_group, fx)
    group = manager.groups.get(group_id)
    if group is None and not is_unknown:
        _error(token, req["member_id"], ErrorCode.UNKNOWN_MEMBER_ID, fx)
        return
    if joined_record_bytes(group, req["member_id"], req["group_instance_id"],
                           ctx.client_id or "", ctx.client_host,
                           _protocols(req)) > MAX_GROUP_RECORD_BYTES:
        # The group's record could no longer be stored (group_size.py).
        _error(token, req["member_id"], ErrorCode.MESSAGE_TOO_LARGE, fx)
        return
    if group is None:
        group = ClassicGroup(group_id, EMPTY, now_ms)
        manager.groups[group_id] = group

    if not _accept_joining_member(manager, group, req["member_id"]):
        member = group.members.get(req["member_id"])
        group.remove(req["member_id"])
        if member is not None:
            manager.cancel_heartbeat(member, fx)
            manager.event(fx, group, "member_leave", now_ms, reason="group max size reached",
                         member=member)
        _error(token, "", ErrorCode.GROUP_MAX_SIZE_REACHED, fx)
    elif is_unknown:
        _join_new_member(manager, group, ctx, req, token, now_ms, fx)
    else:
        _join_current_member(manager, group, ctx, req, token, now_ms, fx)

    if group.state is PREPARING_REBALANCE:
        manager.maybe_complete_join(group, now_ms, fx)


def _join_new_member(
    manager: GroupManager,
    group: ClassicGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    protocols = _protocols(req)
    if group.state is DEAD:
        _error(token, "", ErrorCode.COORDINATOR_NOT_AVAILABLE, fx)
        return
    if not group.supports_protocols(req["protocol_type"], (name for name, _ in protocols)):
        _error(token, "", ErrorCode.INCONSISTENT_GROUP_PROTOCOL, fx)
        return
    instance_id = req["group_instance_id"]
    new_member_id = manager.new_member_id(ctx.client_id or "", instance_id)
    if instance_id is not None:
        old_member_id = group.static_members.get(instance_id)
        if old_member_id is not None:
            _update_static_member_and_rebalance(
                manager, group, ctx, req, protocols, old_member_id, new_member_id, token, now_ms, fx
            )
        else:
            _add_member_and_rebalance(manager, group, ctx, req, protocols, new_member_id, token,
                                      now_ms, fx)
    elif ctx.api_version >= 4:
        # KIP-394: hand out an id and wait for the member to come back with it.
        deadline = now_ms + req["session_timeout_ms"]
        group.add_pending_member(new_member_id, deadline)
        fx.schedule(HeartbeatTimerKey(group.group_id, new_member_id), deadline)
        _error(token, new_member_id, ErrorCode.MEMBER_ID_REQUIRED, fx)
    else:
        _add_member_and_rebalance(manager, group, ctx, req, protocols, new_member_id, token,
                                  now_ms, fx)


def _join_current_member(
    manager: GroupManager,
    group: ClassicGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    member_id = req["member_id"]
    protocols = _protocols(req)
    if group.state is DEAD:
        _error(token, member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE, fx)
        return
    if not group.supports_protocols(req["protocol_type"], (name for name, _ in protocols)):
        _error(token, member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, fx)
        return
    if member_id in group.pending_members:
        instance_id = req["group_instance_id"]
        if instance_id is not None:
            raise CoordinatorStateError(
                f"Received unexpected JoinGroup with groupInstanceId={instance_id} "
                f"for pending member with memberId={member_id}"
            )
        _add_member_and_rebalance(manager, group, ctx, req, protocols, member_id, token, now_ms, fx)
        return
    error = validate_current_member(group, member_id, req["group_instance_id"])
    if error is not None:
        _error(token, member_id, error, fx)
        return
    member = group.members[member_id]
    state = group.state
    if state is PREPARING_REBALANCE:
        _update_member_and_rebalance(manager, group, member, ctx, req, protocols, token, now_ms,
                                     "member join", fx)
    elif state is COMPLETING_REBALANCE:
        if member.matches(protocols):
            # Same metadata (the member probably lost the first answer): resend the generation.
            _reply_current_generation(group, member_id, token, fx, with_members=True)
        else:
            _update_member_and_rebalance(manager, group, member, ctx, req, protocols, token, now_ms,
                                         "member metadata changed", fx)
    elif state is STABLE:
        if group.is_leader(member_id):
            # A leader rejoin forces a rebalance so it can react to metadata changes.
            _update_member_and_rebalance(manager, group, member, ctx, req, protocols, token, now_ms,
                                         "leader rejoin", fx)
        elif not member.matches(protocols):
            _update_member_and_rebalance(manager, group, member, ctx, req, protocols, token, now_ms,
                                         "member metadata changed", fx)
        else:
            _reply_current_generation(group, member_id, token, fx, with_members=False)
    else:
        _error(token, member_id, ErrorCode.UNKNOWN_MEMBER_ID, fx)


def _reply_current_generation(
    group: ClassicGroup, member_id: str, token: ReplyToken, fx: Effects, *, with_members: bool
) -> None:
    is_leader = group.is_leader(member_id)
    members = group.current_member_metadata() if with_members and is_leader else ()
    fx.reply(token, group.join_response(member_id, leader=group.leader_id, members=members))


def _park_join(group: ClassicGroup, member: Member, token: ReplyToken, fx: Effects) -> None:
    # Kafka overwrites a still-parked JoinGroup of the same member, stranding the older
    # request; kcoord answers that older request so no reply token is lost.
    if member.join_token is not None:
        group.complete_join(
            member, join_group_error(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id), fx
        )


def _update_member_and_rebalance(
    manager: GroupManager,
    group: ClassicGroup,
    member: Member,
    ctx: RequestContext,
    req: JoinGroupRequest,
    protocols: Protocols,
    token: ReplyToken,
    now_ms: int,
    reason: str,
    fx: Effects,
) -> None:
    _park_join(group, member, token, fx)
    group.update_member(
        member, protocols, _rebalance_timeout(ctx, req), req["session_timeout_ms"], token
    )
    manager.maybe_prepare_rebalance(group, now_ms, reason, fx)


def _add_member_and_rebalance(
    manager: GroupManager,
    group: ClassicGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    protocols: Protocols,
    member_id: str,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    member = Member(
        group.group_id,
        member_id,
        req["group_instance_id"],
        ctx.client_id or "",
        ctx.client_host,
        _rebalance_timeout(ctx, req),
        req["session_timeout_ms"],
        req["protocol_type"],
        protocols,
    )
    member.is_new = True
    # A member arriving during the initial delay lets the delay be extended.
    if group.state is PREPARING_REBALANCE and group.initial_delay is not None:
        group.new_member_added = True
    group.add(member, token)
    # New members cannot heartbeat yet; their parked JoinGroup expires after 5 minutes.
    manager.reschedule_heartbeat(member, now_ms, fx, NEW_MEMBER_JOIN_TIMEOUT_MS)
    manager.event(fx, group, "member_join", now_ms, reason=req["reason"] or "", member=member)
    manager.maybe_prepare_rebalance(group, now_ms, "member join", fx)


def _update_static_member_and_rebalance(
    manager: GroupManager,
    group: ClassicGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    protocols: Protocols,
    old_member_id: str,
    new_member_id: str,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    instance_id = req["group_instance_id"]
    assert instance_id is not None
    current_leader = group.leader_id
    member = group.members[old_member_id]
    old_protocols = member.protocols
    old_rebalance_timeout_ms = member.rebalance_timeout_ms
    old_session_timeout_ms = member.session_timeout_ms
    manager.cancel_heartbeat(member, fx)
    group.replace_static_member(instance_id, old_member_id, new_member_id, fx)
    manager.reschedule_heartbeat(member, now_ms, fx)
    manager.event(fx, group, "static_replace", now_ms, reason=f"replaced {old_member_id}",
                 member=member)
    group.update_member(
        member, protocols, _rebalance_timeout(ctx, req), req["session_timeout_ms"], token
    )
    state = group.state
    if state is STABLE:
        if group.protocol_name == group.select_protocol():
            # Same selected protocol: no rebalance, just persist the new member id. The
            # member's JoinGroup is answered once that record is in the log.
            manager.store_group(group, group.group_assignment(), fx)
            fx.after_append(_PersistedReplacement(
                manager, group, instance_id, old_member_id, new_member_id, current_leader,
                (old_protocols, old_rebalance_timeout_ms, old_session_timeout_ms),
                ctx.api_version >= 9,
            ))
        else:
            manager.maybe_prepare_rebalance(
                group, now_ms, "static member replaced with protocol change", fx
            )
    elif state is COMPLETING_REBALANCE:
        # The leader may already have assigned to the old member id: rebalance.
        manager.prepare_rebalance(group, now_ms, "static member replaced", fx)
    elif state is EMPTY or state is DEAD:
        raise CoordinatorStateError(
            f"Group {group.group_id} was not supposed to be in the state {state.value} "
            f"when the unknown static member {instance_id} rejoins."
        )


class _PersistedReplacement:
    """The append outcome of a static member's replacement in a Stable group (Kafka's
    updateStaticMemberAndRebalance callback): answer the JoinGroup, or revert."""

    __slots__ = (
        "current_leader",
        "group",
        "instance_id",
        "manager",
        "new_member_id",
        "old_member",
        "old_member_id",
        "skip_assignment_supported",
    )

    def __init__(
        self,
        manager: GroupManager,
        group: ClassicGroup,
        instance_id: str,
        old_member_id: str,
        new_member_id: str,
        current_leader: str | None,
        old_member: tuple[Protocols, int, int],
        skip_assignment_supported: bool,
    ) -> None:
        self.manager = manager
        self.group = group
        self.instance_id = instance_id
        self.old_member_id = old_member_id
        self.new_member_id = new_member_id
        self.current_leader = current_leader
        self.old_member = old_member
        self.skip_assignment_supported = skip_assignment_supported

    def _member(self) -> Member | None:
        """The replacement, if it is still the instance's member of the live group."""
        group = self.group
        if self.manager.groups.get(group.group_id) is not group:
            return None
        if group.static_members.get(self.instance_id) != self.new_member_id:
            return None
        return group.members.get(self.new_member_id)

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Answer the new member id's JoinGroup."""
        group = self.group
        member = self._member()
        if member is None or member.join_token is None or group.state is not STABLE:
            # The member left, or a rebalance started meanwhile: the rebalance answers its
            # parked JoinGroup with the next generation.
            return
        new_member_id = self.new_member_id
        if self.skip_assignment_supported:
            is_leader = group.is_leader(new_member_id)
            response = group.join_response(
                new_member_id,
                leader=group.leader_id,
                members=group.current_member_metadata() if is_leader else (),
                skip_assignment=is_leader,
            )
        else:
            # Pre-v9: answer with the old leader id so a rejoining leader does not think it
            # leads and run a pointless assignment a Stable group would ignore.
            response = group.join_response(new_member_id, leader=self.current_leader)
        group.complete_join(member, response, fx)

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Give the instance its old member id, protocols and timeouts back, re-arm the old
        id's session, and answer the JoinGroup with the mapped error."""
        group = self.group
        member = self._member()
        if member is None or member.join_token is None:
            # The replacement left, or a rebalance answered its JoinGroup with the new id:
            # the client knows that id now, so it stays.
            return
        token = member.join_token
        protocols, rebalance_timeout_ms, session_timeout_ms = self.old_member
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, None)
        self.manager.cancel_heartbeat(member, fx)
        group.replace_static_member(self.instance_id, self.new_member_id, self.old_member_id, fx)
        self.manager.reschedule_heartbeat(member, now_ms, fx)
        fx.reply(token, group.join_response(
            "", leader=self.current_leader, error_code=group_metadata_error(error)
        ))
