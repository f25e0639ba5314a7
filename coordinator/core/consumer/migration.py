"""Online migration between the classic and the consumer group protocols (KIP-848), as
Kafka 4's GroupMetadataManager does it under ``group.consumer.migration.policy``.

Upgrade (``convert_to_consumer_group``): a ConsumerGroupHeartbeat joining a non-empty
classic group whose protocol type is ``consumer`` turns it into a consumer group
(Kafka's convertToConsumerGroup / ConsumerGroup.fromClassicGroup): the classic group's
record is tombstoned, each classic member becomes a consumer group member that keeps its
classic metadata (session timeout, supported protocols), the subscription decoded from
its JoinGroup metadata and the partitions of its last SyncGroup assignment, at epoch =
the classic generation, Stable.

Downgrade (``fence_or_downgrade``): when the member being removed is the last one using
the consumer protocol, the others being classic, the group goes back to a classic group
(Kafka's convertToClassicGroup / ClassicGroup.fromConsumerGroup): the consumer group's
records are tombstoned, a Stable classic group holding the target assignment is stored,
and a rebalance starts. The same happens, without the rebalance, when a classic static
member's JoinGroup replaces the last consumer-protocol member, a static one
(``downgrade_with_replaced_member``): the joining member takes the replaced one's target.

Both are records first, replayed into the live group as they are emitted; a failed append
rebuilds whichever group the log holds (``RebuildConsumerGroupOnFailure``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member
from coordinator.core.classic.state import STABLE
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import (
    ConsumerGroup,
    ConsumerMember,
    current_value,
    to_topic_partitions,
)
from coordinator.core.consumer.records import (
    RebuildConsumerGroupOnFailure,
    RecordWriter,
    emit_event,
    fence_member,
)
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import join_group_error, sync_group_error
from coordinator.core.result import Effects
from coordinator.core.timers import (
    ClassicMemberJoinTimerKey,
    ClassicMemberSyncTimerKey,
    ConsumerRebalanceTimerKey,
    ConsumerSessionTimerKey,
    HeartbeatTimerKey,
    JoinTimerKey,
)
from coordinator.core.topics_image import TopicsImage
from storage.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    Record,
)
from wire.constants import ErrorCode
from wire.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedEmbeddedProtocolError,
    TopicPartitionList,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    protocol_version,
)

__all__ = [
    "UpgradeRefusedError",
    "assignment_bytes",
    "convert_to_consumer_group",
    "downgrade_with_replaced_member",
    "expire_classic_member",
    "expire_consumer_member",
    "fence_or_downgrade",
    "subscription_version",
    "topic_ids",
    "validate_online_upgrade",
]


class UpgradeRefusedError(Exception):
    """The classic group cannot become a consumer group (GROUP_ID_NOT_FOUND in Kafka)."""


def _upgrade_enabled(policy: str) -> bool:
    return policy in ("upgrade", "bidirectional")


def _downgrade_enabled(policy: str) -> bool:
    return policy in ("downgrade", "bidirectional")


def topic_ids(
    image: TopicsImage, partitions: TopicPartitionList
) -> dict[uuid.UUID, frozenset[int]]:
    """Embedded-protocol (topic, partitions) pairs as a partition map by topic id; topics
    the image does not know are dropped (Kafka's toTopicPartitionMap)."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for topic, parts in partitions:
        known = image.by_name.get(topic)
        if known is not None and parts:
            out[known[0]] = out.get(known[0], frozenset()) | frozenset(parts)
    return out


def subscription_version(metadata: bytes) -> int:
    """The embedded protocol version of a member's JoinGroup metadata (0 when unreadable):
    its SyncGroup assignment is written in the same version, at most 3."""
    try:
        return protocol_version(metadata)
    except MalformedEmbeddedProtocolError:
        return 0


def assignment_bytes(
    image: TopicsImage, partitions: Mapping[uuid.UUID, frozenset[int]], version: int
) -> bytes:
    """A ConsumerProtocolAssignment of ``partitions`` (Kafka's prepareAssignment)."""
    return encode_assignment(version, tuple(
        (image.by_id[tp.topic_id], tp.partitions)
        for tp in to_topic_partitions(partitions)
        if tp.topic_id in image.by_id
    ))


# --------------------------------------------------------------------------- upgrade


def validate_online_upgrade(manager: GroupManager, classic: ClassicGroup) -> str | None:
    """Kafka's validateOnlineUpgrade: None when allowed, else why not (Kafka logs it)."""
    gid = classic.group_id
    if not _upgrade_enabled(manager.config.group_consumer_migration_policy):
        return (f"Cannot upgrade classic group {gid} to consumer group because the online "
                "upgrade is disabled.")
    if not classic.is_consumer_group():
        return (f"Cannot upgrade classic group {gid} to consumer group because the group "
                "does not use the consumer embedded protocol.")
    if len(classic.members) > manager.config.group_consumer_max_size:
        return (f"Cannot upgrade classic group {gid} to consumer group because the group "
                "size exceeds the consumer group maximum size.")
    return None


def _classic_member_value(
    image: TopicsImage, classic: ClassicGroup, member: Member
) -> tuple[ConsumerGroupMemberMetadataValue, dict[uuid.UUID, frozenset[int]]]:
    """(the member's metadata record, its assigned partitions); MalformedEmbeddedProtocolError
    when its embedded protocol does not parse."""
    protocol = classic.protocol_name
    names = [name for name, _ in member.protocols]
    chosen = protocol if protocol in names else names[0]
    subscription = decode_subscription(member.metadata(chosen))
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    if member.assignment:
        assigned = topic_ids(image, decode_assignment(member.assignment))
    value = ConsumerGroupMemberMetadataValue(
        instance_id=member.group_instance_id,
        rack_id=subscription.rack_id or None,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(subscription.topics)),
        subscribed_topic_regex=None,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        server_assignor=None,
        classic_member_metadata=ClassicMemberMetadata(
            session_timeout_ms=member.session_timeout_ms,
            supported_protocols=tuple(ClassicProtocol(n, m) for n, m in member.protocols),
        ),
    )
    return value, assigned


