"""Classic-protocol members inside a consumer group (KIP-848 online migration): JoinGroup,
SyncGroup, Heartbeat and LeaveGroup sent to a consumer group are served by it, as Kafka's
classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
classicGroupHeartbeatToConsumerGroup and classicGroupLeaveToConsumerGroup do.

A classic member is a consumer group member whose metadata record carries
ClassicMemberMetadata (session timeout, supported protocols). Its JoinGroup updates its
subscription (decoded from the embedded protocol metadata), bumps the group epoch when that
changed, recomputes the target assignment and reconciles the member with the partitions
its subscription says it owns; the JoinGroup answer's generation is the member epoch and
the SyncGroup answer is the member's assigned partitions (so partitions to revoke are
first taken away, then -- after a rejoin -- the new ones given). A Heartbeat answers
REBALANCE_IN_PROGRESS when the member must rejoin: the group epoch moved past it, it has
partitions to revoke, or the partitions it waits for were released. A static member's
JoinGroup replacing the last consumer-protocol member downgrades the group
(``downgrade_with_replaced_member``).
"""

from __future__ import annotations

from coordinator.core.consumer import MemberState, reconcile
from coordinator.core.consumer.assignment import assign_target
from coordinator.core.consumer.group import ConsumerGroup, ConsumerMember, current_value
from coordinator.core.consumer.heartbeat_member import replace_static_member
from coordinator.core.consumer.migration import (
    assignment_bytes,
    downgrade_with_replaced_member,
    subscription_version,
    topic_ids,
)
from coordinator.core.consumer.records import (
    RebuildConsumerGroupOnFailure,
    RecordWriter,
    emit_event,
    note_if_stable,
    remove_member_records,
)
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    MemberIdentity,
    RequestContext,
    SyncGroupRequest,
    SyncGroupResponse,
    join_group_error,
    sync_group_error,
)
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.timers import (
    ClassicMemberJoinTimerKey,
    ClassicMemberSyncTimerKey,
    ConsumerSessionTimerKey,
)
from storage.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
)
from wire.constants import ErrorCode
from wire.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedEmbeddedProtocolError,
    decode_subscription,
)

__all__ = [
    "LeaveRebuildOnFailure",
    "classic_heartbeat_to_consumer_group",
    "classic_join_to_consumer_group",
    "classic_leave_to_consumer_group",
    "classic_sync_to_consumer_group",
]

_JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION = 4


class _JoinRejected(Exception):
    def __init__(self, code: ErrorCode, member_id: str) -> None:
        super().__init__(code.name)
        self.code = code
        self.member_id = member_id


class _JoinRebuildOnFailure(RebuildConsumerGroupOnFailure):
    """A classic member's JoinGroup whose records did not reach the log."""

    __slots__ = ("member_id",)

    def __init__(self, manager: GroupManager, group_id: str, token: ReplyToken, member_id: str):
        super().__init__(manager, group_id, token)
        self.member_id = member_id

    def error_response(self, code: ErrorCode) -> JoinGroupResponse:
        return join_group_error(code, self.member_id)


# --------------------------------------------------------------------------- JoinGroup


