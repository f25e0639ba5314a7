"""Which consumer group and member a ConsumerGroupHeartbeat names (Kafka's
GroupMetadataManager ``getOrMaybeCreateConsumerGroup``, ``throwIfStaticMemberIsUnknown``,
``throwIfMemberEpochIsInvalid`` and ``replaceMember``): the group found or created (an empty
classic group converted, a non-empty one upgraded online), the member found or created and
its epoch checked, the metadata the request updates, and a static member replaced.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from coordinator.core.classic.state import EMPTY
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import (
    ConsumerGroup,
    ConsumerMember,
    current_value,
    to_topic_partitions,
)
from coordinator.core.consumer.heartbeat_validation import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    HeartbeatError,
)
from coordinator.core.consumer.messages import (
    ConsumerGroupHeartbeatRequest,
    HeartbeatTopicPartitions,
)
from coordinator.core.consumer.migration import (
    UpgradeRefusedError,
    convert_to_consumer_group,
    validate_online_upgrade,
)
from coordinator.core.consumer.records import RecordWriter, remove_member_records
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import RequestContext
from coordinator.core.result import Effects
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    GroupMetadataKey,
    Record,
)
from wire.constants import ErrorCode

__all__ = [
    "group_for_join",
    "known_member",
    "member_of",
    "replace_static_member",
    "updated_metadata",
]


def group_for_join(manager: GroupManager, group_id: str, epoch: int, fx: Effects,
                   now_ms: int) -> ConsumerGroup:
    """The consumer group; created on a join (epoch 0), converting an empty classic group,
    or upgrading a non-empty one when the migration policy allows (Kafka's
    getOrMaybeCreateConsumerGroup)."""
    group = manager.consumer_groups.get(group_id)
    if group is not None:
        return group
    if group_id in manager.share_groups:
        raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND,
                             f"Group {group_id} is not a consumer group.")
    classic = manager.groups.get(group_id)
    if classic is not None and not (classic.state is EMPTY and not classic.members):
        if epoch != 0 or validate_online_upgrade(manager, classic) is not None:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND,
                                 f"Group {group_id} is not a consumer group.")
        try:
            return convert_to_consumer_group(manager, classic, fx, now_ms)
        except UpgradeRefusedError as exc:  # a member's embedded protocol is malformed
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, str(exc)) from None
    if epoch != 0:
        raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND,
                             f"Consumer group {group_id} not found.")
    if classic is not None:
        # An empty classic group becomes a consumer group; its offsets stay.
        del manager.groups[group_id]
        if group_id in manager.store.groups:
            fx.persist(Record(GroupMetadataKey(group_id), None))
    group = ConsumerGroup(group_id)
    manager.consumer_groups[group_id] = group
    return group


def known_member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    """The existing member a heartbeat (or leave) names, checked as Kafka does: a static
    member's instance id first (unknown: UNKNOWN_MEMBER_ID; owned by another member id:
    FENCED_INSTANCE_ID), then the member id."""
    if instance_id is not None:
        owner_id = group.static_members.get(instance_id)
        if owner_id is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Instance id {instance_id} is unknown.")
        if owner_id != member_id:
            raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} "
                                 f"was fenced by member {owner_id}.")
    member = group.members.get(member_id)
    if member is None:
        raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {group.group_id}.")
    return member


def member_of(
    manager: GroupManager, group: ConsumerGroup, req: ConsumerGroupHeartbeatRequest
) -> tuple[ConsumerMember, ConsumerMember | None]:
    """(the member, the static member it replaces or None), checking ids and epochs."""
    epoch = req["member_epoch"]
    member_id = req["member_id"]
    instance_id = req["instance_id"]
    if epoch == 0:
        if member_id == "":  # v0: the coordinator names the member
            member_id = manager.new_uuid()
        replaced = None
        if instance_id is not None:
            owner_id = group.static_members.get(instance_id)
            if owner_id is not None and owner_id != member_id:
                owner = group.members[owner_id]
                # A classic static member is replaced without having left (Kafka).
                if owner.classic is None and owner.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    raise HeartbeatError(
                        ErrorCode.UNRELEASED_INSTANCE_ID,
                        f"Static member {member_id} with instance id {instance_id} cannot "
                        f"join the group because the instance id is owned by {owner_id} "
                        "member.",
                    )
                replaced = owner
        member = group.members.get(member_id)
        if member is None:
            if replaced is None and len(group.members) >= manager.config.group_consumer_max_size:
                raise HeartbeatError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The consumer group has reached its maximum capacity of "
                    f"{manager.config.group_consumer_max_size} members.",
                )
            member = ConsumerMember(member_id)
            if replaced is not None:
                _copy_metadata(replaced, member)
        return member, replaced
    member = known_member(group, member_id, instance_id)
    current = member.current
    if epoch > current.member_epoch:
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({epoch}) than the one "
            f"known by the group coordinator ({current.member_epoch}). The member must "
            "abandon all its partitions and rejoin.",
        )
    if epoch < current.member_epoch and (
        epoch != current.previous_member_epoch
        or not _is_subset(req["topic_partitions"], current.assigned_partitions)
    ):
        raise HeartbeatError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a smaller member epoch ({epoch}) than the one "
            f"known by the group coordinator ({current.member_epoch}). The member must "
            "abandon all its partitions and rejoin.",
        )
    return member, None


def _copy_metadata(source: ConsumerMember, target: ConsumerMember) -> None:
    for name in ("instance_id", "rack_id", "client_id", "client_host",
                 "subscribed_topic_names", "subscribed_topic_regex", "rebalance_timeout_ms",
                 "server_assignor"):
        setattr(target, name, getattr(source, name))


def _is_subset(
    owned: Sequence[HeartbeatTopicPartitions] | None,
    assigned: Mapping[uuid.UUID, frozenset[int]],
) -> bool:
    """Kafka's isSubset: every owned partition is assigned (a null list is not a subset)."""
    if owned is None:
        return False
    for tp in owned:
        parts = assigned.get(tp["topic_id"])
        if parts is None or not parts.issuperset(tp["partitions"]):
            return False
    return True