def convert_to_consumer_group(
    manager: GroupManager, classic: ClassicGroup, fx: Effects, now_ms: int
) -> ConsumerGroup:
    """Kafka's convertToConsumerGroup: the records of the consumer group the classic group
    becomes, replayed into it; UpgradeRefusedError (before any record) when a member's
    embedded protocol is malformed."""
    gid = classic.group_id
    image = manager.topics_image
    members: list[tuple[str, ConsumerGroupMemberMetadataValue, dict[uuid.UUID, frozenset[int]]]]
    members = []
    claimed: set[tuple[uuid.UUID, int]] = set()
    for member_id, member in classic.members.items():
        try:
            value, assigned = _classic_member_value(image, classic, member)
        except (MalformedEmbeddedProtocolError, IndexError):
            raise UpgradeRefusedError(
                f"Cannot upgrade the classic group {gid} to consumer group because the "
                "embedded consumer protocol is malformed."
            ) from None
        # A partition is held by one member only (a stale assignment may repeat one).
        kept = {}
        for topic_id, parts in assigned.items():
            free = frozenset(p for p in parts if (topic_id, p) not in claimed)
            claimed.update((topic_id, p) for p in free)
            if free:
                kept[topic_id] = free
        members.append((member_id, value, kept))

    # Members waiting in a join or sync phase rejoin the consumer group.
    for member in classic.members.values():
        classic.complete_join(
            member, join_group_error(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id), fx
        )
        classic.complete_sync(member, sync_group_error(ErrorCode.REBALANCE_IN_PROGRESS), fx)
        manager.cancel_heartbeat(member, fx)
    for pending_id in classic.pending_members:
        fx.cancel(HeartbeatTimerKey(gid, pending_id))
    if classic.join_deadline != -1:
        classic.join_deadline = -1
        fx.cancel(JoinTimerKey(gid))
    manager.remove_sync_expiration(classic, fx)
    del manager.groups[gid]
    if classic.generation_id > 0 or gid in manager.store.groups:
        fx.persist(Record(GroupMetadataKey(gid), None))

    group = ConsumerGroup(gid)
    manager.consumer_groups[gid] = group
    writer = RecordWriter(group, fx)
    epoch = classic.generation_id
    for member_id, value, _ in members:
        writer.write(ConsumerGroupMemberMetadataKey(gid, member_id), value)
    # No topics' metadata hash (0): Kafka's createConsumerGroupRecords writes no
    # subscription metadata, so the joining member's heartbeat computes it and bumps the epoch.
    writer.write(ConsumerGroupMetadataKey(gid), ConsumerGroupMetadataValue(epoch, 0))
    for member_id, _, assigned in members:
        writer.write(ConsumerGroupTargetAssignmentMemberKey(gid, member_id),
                     ConsumerGroupTargetAssignmentMemberValue(to_topic_partitions(assigned)))
    writer.write(ConsumerGroupTargetAssignmentMetadataKey(gid),
                 ConsumerGroupTargetAssignmentMetadataValue(epoch))
    for member_id, _, assigned in members:
        current = group.members[member_id].current
        writer.write(ConsumerGroupCurrentMemberAssignmentKey(gid, member_id), current_value(
            type(current)(MemberState.STABLE, epoch, epoch, assigned)
        ))
    for member_id, value, _ in members:
        assert value.classic_member_metadata is not None
        fx.schedule(ConsumerSessionTimerKey(gid, member_id),
                    now_ms + value.classic_member_metadata.session_timeout_ms)
    emit_event(fx, group, "group_upgraded", now_ms,
               reason="a consumer protocol member joined the classic group")
    return group


