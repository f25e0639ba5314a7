"""Kafka's ConsumerGroupTest (modern/consumer, trunk 2024-10-25) on kcoord's group model:
members, static members, states, the preferred server assignor, subscriptions and the
classic-protocol members, under Kafka's names in snake_case.

Kafka's tests call ``ConsumerGroup.updateMember`` / ``removeMember``; kcoord's group changes
only by replaying records, so here a member is updated by replaying its metadata and current
assignment records and removed by replaying its tombstones (what Kafka's replay does to its
group too). Kafka's ``compute...(oldMember, newMember)`` variants, which look ahead at a
change not applied yet, have no kcoord counterpart (kcoord applies the record, then reads
the group); their expectations are checked once the change is applied."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from coordinator.core.consumer import (
    GroupSpec,
    MemberState,
    MemberSubscription,
    SubscriptionType,
)
from coordinator.core.consumer.group import (
    ASSIGNING,
    CONSUMER_EMPTY,
    CONSUMER_STABLE,
    RECONCILING,
    ConsumerGroup,
    to_topic_partitions,
)
from coordinator.core.topics_image import TopicsImage
from storage.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    Record,
)

GROUP = "foo"
FOO = uuid.UUID(int=0xF00)
BAR = uuid.UUID(int=0xBA4)
ZAR = uuid.UUID(int=0x2A4)
IMAGE = TopicsImage((("foo", FOO, 1), ("bar", BAR, 2), ("zar", ZAR, 3)), version=1)


def classic(*names: str) -> ClassicMemberMetadata:
    """A classic member's metadata supporting ``names`` (empty protocol metadata)."""
    return ClassicMemberMetadata(500, tuple(ClassicProtocol(n, b"") for n in names))


def member_records(
    member_id: str,
    *,
    epoch: int = 0,
    previous: int = 0,
    state: MemberState = MemberState.STABLE,
    topics: Iterable[str] = (),
    instance_id: str | None = None,
    assignor: str | None = None,
    classic_metadata: ClassicMemberMetadata | None = None,
    assigned: dict[uuid.UUID, frozenset[int]] | None = None,
    group_id: str = GROUP,
) -> list[Record]:
    """Kafka's ConsumerGroupMember.Builder(...).build() as kcoord's two member records."""
    return [
        Record(ConsumerGroupMemberMetadataKey(group_id, member_id),
               ConsumerGroupMemberMetadataValue(
                   instance_id=instance_id, rack_id=None, client_id="", client_host="",
                   subscribed_topic_names=tuple(topics), subscribed_topic_regex=None,
                   rebalance_timeout_ms=-1, server_assignor=assignor,
                   classic_member_metadata=classic_metadata)),
        Record(ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id),
               ConsumerGroupCurrentMemberAssignmentValue(
                   member_epoch=epoch, previous_member_epoch=previous, state=int(state),
                   assigned_partitions=to_topic_partitions(assigned or {}),
                   partitions_pending_revocation=())),
    ]


def update_member(group: ConsumerGroup, member_id: str, **fields: object) -> None:
    """Kafka's updateMember: replay the member's records."""
    for record in member_records(member_id, group_id=group.group_id, **fields):  # type: ignore[arg-type]
        group.replay(record)


def remove_member(group: ConsumerGroup, member_id: str) -> None:
    """Kafka's removeMember: replay the member's tombstones."""
    gid = group.group_id
    for key in (ConsumerGroupCurrentMemberAssignmentKey(gid, member_id),
                ConsumerGroupTargetAssignmentMemberKey(gid, member_id),
                ConsumerGroupMemberMetadataKey(gid, member_id)):
        group.replay(Record(key, None))


def set_group_epoch(group: ConsumerGroup, epoch: int) -> None:
    group.replay(Record(ConsumerGroupMetadataKey(group.group_id),
                        ConsumerGroupMetadataValue(epoch, group.metadata_hash)))


def set_target_assignment_epoch(group: ConsumerGroup, epoch: int) -> None:
    group.replay(Record(ConsumerGroupTargetAssignmentMetadataKey(group.group_id),
                        ConsumerGroupTargetAssignmentMetadataValue(epoch)))


def test_update_member() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member", topics=["foo", "bar"])
    (value, _) = member_records("member", topics=["foo", "bar"])
    assert group.members["member"].metadata_value() == value.value
    update_member(group, "member", topics=["bar"])
    assert group.members["member"].subscribed_topic_names == ("bar",)
    assert list(group.members) == ["member"]


