"""ConsumerGroupHeartbeat (API 68), versions 0-1: Kafka's GroupMetadataManager
``consumerGroupHeartbeat`` and ``consumerGroupLeave``.

One heartbeat: validate the request (INVALID_REQUEST by Kafka's rules), find or create the
group and the member (checking its epoch), update the member's metadata, bump the group
epoch when membership, subscriptions or the subscribed topics changed, recompute the target
assignment when the group epoch is ahead of it, and reconcile the member towards its target
(``coordinator.core.consumer.reconcile``); finding the group and the member is
``consumer_heartbeat_member.py``. Every change is a record, replayed into the group
at once and answered once in the log; a failed append rebuilds the group from what the log
holds. v0: the coordinator makes up a joining member's id; v1 (KIP-1082): the client does,
and may subscribe by regex.

A join to a non-empty classic group upgrades it online when ``group.consumer.migration.policy``
allows (consumer_migration.py); the last consumer-protocol member leaving a group of classic
members downgrades it. Not modelled: rack-aware assignment, KIP-1251's partition epochs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from coordinator.core.consumer import (
    CurrentMemberAssignment,
    MemberState,
    reconcile,
)
from coordinator.core.consumer.assignment import assign_target
from coordinator.core.consumer.group import (
    ConsumerGroup,
    ConsumerMember,
    SteadyHeartbeat,
    current_value,
    to_topic_partitions,
)
from coordinator.core.consumer.heartbeat_member import (
    group_for_join,
    known_member,
    member_of,
    replace_static_member,
    updated_metadata,
)
from coordinator.core.consumer.heartbeat_validation import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    HeartbeatError,
    validate_heartbeat,
    validate_new_regex,
)
from coordinator.core.consumer.messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from coordinator.core.consumer.migration import fence_or_downgrade
from coordinator.core.consumer.records import (
    RebuildConsumerGroupOnFailure,
    RecordWriter,
    emit_event,
    note_if_stable,
)
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import RequestContext
from coordinator.core.result import (
    Effects,
    Reply,
    ReplyToken,
    Result,
    ScheduleTimer,
    new_tuple,
    unchanged,
)
from coordinator.core.timers import ConsumerRebalanceTimerKey, ConsumerSessionTimerKey
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
)
from wire.constants import ErrorCode

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "HeartbeatError",
    "handle_consumer_group_heartbeat",
    "steady_heartbeat",
]

_NO_ERROR = int(ErrorCode.NONE)  # a plain int: the encoder packs it without IntEnum's detour
_STABLE = MemberState.STABLE  # a module global: an enum class attribute costs 80 ns more


def handle_consumer_group_heartbeat(
    manager: GroupManager,
    ctx: RequestContext,
    req: ConsumerGroupHeartbeatRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one ConsumerGroupHeartbeat."""
    # The hot path: a steady heartbeat (``steady_heartbeat``), answered inline. The hand
    # decoder's steady body says so by its class attribute ``steady``
    # (``wire.consumer_group_heartbeat_codec.SteadyRequestBody``); any other body is read
    # field by field.
    if getattr(type(req), "steady", False) or (
        req["topic_partitions"] is None
        and req["subscribed_topic_names"] is None
        and req["subscribed_topic_regex"] is None
        and req["rebalance_timeout_ms"] == -1
        and req["instance_id"] is None
        and req["rack_id"] is None
        and req["server_assignor"] is None
    ):
        steady = steady_heartbeat(manager, req["group_id"], req["member_id"],
                                  req["member_epoch"])
        if steady is not None:  # the answer: a new dict each time (a kept one costs memory)
            return new_tuple(Result, ((), (new_tuple(Reply, (token, {
                "error_code": _NO_ERROR,
                "member_id": steady.session_key.member_id,
                "member_epoch": steady.current.member_epoch,
                "heartbeat_interval_ms": steady.heartbeat_interval_ms,
            })),), (new_tuple(ScheduleTimer, (
                steady.session_key, now_ms + steady.session_timeout_ms)),),
                (), (), unchanged))
    fx = manager.effects()
    group_id = req["group_id"]
    try:
        response = _heartbeat(manager, ctx, req, now_ms, fx)
    except HeartbeatError as exc:
        assert not fx.records, "a heartbeat error after records were emitted"
        response = {"error_code": exc.code, "error_message": exc.message, "member_epoch": -1}
    fx.reply(token, response)
    if fx.records:
        fx.after_append(RebuildConsumerGroupOnFailure(manager, group_id, token))
    return fx.result()