# --------------------------------------------------------------------------- downgrade


def _downgrade_allowed(manager: GroupManager, group: ConsumerGroup, leaving_id: str) -> bool:
    """Kafka's validateOnlineDowngradeWithFencedMember."""
    if not group.all_members_use_classic_protocol_except(leaving_id):
        return False
    if len(group.members) <= 1:  # the group becomes empty: it stays a consumer group
        return False
    if not _downgrade_enabled(manager.config.group_consumer_migration_policy):
        return False  # Kafka logs: the online downgrade is disabled
    return len(group.members) - 1 <= manager.config.group_max_size


def fence_or_downgrade(
    manager: GroupManager,
    group: ConsumerGroup,
    member: ConsumerMember,
    fx: Effects,
    now_ms: int,
    event: str,
    reason: str,
) -> None:
    """Kafka's consumerGroupFenceMember: remove the member, or -- when the others all use
    the classic protocol and the policy allows -- turn the group back into a classic one."""
    if _downgrade_allowed(manager, group, member.member_id):
        _convert_to_classic_group(manager, group, member, fx, now_ms, reason, event)
    else:
        fence_member(manager, group, member, fx, now_ms, event, reason)


def downgrade_with_replaced_member(
    manager: GroupManager,
    group: ConsumerGroup,
    replaced: ConsumerMember,
    joining_id: str,
    fx: Effects,
    now_ms: int,
) -> bool:
    """Kafka's validateOnlineDowngradeWithReplacedMemberId then convertToClassicGroup: a
    classic static member (``joining_id``, already in the group in ``replaced``'s place)
    replaced the last consumer-protocol member, so the group goes back to a Stable classic
    group holding the target assignment, without a rebalance. False when not allowed."""
    if replaced.classic is not None or any(m.classic is None for m in group.members.values()):
        return False
    if not _downgrade_enabled(manager.config.group_consumer_migration_policy):
        return False  # Kafka logs: the online downgrade is disabled
    if len(group.members) > manager.config.group_max_size:
        return False  # Kafka logs: greater than the classic group max size
    joining = group.members[joining_id]
    _convert_to_classic_group(manager, group, None, fx, now_ms,
                              f"static member {joining.instance_id} replaced by a classic member")
    return True