def test_no_static_member() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member")
    assert group.static_members.get("instance-id") is None


def test_get_static_member_by_instance_id() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member", topics=["foo", "bar"], instance_id="instance")
    assert group.static_members["instance"] == "member"
    member = group.members[group.static_members["instance"]]
    assert (member.member_id, member.instance_id, member.subscribed_topic_names) == (
        "member", "instance", ("foo", "bar"))


def test_remove_member() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member")
    assert "member" in group.members
    remove_member(group, "member")
    assert "member" not in group.members


def test_remove_static_member() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member", topics=["foo", "bar"], instance_id="instance")
    assert "member" in group.members
    remove_member(group, "member")
    assert "member" not in group.members
    assert "instance" not in group.static_members


def test_group_state() -> None:
    group = ConsumerGroup(GROUP)
    assert group.state == CONSUMER_EMPTY
    update_member(group, "member1", epoch=1, previous=0)
    set_group_epoch(group, 1)
    assert group.members["member1"].current.state is MemberState.STABLE
    assert group.state == ASSIGNING
    update_member(group, "member2", epoch=1, previous=0)
    set_group_epoch(group, 2)
    assert group.state == ASSIGNING
    set_target_assignment_epoch(group, 2)
    assert group.state == RECONCILING
    update_member(group, "member1", epoch=2, previous=1)
    assert group.state == RECONCILING
    # Member 2 is not stable so the group stays in reconciling state.
    update_member(group, "member2", epoch=2, previous=1, state=MemberState.UNREVOKED_PARTITIONS)
    assert group.members["member2"].current.state is MemberState.UNREVOKED_PARTITIONS
    assert group.state == RECONCILING
    update_member(group, "member2", epoch=2, previous=1)
    assert group.state == CONSUMER_STABLE
    remove_member(group, "member1")
    remove_member(group, "member2")
    assert group.state == CONSUMER_EMPTY


def test_preferred_server_assignor() -> None:
    # Kafka's Optional.empty() is kcoord's default (the first configured assignor), "" here.
    group = ConsumerGroup(GROUP)
    assert group.preferred_assignor("") == ""
    update_member(group, "member1", assignor="range")
    assert group.preferred_assignor("") == "range"
    remove_member(group, "member1")
    assert group.preferred_assignor("") == ""
    update_member(group, "member1", assignor="range")
    update_member(group, "member2", assignor="range")
    assert group.preferred_assignor("") == "range"
    update_member(group, "member3", assignor="uniform")
    assert group.preferred_assignor("") == "range"
    # Members drop their assignors. Kafka: "range or uniform" on the tie; kcoord breaks
    # ties by name.
    update_member(group, "member1")
    assert group.preferred_assignor("") in ("range", "uniform")
    update_member(group, "member2")
    assert group.preferred_assignor("") == "uniform"
    update_member(group, "member3")
    assert group.preferred_assignor("") == ""


def _subscribed_hash(group: ConsumerGroup) -> tuple[set[str], int]:
    """(the subscribed topics' names, their metadata hash): kcoord's subscription metadata
    (KIP-1101's hash of each topic's name, id and partitions instead of Kafka 4.0's map)."""
    subscribed, metadata_hash = group.subscriptions(IMAGE)
    return {IMAGE.by_id[t] for ids in subscribed.values() for t in ids}, metadata_hash


def _expected(*names: str) -> tuple[set[str], int]:
    return set(names), IMAGE.metadata_hash(IMAGE.by_name[n][0] for n in names)


def test_update_subscription_metadata() -> None:
    group = ConsumerGroup(GROUP)
    # It should be empty by default.
    assert _subscribed_hash(group) == (set(), 0) == _expected()
    update_member(group, "member1", topics=["foo"])
    assert _subscribed_hash(group) == _expected("foo")
    update_member(group, "member2", topics=["bar"])
    assert _subscribed_hash(group) == _expected("foo", "bar")
    update_member(group, "member3", topics=["zar"])
    assert _subscribed_hash(group) == _expected("foo", "bar", "zar")
    assert IMAGE.by_name["zar"][1] == 3 and IMAGE.by_name["bar"][1] == 2
    # Removing members (Kafka computes these ahead of the removal).
    remove_member(group, "member1")
    assert _subscribed_hash(group) == _expected("bar", "zar")
    remove_member(group, "member2")
    remove_member(group, "member3")
    assert _subscribed_hash(group) == _expected()
    # The hash changes with a topic's partition count.
    update_member(group, "member1", topics=["foo"])
    grown = TopicsImage((("foo", FOO, 2), ("bar", BAR, 2), ("zar", ZAR, 3)), version=2)
    assert group.subscriptions(grown)[1] not in (0, _expected("foo")[1])