def steady_heartbeat(
    manager: GroupManager, group_id: str, member_id: str, member_epoch: int
) -> SteadyHeartbeat | None:
    """What a steady heartbeat (one whose every optional field is null) of this member
    concludes, or None when it must take the full path. Steady: the consumer protocol
    enabled, the group current against the topics image, the member Stable at the group
    epoch and the request at that epoch. Such a heartbeat writes no record; it answers no
    error, the member's id, epoch and heartbeat interval, and moves the member's session
    timer (``session_key``) to now plus its ``session_timeout_ms``, as the full path would.
    The result is the member's ``steady_heartbeat``, made by the first such heartbeat at the
    member's ``current`` (so at its epoch and state) and config, as a classic member keeps
    its ``heartbeat_key``."""
    group = manager.consumer_groups.get(group_id)
    if group is None or not group.is_current(manager.topics_image):
        return None
    member = group.members.get(member_id)
    if member is None:
        return None
    current = member.current
    if not current.member_epoch == member_epoch == group.group_epoch:
        return None
    config = manager.config
    steady = member.steady_heartbeat
    if (steady is None or steady.current is not current or steady.config is not config
            or (manager.group_configs and group_id in manager.group_configs)):
        return _steady_heartbeat(manager, group.group_id, member, current)
    return steady


def _steady_heartbeat(
    manager: GroupManager, group_id: str, member: ConsumerMember,
    current: CurrentMemberAssignment[uuid.UUID],
) -> SteadyHeartbeat | None:
    """The member's ``steady_heartbeat`` for ``current`` and ``config`` (kept on it),
    or None when a heartbeat at this state must take the full path (a member not Stable or
    leaving, the consumer protocol disabled)."""
    config = manager.config
    epoch = current.member_epoch
    if epoch <= 0 or current.state is not _STABLE or not config.consumer_protocol_enabled:
        return None
    old = member.steady_heartbeat
    session_key = (old.session_key if old is not None
                   else ConsumerSessionTimerKey(group_id, member.member_id))
    steady = member.steady_heartbeat = SteadyHeartbeat(
        current, config, session_key, manager.consumer_heartbeat_interval_ms(group_id),
        manager.consumer_session_timeout_ms(group_id))
    return steady


def _heartbeat(
    manager: GroupManager,
    ctx: RequestContext,
    req: ConsumerGroupHeartbeatRequest,
    now_ms: int,
    fx: Effects,
) -> ConsumerGroupHeartbeatResponse:
    config = manager.config
    if not config.consumer_protocol_enabled:
        raise HeartbeatError(ErrorCode.UNSUPPORTED_VERSION,
                             "The consumer group protocol is disabled.")
    validate_heartbeat(req, ctx.api_version, config.consumer_assignors)
    validate_new_regex(manager, req)
    epoch = req["member_epoch"]
    if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
        return _leave(manager, req, now_ms, fx)
    group = group_for_join(manager, req["group_id"], epoch, fx, now_ms)
    writer = RecordWriter(group, fx)
    member, replaced = member_of(manager, group, req)
    old = member.current
    names = req["subscribed_topic_names"]
    regex_text = req["subscribed_topic_regex"]
    new_member = member.member_id not in group.members
    updated = updated_metadata(member, req, ctx, new_member and replaced is None)
    subscription_changed = (new_member and replaced is None) or (
        updated.subscribed_topic_names != member.subscribed_topic_names
        or updated.subscribed_topic_regex != member.subscribed_topic_regex
    )
    if replaced is not None:
        replace_static_member(group, replaced, member.member_id, writer)
    if new_member or updated != member.metadata_value():
        writer.write(ConsumerGroupMemberMetadataKey(group.group_id, member.member_id), updated)
        member = group.members[member.member_id]

    subscribed, metadata_hash = group.subscriptions(manager.topics_image)
    if subscription_changed or metadata_hash != group.metadata_hash:
        writer.write(ConsumerGroupMetadataKey(group.group_id),
                     ConsumerGroupMetadataValue(group.group_epoch + 1, metadata_hash))
        if new_member and replaced is None:
            reason = "member join"
            emit_event(fx, group, "member_join", now_ms, member=member)
        elif subscription_changed:
            reason = "member metadata changed"
        else:
            reason = "topic metadata changed"
        emit_event(fx, group, "rebalance_start", now_ms, reason=reason)
    if group.group_epoch > group.assignment_epoch:
        assign_target(manager, group, subscribed, writer,
                      None if replaced is None else member.member_id)

    owned = _owned(req["topic_partitions"])
    current = reconcile(
        member.current,
        target_epoch=group.assignment_epoch,
        target=group.target_of(member.member_id),
        partition_epoch=group.ledger.epoch_of,
        owned=owned,
        subscribed_topic_ids=subscribed[member.member_id],
        subscription_changed=subscription_changed,
    )
    if current != member.current:
        writer.write(ConsumerGroupCurrentMemberAssignmentKey(group.group_id, member.member_id),
                     current_value(current))
    _schedule_timers(manager, group, member, old, now_ms, fx)
    note_if_stable(group, now_ms, fx)

    response: ConsumerGroupHeartbeatResponse = {
        "error_code": ErrorCode.NONE,
        "member_id": member.member_id,
        "member_epoch": member.member_epoch,
        "heartbeat_interval_ms": manager.consumer_heartbeat_interval_ms(group.group_id),
    }
    full = epoch == 0 or (
        req["rebalance_timeout_ms"] != -1
        and (names is not None or regex_text is not None)
        and owned is not None
    )
    if full or member.current.assigned_partitions != old.assigned_partitions:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": tp.topic_id, "partitions": list(tp.partitions)}
            for tp in to_topic_partitions(member.current.assigned_partitions)
        ]}
    return response