def _convert_to_classic_group(
    manager: GroupManager,
    group: ConsumerGroup,
    leaving: ConsumerMember | None,
    fx: Effects,
    now_ms: int,
    reason: str,
    event: str | None = None,
) -> None:
    """The consumer group's tombstones then the classic group's record. ``leaving`` (with
    its history ``event``) is left out and a rebalance starts; without one (a static member
    was replaced) every member stays and the group stays Stable."""
    gid = group.group_id
    image = manager.topics_image
    classic = ClassicGroup(gid, STABLE, now_ms)
    classic.generation_id = group.group_epoch
    targets = {}
    for member_id, member in group.members.items():
        if member is leaving or member.classic is None:
            continue
        protocols = tuple((p.name, p.metadata) for p in member.classic.supported_protocols)
        classic.add(Member(gid, member_id, member.instance_id, member.client_id,
                           member.client_host, member.rebalance_timeout_ms,
                           member.classic.session_timeout_ms, CONSUMER_PROTOCOL_TYPE,
                           protocols), None)
        targets[member_id] = group.target_of(member_id)
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for member_id, classic_member in classic.members.items():
        version = subscription_version(classic_member.metadata(classic.protocol_name))
        classic_member.assignment = assignment_bytes(image, targets[member_id], version)

    # Kafka's createGroupTombstoneRecords, then the classic group's record.
    if leaving is not None and event is not None:
        emit_event(fx, group, event, now_ms, reason=reason, member=leaving)
    writer = RecordWriter(group, fx)
    members = list(group.members.values())
    for member in members:
        writer.write(ConsumerGroupCurrentMemberAssignmentKey(gid, member.member_id), None)
    for member in members:
        writer.write(ConsumerGroupTargetAssignmentMemberKey(gid, member.member_id), None)
    writer.write(ConsumerGroupTargetAssignmentMetadataKey(gid), None)
    for member in members:
        writer.write(ConsumerGroupMemberMetadataKey(gid, member.member_id), None)
        fx.cancel(ConsumerSessionTimerKey(gid, member.member_id))
        if member.current.state is MemberState.UNREVOKED_PARTITIONS:
            fx.cancel(ConsumerRebalanceTimerKey(gid, member.member_id, member.member_epoch))
    writer.write(ConsumerGroupMetadataKey(gid), None)
    del manager.consumer_groups[gid]
    manager.groups[gid] = classic
    manager.store_group(classic, classic.group_assignment(), fx)
    for classic_member in classic.members.values():
        manager.reschedule_heartbeat(classic_member, now_ms, fx)
    manager.event(fx, classic, "group_downgraded", now_ms, reason=reason)
    if leaving is not None:
        manager.prepare_rebalance(classic, now_ms,
                                 f"Downgrade group {gid} from consumer to classic.", fx)


def expire_consumer_member(
    manager: GroupManager,
    key: ConsumerSessionTimerKey | ConsumerRebalanceTimerKey,
    fx: Effects,
    now_ms: int,
) -> None:
    """A member's session expired, or it did not revoke within its rebalance timeout (the
    key's epoch still being its epoch, in UNREVOKED_PARTITIONS): fence it (or downgrade)."""
    group = manager.consumer_groups.get(key.group_id)
    member = None if group is None else group.members.get(key.member_id)
    if group is None or member is None:
        return
    if isinstance(key, ConsumerRebalanceTimerKey) and not (
        member.current.state is MemberState.UNREVOKED_PARTITIONS
        and member.member_epoch == key.member_epoch
    ):
        return
    reason = ("session timeout" if isinstance(key, ConsumerSessionTimerKey)
              else "rebalance timeout")
    fence_or_downgrade(manager, group, member, fx, now_ms, "member_expired", reason)
    fx.after_append(RebuildConsumerGroupOnFailure(manager, group.group_id, None))



def expire_classic_member(
    manager: GroupManager,
    key: ClassicMemberJoinTimerKey | ClassicMemberSyncTimerKey,
    fx: Effects,
    now_ms: int,
) -> None:
    """A classic member of a consumer group did not rejoin (or sync) within its rebalance
    timeout after being told to: fence it (or downgrade), as Kafka's join / sync timeouts."""
    group = manager.consumer_groups.get(key.group_id)
    member = None if group is None else group.members.get(key.member_id)
    if group is None or member is None or member.classic is None:
        return
    if isinstance(key, ClassicMemberJoinTimerKey):
        deadline = group.classic_join_deadlines.get(key.member_id)
        if deadline is None or deadline > now_ms:
            return
        del group.classic_join_deadlines[key.member_id]
        reason = "join timeout"
    else:
        reason = "sync timeout"
    fence_or_downgrade(manager, group, member, fx, now_ms, "member_expired", reason)
    fx.after_append(RebuildConsumerGroupOnFailure(manager, group.group_id, None))