def _subscription_type(group: ConsumerGroup) -> SubscriptionType:
    subscribed, _ = group.subscriptions(IMAGE)
    spec = GroupSpec(members={mid: MemberSubscription(ids) for mid, ids in subscribed.items()},
                     topics={})
    return spec.resolved_subscription_type()


def test_update_subscribed_topic_names_and_subscription_type() -> None:
    group = ConsumerGroup(GROUP)
    # Empty and homogeneous by default.
    assert group.subscribed_topic_names(IMAGE) == set()
    assert _subscription_type(group) is SubscriptionType.HOMOGENEOUS
    update_member(group, "member1", topics=["foo"])
    assert _subscription_type(group) is SubscriptionType.HOMOGENEOUS
    update_member(group, "member2", topics=["bar", "foo"])
    assert _subscription_type(group) is SubscriptionType.HETEROGENEOUS
    update_member(group, "member3", topics=["bar", "foo"])
    assert _subscription_type(group) is SubscriptionType.HETEROGENEOUS
    remove_member(group, "member1")
    assert _subscription_type(group) is SubscriptionType.HOMOGENEOUS
    update_member(group, "member2", topics=["bar", "foo", "zar"])
    assert _subscription_type(group) is SubscriptionType.HETEROGENEOUS
    assert group.subscribed_topic_names(IMAGE) == {"foo", "bar", "zar"}


def test_is_subscribed_to_topic() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member1", topics=["foo"])
    update_member(group, "member2", topics=["bar"])
    assert _subscribed_hash(group) == _expected("foo", "bar")
    assert {"foo", "bar"} <= group.subscribed_topic_names(IMAGE)
    remove_member(group, "member1")
    assert "foo" not in group.subscribed_topic_names(IMAGE)
    remove_member(group, "member2")
    assert "bar" not in group.subscribed_topic_names(IMAGE)


def _supported_counts(group: ConsumerGroup) -> dict[str, int]:
    """Kafka's classicMembersSupportedProtocols (kcoord counts on demand)."""
    counts: dict[str, int] = {}
    for member in group.classic_members():
        assert member.classic is not None
        for protocol in member.classic.supported_protocols:
            counts[protocol.name] = counts.get(protocol.name, 0) + 1
    return counts


def test_classic_members_supported_protocols() -> None:
    group = ConsumerGroup(GROUP)
    update_member(group, "member-1", classic_metadata=classic("range"))
    update_member(group, "member-2", classic_metadata=classic("roundrobin", "range"))
    assert _supported_counts(group) == {"range": 2, "roundrobin": 1}
    assert group.supports_classic_protocols("consumer", {"range", "sticky"})
    assert not group.supports_classic_protocols("consumer", {"sticky", "roundrobin"})
    update_member(group, "member-2", classic_metadata=classic("range"))
    assert _supported_counts(group) == {"range": 2}
    update_member(group, "member-1", classic_metadata=classic("roundrobin", "range"))
    update_member(group, "member-2", classic_metadata=classic("roundrobin", "range"))
    assert _supported_counts(group) == {"range": 2, "roundrobin": 2}
    assert group.supports_classic_protocols("consumer", {"sticky", "roundrobin"})


def test_num_classic_protocol_members() -> None:
    group = ConsumerGroup(GROUP)
    # Member 1 uses the classic protocol.
    update_member(group, "member-1", classic_metadata=classic("range"))
    assert len(group.classic_members()) == 1
    # Member 2 uses the consumer protocol.
    update_member(group, "member-2")
    assert len(group.classic_members()) == 1
    assert not group.all_members_use_classic_protocol_except("member-1")
    assert group.all_members_use_classic_protocol_except("member-2")
    # Members 2 and 3, both using the consumer protocol.
    remove_member(group, "member-1")
    update_member(group, "member-3")
    assert len(group.classic_members()) == 0
    assert not group.all_members_use_classic_protocol_except("member-2")
    # Member 2 comes back using the classic protocol.
    remove_member(group, "member-2")
    update_member(group, "member-2", classic_metadata=classic("range"))
    assert len(group.classic_members()) == 1