def _owned(
    items: Sequence[HeartbeatTopicPartitions] | None,
) -> dict[uuid.UUID, frozenset[int]] | None:
    if items is None:
        return None
    out: dict[uuid.UUID, frozenset[int]] = {}
    for tp in items:
        out[tp["topic_id"]] = out.get(tp["topic_id"], frozenset()) | frozenset(tp["partitions"])
    return out


# --------------------------------------------------------------------------- timers


def _schedule_timers(
    manager: GroupManager,
    group: ConsumerGroup,
    member: ConsumerMember,
    old: CurrentMemberAssignment[uuid.UUID],
    now_ms: int,
    fx: Effects,
) -> None:
    gid = group.group_id
    mid = member.member_id
    fx.schedule(ConsumerSessionTimerKey(gid, mid),
                now_ms + manager.consumer_session_timeout_ms(gid))
    current = member.current
    if current is old:
        return
    if old.state is MemberState.UNREVOKED_PARTITIONS:
        fx.cancel(ConsumerRebalanceTimerKey(gid, mid, old.member_epoch))
    if current.state is MemberState.UNREVOKED_PARTITIONS:
        fx.schedule(ConsumerRebalanceTimerKey(gid, mid, current.member_epoch),
                    now_ms + max(member.rebalance_timeout_ms, 0))


# --------------------------------------------------------------------------- leaving


def _leave(
    manager: GroupManager, req: ConsumerGroupHeartbeatRequest, now_ms: int, fx: Effects
) -> ConsumerGroupHeartbeatResponse:
    """Kafka's consumerGroupLeave: -1 leaves for good, -2 is a static member's temporary
    leave (it keeps its partitions until its session expires or a replacement joins)."""
    group_id = req["group_id"]
    group = manager.consumer_groups.get(group_id)
    if group is None:
        raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
    epoch, instance_id, member_id = req["member_epoch"], req["instance_id"], req["member_id"]
    member = known_member(group, member_id, instance_id)
    if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        # Kafka's consumerGroupStaticMemberGroupLeave: the member is kept at epoch -2 with
        # its previous epoch and assigned partitions; those it was revoking are released.
        current = member.current
        RecordWriter(group, fx).write(
            ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id),
            current_value(type(current)(
                current.state, LEAVE_GROUP_STATIC_MEMBER_EPOCH, current.previous_member_epoch,
                current.assigned_partitions,
            )),
        )
    else:
        fence_or_downgrade(manager, group, member, fx, now_ms, "member_leave", "member leave")
    return {"error_code": ErrorCode.NONE, "member_id": member_id, "member_epoch": epoch,
            "heartbeat_interval_ms": 0}