def classic_join_to_consumer_group(
    manager: GroupManager,
    group: ConsumerGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> None:
    """Kafka's classicGroupJoinToConsumerGroup (answered once its records are in the log)."""
    try:
        response = _join(manager, group, ctx, req, now_ms, fx)
    except _JoinRejected as exc:
        assert not fx.records, "a JoinGroup error after records were emitted"
        fx.reply(token, join_group_error(exc.code, exc.member_id))
        return
    fx.reply(token, response)
    if fx.records:
        fx.after_append(_JoinRebuildOnFailure(manager, group.group_id, token,
                                              response["member_id"]))


def _join(
    manager: GroupManager,
    group: ConsumerGroup,
    ctx: RequestContext,
    req: JoinGroupRequest,
    now_ms: int,
    fx: Effects,
) -> JoinGroupResponse:
    gid = group.group_id
    member_id = req["member_id"]
    is_unknown = member_id == ""
    if is_unknown:
        member_id = manager.new_uuid()
    instance_id = req["group_instance_id"]
    max_size = manager.config.group_consumer_max_size
    if len(group.members) >= max_size and (is_unknown or member_id not in group.members):
        raise _JoinRejected(ErrorCode.GROUP_MAX_SIZE_REACHED, req["member_id"])
    names = {p["name"] for p in req["protocols"]}
    if not group.supports_classic_protocols(req["protocol_type"], names):
        raise _JoinRejected(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req["member_id"])
    if is_unknown and instance_id is None and (
        ctx.api_version >= _JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION
    ):
        raise _JoinRejected(ErrorCode.MEMBER_ID_REQUIRED, member_id)
    try:
        subscription = decode_subscription(bytes(req["protocols"][0]["metadata"]))
    except MalformedEmbeddedProtocolError:  # Kafka: IllegalStateException
        raise _JoinRejected(ErrorCode.UNKNOWN_SERVER_ERROR, req["member_id"]) from None

    writer = RecordWriter(group, fx)
    member, replaced = _join_member(group, member_id, instance_id, is_unknown)
    if replaced is not None:  # the new member inherits the static member's place
        replace_static_member(group, replaced, member_id, writer)
        member = group.members[member_id]
    new_member = member_id not in group.members
    rebalance_timeout = (req["session_timeout_ms"] if ctx.api_version == 0
                         else req["rebalance_timeout_ms"])
    topics = tuple(sorted(subscription.topics))
    updated = ConsumerGroupMemberMetadataValue(
        instance_id=instance_id if instance_id is not None else member.instance_id,
        rack_id=subscription.rack_id or member.rack_id,
        client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        subscribed_topic_names=topics,
        subscribed_topic_regex=member.subscribed_topic_regex,
        rebalance_timeout_ms=rebalance_timeout if rebalance_timeout != -1
        else member.rebalance_timeout_ms,
        server_assignor=member.server_assignor,
        classic_member_metadata=ClassicMemberMetadata(
            session_timeout_ms=req["session_timeout_ms"],
            supported_protocols=tuple(
                ClassicProtocol(p["name"], bytes(p["metadata"])) for p in req["protocols"]
            ),
        ),
    )
    subscription_changed = new_member or topics != member.subscribed_topic_names
    if new_member or updated != member.metadata_value():
        writer.write(ConsumerGroupMemberMetadataKey(gid, member_id), updated)
        member = group.members[member_id]

    subscribed, metadata_hash = group.subscriptions(manager.topics_image)
    if subscription_changed or metadata_hash != group.metadata_hash:
        writer.write(ConsumerGroupMetadataKey(gid),
                     ConsumerGroupMetadataValue(group.group_epoch + 1, metadata_hash))
        if new_member:
            emit_event(fx, group, "member_join", now_ms, member=member)
        emit_event(fx, group, "rebalance_start", now_ms,
                   reason="member join" if new_member else "member metadata changed")
    if group.group_epoch > group.assignment_epoch:
        assign_target(manager, group, subscribed, writer,
                      None if replaced is None else member_id)

    owned = topic_ids(manager.topics_image, subscription.owned_partitions)
    current = reconcile(
        member.current,
        target_epoch=group.assignment_epoch,
        target=group.target_of(member_id),
        partition_epoch=group.ledger.epoch_of,
        owned=owned,
        subscribed_topic_ids=subscribed[member_id],
        subscription_changed=subscription_changed,
    )
    if current != member.current:
        writer.write(ConsumerGroupCurrentMemberAssignmentKey(gid, member_id),
                     current_value(current))
    response: JoinGroupResponse = {
        "error_code": ErrorCode.NONE,
        "generation_id": current.member_epoch,
        "protocol_type": CONSUMER_PROTOCOL_TYPE,
        "protocol_name": member.classic_protocol_name,
        "leader": "",
        "skip_assignment": False,
        "member_id": member_id,
        "members": (),
    }
    if replaced is not None and downgrade_with_replaced_member(
        manager, group, replaced, member_id, fx, now_ms
    ):
        return response  # now a classic group: its members' heartbeats are armed
    fx.schedule(ConsumerSessionTimerKey(gid, member_id), now_ms + req["session_timeout_ms"])
    # Rejoined: now it must sync within its rebalance timeout.
    if group.classic_join_deadlines.pop(member_id, None) is not None:
        fx.cancel(ClassicMemberJoinTimerKey(gid, member_id))
    fx.schedule(ClassicMemberSyncTimerKey(gid, member_id),
                now_ms + max(member.rebalance_timeout_ms, 0))
    note_if_stable(group, now_ms, fx)
    return response


def _join_member(
    group: ConsumerGroup, member_id: str, instance_id: str | None, is_unknown: bool
) -> tuple[ConsumerMember, ConsumerMember | None]:
    """(the joining member, the static member it replaces or None): Kafka's
    getOrMaybeSubscribeDynamic/StaticConsumerGroupMember for a classic member. A static
    member joining without a member id takes over its instance id (whatever protocol the
    previous holder used); with one, it must be the instance id's holder."""
    if instance_id is not None:
        owner_id = group.static_members.get(instance_id)
        if is_unknown:
            if owner_id is None:
                return ConsumerMember(member_id), None
            return ConsumerMember(member_id), group.members[owner_id]
        if owner_id is None:
            raise _JoinRejected(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
        if owner_id != member_id:
            raise _JoinRejected(ErrorCode.FENCED_INSTANCE_ID, member_id)
    member = group.members.get(member_id)
    return (ConsumerMember(member_id) if member is None else member), None


# --------------------------------------------------------------------------- lookups


def _classic_member(
    group: ConsumerGroup, member_id: str, instance_id: str | None
) -> ConsumerMember | ErrorCode:
    """Kafka's validateConsumerGroupMember + throwIfMemberDoesNotUseClassicProtocol."""
    if instance_id is not None:
        owner_id = group.static_members.get(instance_id)
        if owner_id is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if owner_id != member_id:
            return ErrorCode.FENCED_INSTANCE_ID
    member = group.members.get(member_id)
    if member is None or member.classic is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return member


def _schedule_join_timeout_if_absent(
    manager: GroupManager, group: ConsumerGroup, member: ConsumerMember, now_ms: int, fx: Effects
) -> None:
    """Kafka's scheduleConsumerGroupJoinTimeoutIfAbsent: told to rejoin, the member must
    within its rebalance timeout or be fenced."""
    armed = group.classic_join_deadlines
    if member.member_id not in armed:
        armed[member.member_id] = now_ms + max(member.rebalance_timeout_ms, 0)
        fx.schedule(ClassicMemberJoinTimerKey(group.group_id, member.member_id),
                    armed[member.member_id])


def _reschedule_session(
    group: ConsumerGroup, member: ConsumerMember, now_ms: int, fx: Effects
) -> None:
    assert member.classic is not None
    fx.schedule(ConsumerSessionTimerKey(group.group_id, member.member_id),
                now_ms + member.classic.session_timeout_ms)


# --------------------------------------------------------------------------- SyncGroup


def classic_sync_to_consumer_group(
    manager: GroupManager, group: ConsumerGroup, req: SyncGroupRequest, now_ms: int, fx: Effects
) -> SyncGroupResponse:
    """Kafka's classicGroupSyncToConsumerGroup: the member's assigned partitions, in the
    embedded protocol version of its JoinGroup metadata."""
    found = _classic_member(group, req["member_id"], req["group_instance_id"])
    if isinstance(found, ErrorCode):
        return sync_group_error(found)
    member = found
    assert member.classic is not None
    protocol_name = member.classic_protocol_name
    if req["generation_id"] != member.member_epoch:
        return sync_group_error(ErrorCode.ILLEGAL_GENERATION)
    if (req["protocol_type"] is not None and req["protocol_type"] != CONSUMER_PROTOCOL_TYPE) or (
        req["protocol_name"] is not None and req["protocol_name"] != protocol_name
    ):
        return sync_group_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    if (group.group_epoch > member.member_epoch
            and member.current.state is not MemberState.UNREVOKED_PARTITIONS):
        _schedule_join_timeout_if_absent(manager, group, member, now_ms, fx)
        return sync_group_error(ErrorCode.REBALANCE_IN_PROGRESS)
    _reschedule_session(group, member, now_ms, fx)
    fx.cancel(ClassicMemberSyncTimerKey(group.group_id, member.member_id))
    version = subscription_version(member.classic.supported_protocols[0].metadata)
    return {
        "error_code": ErrorCode.NONE,
        "protocol_type": req["protocol_type"],
        "protocol_name": req["protocol_name"],
        "assignment": assignment_bytes(manager.topics_image, member.current.assigned_partitions,
                                       version),
    }


# --------------------------------------------------------------------------- Heartbeat


def classic_heartbeat_to_consumer_group(
    manager: GroupManager, group: ConsumerGroup, req: HeartbeatRequest, now_ms: int, fx: Effects
) -> ErrorCode:
    """Kafka's classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS when the member
    must rejoin (the group epoch moved past it, it has partitions to revoke, or the
    partitions it waits for were released)."""
    found = _classic_member(group, req["member_id"], req["group_instance_id"])
    if isinstance(found, ErrorCode):
        return found
    member = found
    if req["generation_id"] != member.member_epoch:
        return ErrorCode.ILLEGAL_GENERATION
    _reschedule_session(group, member, now_ms, fx)
    state = member.current.state
    if (
        member.member_epoch < group.group_epoch
        or state is MemberState.UNREVOKED_PARTITIONS
        or (state is MemberState.UNRELEASED_PARTITIONS
            and not group.ledger.waiting_on_unreleased_partition(
                member.current, group.target_of(member.member_id)))
    ):
        _schedule_join_timeout_if_absent(manager, group, member, now_ms, fx)
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


# --------------------------------------------------------------------------- LeaveGroup


def classic_leave_to_consumer_group(
    manager: GroupManager,
    group: ConsumerGroup,
    identities: list[MemberIdentity],
    now_ms: int,
    fx: Effects,
) -> LeaveGroupResponse:
    """Kafka's classicGroupLeaveToConsumerGroup: each classic member named leaves (by
    member id, or by instance id alone for an administrative removal); the group epoch is
    bumped once for all of them."""
    results = []
    leaving: list[tuple[ConsumerMember, str]] = []
    for identity in identities:
        member_id = identity["member_id"]
        instance_id = identity["group_instance_id"]
        error = ErrorCode.NONE
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None or member.classic is None:
                error = ErrorCode.UNKNOWN_MEMBER_ID
        else:
            owner_id = group.static_members.get(instance_id)
            member = None if owner_id is None else group.members[owner_id]
            if member is None:
                error = ErrorCode.UNKNOWN_MEMBER_ID
            elif member_id not in ("", member.member_id):
                error = ErrorCode.FENCED_INSTANCE_ID
            elif member.classic is None:
                error = ErrorCode.UNKNOWN_MEMBER_ID
            else:
                member_id = member.member_id
        if error is ErrorCode.NONE and member is not None and all(
            m is not member for m, _ in leaving
        ):
            leaving.append((member, identity["reason"] or "member leave"))
        results.append(LeaveGroupResponseMember(
            member_id=member_id, group_instance_id=instance_id, error_code=error))
    if leaving:
        _remove_classic_members(manager, group, leaving, now_ms, fx)
    return {"error_code": ErrorCode.NONE, "members": tuple(results)}


def _remove_classic_members(
    manager: GroupManager,
    group: ConsumerGroup,
    leaving: list[tuple[ConsumerMember, str]],
    now_ms: int,
    fx: Effects,
) -> None:
    gid = group.group_id
    writer = RecordWriter(group, fx)
    for member, reason in leaving:
        emit_event(fx, group, "member_leave", now_ms, reason=reason, member=member)
        remove_member_records(group, member.member_id, writer)
        for key in (ConsumerSessionTimerKey(gid, member.member_id),
                    ClassicMemberJoinTimerKey(gid, member.member_id),
                    ClassicMemberSyncTimerKey(gid, member.member_id)):
            fx.cancel(key)
    _, metadata_hash = group.subscriptions(manager.topics_image)
    writer.write(ConsumerGroupMetadataKey(gid),
                 ConsumerGroupMetadataValue(group.group_epoch + 1, metadata_hash))
    emit_event(fx, group, "rebalance_start", now_ms, reason="member leave")
    if not group.members:
        emit_event(fx, group, "rebalance_end", now_ms)


class LeaveRebuildOnFailure(RebuildConsumerGroupOnFailure):
    """A classic LeaveGroup to a consumer group whose records did not reach the log."""

    __slots__ = ()

    def error_response(self, code: ErrorCode) -> LeaveGroupResponse:
        return {"error_code": code, "members": ()}
