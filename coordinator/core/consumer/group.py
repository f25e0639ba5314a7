"""A consumer group (KIP-848) as its records say: Kafka's ConsumerGroup and
ConsumerGroupMember, built only by replaying Kafka 4's consumer group records.

The handlers never set these fields directly: they emit records and feed each one to
``ConsumerGroup.replay`` at once (Kafka's coordinator replays its own writes into its
in-memory timeline the same way), and the runtime answers only once the records are in the
log. The store keeps the appended records (``HardState.consumer``), so a restart -- or an
append that failed -- rebuilds exactly this from them (``coordinator.core.group_rebuild``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from coordinator.config import CoordinatorConfig
from coordinator.core.consumer import (
    EMPTY_ASSIGNMENT,
    CurrentMemberAssignment,
    MemberState,
    PartitionEpochs,
)
from coordinator.core.timers import ConsumerSessionTimerKey
from coordinator.core.topics_image import TopicsImage
from storage.records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    Record,
    TopicPartitions,
)

__all__ = [
    "ASSIGNING",
    "CONSUMER_EMPTY",
    "CONSUMER_STABLE",
    "RECONCILING",
    "ConsumerGroup",
    "ConsumerMember",
    "PartitionMap",
    "SteadyHeartbeat",
    "from_topic_partitions",
    "to_topic_partitions",
]

# topic id -> partitions
PartitionMap = Mapping[uuid.UUID, frozenset[int]]

# Kafka's ConsumerGroupState names (ListGroups and DescribeGroups show them).
CONSUMER_EMPTY = "Empty"
ASSIGNING = "Assigning"
RECONCILING = "Reconciling"
CONSUMER_STABLE = "Stable"

_NO_MEMBER_EPOCH: CurrentMemberAssignment[uuid.UUID] = CurrentMemberAssignment(
    MemberState.STABLE, 0, 0
)


class SteadyHeartbeat(NamedTuple):
    """What the steady path of ``consumer_heartbeat`` made for a Stable member's heartbeat
    that changes nothing, kept on the member: valid for its ``current`` and the config
    (the session timer's key, the heartbeat interval the answer carries). The answer itself
    is a new dict each time (a kept one would cost a member ~200 B more)."""

    current: CurrentMemberAssignment[uuid.UUID]
    config: CoordinatorConfig
    session_key: ConsumerSessionTimerKey
    heartbeat_interval_ms: int
    #: The group's session timeout (its ``consumer.session.timeout.ms``, else the broker's).
    session_timeout_ms: int


def to_topic_partitions(partitions: PartitionMap) -> tuple[TopicPartitions, ...]:
    """A partition map as records carry it (sorted, for stable bytes)."""
    return tuple(
        TopicPartitions(topic_id, tuple(sorted(parts)))
        for topic_id, parts in sorted(partitions.items())
        if parts
    )


def from_topic_partitions(items: Iterable[TopicPartitions]) -> PartitionMap:
    """A record's topic partitions as a partition map."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for item in items:
        if item.partitions:
            out[item.topic_id] = out.get(item.topic_id, frozenset()) | frozenset(item.partitions)
    return out if out else EMPTY_ASSIGNMENT  # read-only by convention


class ConsumerMember:
    """One consumer-protocol member: its metadata record and its current assignment."""

    __slots__ = (
        "classic",
        "client_host",
        "client_id",
        "current",
        "instance_id",
        "member_id",
        "rack_id",
        "rebalance_timeout_ms",
        "server_assignor",
        "steady_heartbeat",
        "subscribed_topic_names",
        "subscribed_topic_regex",
    )

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.subscribed_topic_names: tuple[str, ...] = ()
        self.subscribed_topic_regex: str | None = None
        self.rebalance_timeout_ms = -1
        self.server_assignor: str | None = None
        #: Set for a member using the classic protocol (JoinGroup/SyncGroup/Heartbeat).
        self.classic: ClassicMemberMetadata | None = None
        self.current: CurrentMemberAssignment[uuid.UUID] = _NO_MEMBER_EPOCH
        #: What the steady heartbeat path needs for this member, its session timer key
        #: among it (``consumer_heartbeat._steady``), made for the ``current`` and the
        #: config it holds: valid while both are the same objects.
        self.steady_heartbeat: SteadyHeartbeat | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        """Whether the member joined with the classic protocol (Kafka's useClassicProtocol)."""
        return self.classic is not None

    @property
    def classic_protocol_name(self) -> str:
        """The first protocol a classic member supports: the one it is answered with."""
        assert self.classic is not None
        return self.classic.supported_protocols[0].name

    @property
    def member_epoch(self) -> int:
        """The epoch the member must heartbeat with."""
        return self.current.member_epoch

    def metadata_value(self) -> ConsumerGroupMemberMetadataValue:
        """The member's metadata record value."""
        return ConsumerGroupMemberMetadataValue(
            instance_id=self.instance_id,
            rack_id=self.rack_id,
            client_id=self.client_id,
            client_host=self.client_host,
            subscribed_topic_names=self.subscribed_topic_names,
            subscribed_topic_regex=self.subscribed_topic_regex,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            server_assignor=self.server_assignor,
            classic_member_metadata=self.classic,
        )


def current_value(
    current: CurrentMemberAssignment[uuid.UUID],
) -> ConsumerGroupCurrentMemberAssignmentValue:
    """A reconciliation state as its record value."""
    return ConsumerGroupCurrentMemberAssignmentValue(
        member_epoch=current.member_epoch,
        previous_member_epoch=current.previous_member_epoch,
        state=int(current.state),
        assigned_partitions=to_topic_partitions(current.assigned_partitions),
        partitions_pending_revocation=to_topic_partitions(current.partitions_pending_revocation),
    )


class ConsumerGroup:
    """Kafka's ConsumerGroup: epochs, members, the target assignment and who holds what."""

    __slots__ = (
        "_resolved",
        "_resolved_image",
        "assignment_epoch",
        "classic_join_deadlines",
        "group_epoch",
        "group_id",
        "ledger",
        "members",
        "metadata_hash",
        "stable_epoch",
        "static_members",
        "target",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.metadata_hash = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.target: dict[str, PartitionMap] = {}
        self.static_members: dict[str, str] = {}
        #: The assignment epoch a rebalance_end was recorded for (history only).
        self.stable_epoch = -1
        self.ledger = PartitionEpochs[uuid.UUID]()
        #: Classic members told to rejoin -> their join deadline (soft state, as Kafka's
        #: join timers).
        self.classic_join_deadlines: dict[str, int] = {}
        self._resolved_image: TopicsImage | None = None
        self._resolved: tuple[dict[str, frozenset[uuid.UUID]], int] = ({}, 0)

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> str:
        """Kafka's ConsumerGroup.State: Empty, Assigning, Reconciling or Stable."""
        if not self.members:
            return CONSUMER_EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        for member in self.members.values():
            current = member.current
            if current.member_epoch != self.assignment_epoch or (
                current.state is not MemberState.STABLE
            ):
                return RECONCILING
        return CONSUMER_STABLE

    def classic_members(self) -> list[ConsumerMember]:
        """The members using the classic protocol."""
        return [m for m in self.members.values() if m.classic is not None]

    def all_members_use_classic_protocol_except(self, member_id: str) -> bool:
        """Kafka's allMembersUseClassicProtocolExcept: every other member is classic."""
        return all(m.classic is not None for mid, m in self.members.items() if mid != member_id)

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """Kafka's supportsClassicProtocols: a ``consumer`` member with at least one protocol
        every classic member supports (any protocol when the group has no classic member)."""
        if protocol_type != "consumer" or not names:
            return False
        classic = self.classic_members()
        if not classic:
            return True
        return any(
            all(any(p.name == name for p in m.classic.supported_protocols)  # type: ignore[union-attr]
                for m in classic)
            for name in names
        )

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members ask for (Kafka's computePreferredServerAssignor),
        ties broken by name; ``default`` when none asks."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor is not None:
                counts[member.server_assignor] = counts.get(member.server_assignor, 0) + 1
        if not counts:
            return default
        return min(counts, key=lambda name: (-counts[name], name))

    def subscriptions(
        self, image: TopicsImage
    ) -> tuple[dict[str, frozenset[uuid.UUID]], int]:
        """(each member's subscribed topic ids, the subscribed topics' metadata hash) against
        ``image``; cached until the image or a member's metadata changes (the hot path of a
        heartbeat that changes nothing)."""
        if self._resolved_image is image:
            return self._resolved
        # Members with the same subscription share one resolved set (memory per member).
        shared: dict[tuple[tuple[str, ...], str | None], frozenset[uuid.UUID]] = {}
        subscribed = {}
        for mid, m in self.members.items():
            key = (m.subscribed_topic_names, m.subscribed_topic_regex)
            ids = shared.get(key)
            if ids is None:
                ids = shared[key] = image.resolve(
                    m.subscribed_topic_names, m.subscribed_topic_regex
                )
            subscribed[mid] = ids
        self._resolved = (subscribed, image.metadata_hash(frozenset().union(*subscribed.values())))
        self._resolved_image = image
        return self._resolved

    def subscribed_topic_names(self, image: TopicsImage) -> set[str]:
        """Every topic a member subscribes to, by name or regex (Kafka's
        isSubscribedToTopic): its offsets neither expire nor can be deleted."""
        subscribed, _ = self.subscriptions(image)
        names = {image.by_id[t] for ids in subscribed.values() for t in ids if t in image.by_id}
        for member in self.members.values():
            names.update(member.subscribed_topic_names)
        return names

    def is_current(self, image: TopicsImage) -> bool:
        """Whether the group's subscriptions were last resolved against ``image`` and its
        target assignment is at the group epoch (nothing to recompute)."""
        return self._resolved_image is image and self.group_epoch == self.assignment_epoch

    def target_of(self, member_id: str) -> PartitionMap:
        """The member's target assignment (empty when it has none)."""
        return self.target.get(member_id, EMPTY_ASSIGNMENT)

    # ------------------------------------------------------------------ replay

    def replay(self, record: Record) -> None:
        """Apply one consumer group record of this group (a None value is a tombstone)."""
        key = record.key
        value = record.value
        if isinstance(key, ConsumerGroupMetadataKey):
            if isinstance(value, ConsumerGroupMetadataValue):
                self.group_epoch = value.epoch
                self.metadata_hash = value.metadata_hash
            elif value is None:
                self.group_epoch = 0
                self.metadata_hash = 0
        elif isinstance(key, ConsumerGroupTargetAssignmentMetadataKey):
            if isinstance(value, ConsumerGroupTargetAssignmentMetadataValue):
                self.assignment_epoch = value.assignment_epoch
            elif value is None:
                self.assignment_epoch = 0
        elif isinstance(key, ConsumerGroupTargetAssignmentMemberKey):
            if isinstance(value, ConsumerGroupTargetAssignmentMemberValue):
                self.target[key.member_id] = from_topic_partitions(value.topic_partitions)
            elif value is None:
                self.target.pop(key.member_id, None)
        elif isinstance(key, ConsumerGroupMemberMetadataKey):
            self._replay_member(key.member_id, value)
        elif isinstance(key, ConsumerGroupCurrentMemberAssignmentKey):
            self._replay_current(key.member_id, value)

    def _replay_member(self, member_id: str, value: object) -> None:
        self._resolved_image = None
        member = self.members.get(member_id)
        if value is None:
            if member is not None:
                self.ledger.update_member(member.current, None)
                del self.members[member_id]
                self.classic_join_deadlines.pop(member_id, None)
                instance_id = member.instance_id
                if instance_id is not None and self.static_members.get(instance_id) == member_id:
                    del self.static_members[instance_id]
            return
        assert isinstance(value, ConsumerGroupMemberMetadataValue)
        if member is None:
            member = self.members[member_id] = ConsumerMember(member_id)
            self.ledger.update_member(None, member.current)
        if member.instance_id is not None and member.instance_id != value.instance_id:
            self.static_members.pop(member.instance_id, None)
        member.instance_id = value.instance_id
        member.rack_id = value.rack_id
        member.client_id = value.client_id
        member.client_host = value.client_host
        member.subscribed_topic_names = value.subscribed_topic_names
        member.subscribed_topic_regex = value.subscribed_topic_regex
        member.rebalance_timeout_ms = value.rebalance_timeout_ms
        member.server_assignor = value.server_assignor
        member.classic = value.classic_member_metadata
        if value.instance_id is not None:
            self.static_members[value.instance_id] = member_id

    def _replay_current(self, member_id: str, value: object) -> None:
        member = self.members.get(member_id)
        if member is None:
            if value is None:
                return
            member = self.members[member_id] = ConsumerMember(member_id)
            self.ledger.update_member(None, member.current)
        if value is None:
            new = _NO_MEMBER_EPOCH
        else:
            assert isinstance(value, ConsumerGroupCurrentMemberAssignmentValue)
            new = CurrentMemberAssignment(
                state=MemberState.from_value(value.state),
                member_epoch=value.member_epoch,
                previous_member_epoch=value.previous_member_epoch,
                assigned_partitions=from_topic_partitions(value.assigned_partitions),
                partitions_pending_revocation=from_topic_partitions(
                    value.partitions_pending_revocation
                ),
            )
        self.ledger.update_member(member.current, new)
        member.current = new
