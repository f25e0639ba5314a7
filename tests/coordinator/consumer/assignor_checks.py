"""Helpers for the assignor and reconciliation tests: Kafka's test topic ids, assignment
builders in the shape of Kafka's AssignmentTestUtil, and the validity/balance checks."""

from __future__ import annotations

import base64
import itertools
import uuid
from collections.abc import Mapping
from typing import Any

from coordinator.core.consumer import (
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    PartitionAssignor,
    SubscriptionType,
    TopicMetadata,
)


def kafka_uuid(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString: 22 characters of URL-safe base64 without padding."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


# The fixed topic ids of Kafka's assignor tests. Their most significant bits are positive, so
# Kafka's signed Uuid.compareTo and uuid.UUID's unsigned order agree on them.
TOPIC_1 = kafka_uuid("T1-A4s3VTwiI5CTbEp6POw")
TOPIC_2 = kafka_uuid("T2-B4s3VTwiI5YHbPp6YUe")
TOPIC_3 = kafka_uuid("T3-CU8fVTLCz5YMkLoDQsa")
TOPIC_4 = kafka_uuid("T4-Tw9fVTLCz5HbPp6YQsa")
NAMES = {TOPIC_1: "topic1", TOPIC_2: "topic2", TOPIC_3: "topic3", TOPIC_4: "topic4"}

Uuid = uuid.UUID


def mk(*topics: tuple[Any, ...]) -> dict[Uuid, frozenset[int]]:
    """mkAssignment(mkTopicAssignment(topic, p...), ...) as ``mk((topic, p, ...), ...)``."""
    return {topic_id: frozenset(partitions) for topic_id, *partitions in topics}


def topics(**partition_counts: int) -> dict[Uuid, TopicMetadata]:
    """Topic metadata from ``topic1=3, topic3=2`` style keywords, using Kafka's test ids."""
    by_name = {name: topic_id for topic_id, name in NAMES.items()}
    return {by_name[name]: TopicMetadata(name, count) for name, count in partition_counts.items()}


def member(
    *subscribed: Uuid,
    assignment: Mapping[Uuid, frozenset[int]] | None = None,
    instance_id: str | None = None,
    rack_id: str | None = None,
) -> MemberSubscription[Uuid]:
    """A member subscribed to ``subscribed`` holding ``assignment`` (default: nothing)."""
    if assignment is None:
        return MemberSubscription(frozenset(subscribed), instance_id=instance_id, rack_id=rack_id)
    return MemberSubscription(
        frozenset(subscribed), dict(assignment), instance_id=instance_id, rack_id=rack_id
    )


def spec(
    members: Mapping[str, MemberSubscription[Uuid]],
    topic_metadata: Mapping[Uuid, TopicMetadata],
    subscription_type: SubscriptionType | None = None,
) -> GroupSpec[Uuid]:
    return GroupSpec(dict(members), dict(topic_metadata), subscription_type)


def with_assignment(
    group: GroupSpec[Uuid], assignment: GroupAssignment[Uuid]
) -> dict[str, MemberSubscription[Uuid]]:
    """The members of ``group`` now holding ``assignment`` (the next rebalance's input)."""
    return {
        member_id: MemberSubscription(
            sub.subscribed_topic_ids, assignment[member_id], sub.instance_id, sub.rack_id
        )
        for member_id, sub in group.members.items()
    }


def plain(assignment: GroupAssignment[Uuid]) -> dict[str, dict[Uuid, frozenset[int]]]:
    """The assignment as plain dicts, for equality with an expected value."""
    return {member_id: dict(parts) for member_id, parts in assignment.items()}


def owners(assignment: GroupAssignment[Uuid]) -> dict[tuple[Uuid, int], list[str]]:
    """Every assigned partition and the members holding it."""
    found: dict[tuple[Uuid, int], list[str]] = {}
    for member_id, parts in assignment.items():
        for topic_id, partitions in parts.items():
            for partition in partitions:
                found.setdefault((topic_id, partition), []).append(member_id)
    return found


def sizes(assignment: GroupAssignment[Uuid]) -> dict[str, int]:
    return {m: sum(len(p) for p in parts.values()) for m, parts in assignment.items()}


def check_validity_and_balance(
    group: GroupSpec[Uuid], assignment: GroupAssignment[Uuid], *, max_spread: int = 1
) -> None:
    """Kafka's checkValidityAndBalance: members only get subscribed topics, no partition is
    assigned twice, and member sizes differ by at most ``max_spread``; also that every member
    is in the result and every subscribed partition is assigned."""
    assert set(assignment) == set(group.members)
    for member_id, parts in assignment.items():
        assert set(parts) <= group.members[member_id].subscribed_topic_ids, member_id
        assert all(parts.values()), f"{member_id} has an empty partition set"
    held = owners(assignment)
    assert all(len(holders) == 1 for holders in held.values()), held
    assert set(held) == subscribed_partitions(group)
    counts = sizes(assignment).values()
    assert max(counts) - min(counts) <= max_spread, sizes(assignment)


def subscribed_partitions(group: GroupSpec[Uuid]) -> set[tuple[Uuid, int]]:
    """Every partition of every topic some member subscribes to."""
    subscribed: set[Uuid] = set()
    for sub in group.members.values():
        subscribed |= sub.subscribed_topic_ids
    return {(t, p) for t in subscribed for p in range(group.topics[t].partition_count)}


def moved(before: GroupAssignment[Uuid], after: GroupAssignment[Uuid]) -> int:
    """How many partitions a member held before and no longer holds."""
    return sum(
        len(parts - after.get(member_id, {}).get(topic_id, frozenset()))
        for member_id, held in before.items()
        for topic_id, parts in held.items()
    )


# Kafka's CommonAssignorTests, run by the uniform builders' tests with their subscription type.

COMMON_TOPICS = topics(topic1=2, topic2=5, topic3=7)


def check_assignment_reuse(
    assignor: PartitionAssignor, subscription_type: SubscriptionType, rack_aware: bool
) -> None:
    """testAssignmentReuse: an unchanged member assignment comes back as the same mapping."""
    members = {
        name: member(TOPIC_1, TOPIC_2, TOPIC_3, rack_id=f"rack{i}" if rack_aware else None)
        for i, name in enumerate("ABC", start=1)
    }
    group = spec(members, COMMON_TOPICS, subscription_type)
    first = assignor.assign(group)
    check_validity_and_balance(group, first)
    again = spec(with_assignment(group, first), COMMON_TOPICS, subscription_type)
    second = assignor.assign(again)
    for member_id, sub in again.members.items():
        assert second[member_id] is sub.assignment


def check_reassignment_stickiness(
    assignor: PartitionAssignor, subscription_type: SubscriptionType, rack_aware: bool
) -> None:
    """testReassignmentStickiness: whatever order the members come in, the assignment they
    hold is kept as it is. Only B gets a rack, so A and C stay interchangeable."""
    members = {
        "A": member(TOPIC_1, TOPIC_2, TOPIC_3),
        "B": member(TOPIC_1, TOPIC_2, TOPIC_3, rack_id="rack1" if rack_aware else None),
        "C": member(TOPIC_1, TOPIC_2, TOPIC_3),
    }
    first = assignor.assign(spec(members, COMMON_TOPICS, subscription_type))
    for order in itertools.permutations("ABC"):
        ordered = {m: member(TOPIC_1, TOPIC_2, TOPIC_3, assignment=first[m]) for m in order}
        again = assignor.assign(spec(ordered, COMMON_TOPICS, subscription_type))
        assert plain(again) == plain(first)