def updated_metadata(
    member: ConsumerMember, req: ConsumerGroupHeartbeatRequest, ctx: RequestContext, new: bool
) -> ConsumerGroupMemberMetadataValue:
    """The member's metadata with the request's non-null fields applied."""
    value = member.metadata_value()
    names = req["subscribed_topic_names"]
    regex = req["subscribed_topic_regex"]
    timeout = req["rebalance_timeout_ms"]
    return ConsumerGroupMemberMetadataValue(
        instance_id=req["instance_id"] if req["instance_id"] is not None else value.instance_id,
        rack_id=req["rack_id"] if req["rack_id"] is not None else value.rack_id,
        client_id=(ctx.client_id or "") if new else value.client_id,
        client_host=ctx.client_host if new else value.client_host,
        subscribed_topic_names=(
            tuple(sorted(names)) if names is not None else value.subscribed_topic_names
        ),
        subscribed_topic_regex=(
            (regex or None) if regex is not None else value.subscribed_topic_regex
        ),
        rebalance_timeout_ms=timeout if timeout != -1 else value.rebalance_timeout_ms,
        server_assignor=(
            req["server_assignor"] if req["server_assignor"] is not None
            else value.server_assignor
        ),
    )


def replace_static_member(
    group: ConsumerGroup, old: ConsumerMember, new_member_id: str, writer: RecordWriter
) -> None:
    """A new member takes a temporarily departed static member's place (Kafka's
    replaceMember): the old member's records are tombstoned, the new one inherits its
    target assignment and starts at epoch 0 with the old member's partitions."""
    target = group.target_of(old.member_id)
    current = old.current
    remove_member_records(group, old.member_id, writer)
    gid = group.group_id
    writer.write(ConsumerGroupMemberMetadataKey(gid, new_member_id), old.metadata_value())
    writer.write(ConsumerGroupTargetAssignmentMemberKey(gid, new_member_id),
                 ConsumerGroupTargetAssignmentMemberValue(to_topic_partitions(target)))
    writer.write(
        ConsumerGroupCurrentMemberAssignmentKey(gid, new_member_id),
        current_value(type(current)(MemberState.STABLE, 0, 0, current.assigned_partitions)),
    )
