"""The ``uniform`` assignor (Kafka's UniformAssignor), the default server-side assignor.

Balance comes first (member sizes differ by at most one partition), stickiness second (a
member keeps what it had when balance allows). When every member subscribes to the same topics
the homogeneous builder below runs (Kafka's UniformHomogeneousAssignmentBuilder, with
KAFKA-18688: any member may hold the extra partition, so a balanced assignment is kept as it
is); otherwise ``uniform_heterogeneous`` does (Kafka's UniformHeterogeneousAssignmentBuilder).

Order, so that equal inputs give equal outputs whatever the mappings' order:

- members are visited by ascending member id (Kafka visits ``GroupSpec.memberIds()``, a
  HashMap in production; its tests pass a TreeMap, i.e. this order);
- topics are visited by ascending topic id, partitions ascending (Kafka walks HashSets here,
  so where several answers are equally balanced and sticky Kafka may pick another one).

Preconditions (Kafka's target assignment always meets them): members' current assignments
are disjoint and name existing partitions.

Each member appears in the result. A member whose assignment is unchanged gets back the very
mapping it came with (Kafka's testAssignmentReuse), so callers can compare by identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from coordinator.core.consumer.spec import (
    EMPTY_ASSIGNMENT,
    GroupAssignment,
    GroupSpec,
    PartitionAssignorError,
    SubscriptionType,
    TopicIdT,
)
from coordinator.core.consumer.uniform_heterogeneous import assign_heterogeneous

__all__ = ["UNIFORM_ASSIGNOR_NAME", "UniformAssignor", "assign_homogeneous"]

UNIFORM_ASSIGNOR_NAME: Final = "uniform"


class UniformAssignor:
    """Kafka's UniformAssignor: picks the homogeneous or heterogeneous builder."""

    @property
    def name(self) -> str:
        return UNIFORM_ASSIGNOR_NAME

    def assign(self, spec: GroupSpec[TopicIdT]) -> GroupAssignment[TopicIdT]:
        """The new target assignment of every member of ``spec``."""
        if not spec.members:
            return {}
        if spec.resolved_subscription_type() is SubscriptionType.HOMOGENEOUS:
            return assign_homogeneous(spec)
        return assign_heterogeneous(spec)


def assign_homogeneous(spec: GroupSpec[TopicIdT]) -> GroupAssignment[TopicIdT]:
    """Balance-then-stickiness assignment for members that all subscribe to the same topics."""
    member_ids = sorted(spec.members)
    subscribed = spec.members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return dict.fromkeys(member_ids, EMPTY_ASSIGNMENT)
    topic_ids = sorted(subscribed)
    counts = {topic_id: spec.partition_count(topic_id) for topic_id in topic_ids}

    # Partitions nobody holds yet, in topic then partition order.
    held: dict[TopicIdT, set[int]] = {topic_id: set() for topic_id in topic_ids}
    for member in spec.members.values():
        for topic_id, partitions in member.assignment.items():
            if topic_id in held:
                held[topic_id].update(partitions)
    unassigned: list[tuple[TopicIdT, int]] = [
        (topic_id, partition)
        for topic_id in topic_ids
        for partition in range(counts[topic_id])
        if partition not in held[topic_id]
    ]

    min_quota, extras_left = divmod(sum(counts.values()), len(member_ids))
    result: GroupAssignment[TopicIdT] = {}
    unfilled: list[_Unfilled] = []

    for member_id in member_ids:
        current = spec.members[member_id].assignment
        quota = min_quota
        # Every member may claim one of the extra partitions while some are left; only a
        # member that already fills the larger quota keeps the claim (KAFKA-18688).
        claims_extra = extras_left > 0
        if claims_extra:
            quota += 1
        kept: dict[TopicIdT, frozenset[int]] | None = None
        for topic_id in sorted(current):
            partitions = current[topic_id]
            if topic_id not in subscribed:
                kept = dict(current) if kept is None else kept
                del kept[topic_id]
            elif len(partitions) <= quota:
                quota -= len(partitions)
            else:
                ordered = sorted(partitions)
                kept = dict(current) if kept is None else kept
                if quota:
                    kept[topic_id] = frozenset(ordered[:quota])
                else:
                    del kept[topic_id]
                unassigned.extend((topic_id, partition) for partition in ordered[quota:])
                quota = 0
        if quota > 0 and claims_extra:
            quota -= 1
            claims_extra = False
        if quota == 0 and claims_extra:
            extras_left -= 1
        if quota > 0 or (extras_left > 0 and not claims_extra):
            unfilled.append(_Unfilled(member_id, quota))
        result[member_id] = current if kept is None else kept

    _hand_out(result, unfilled, unassigned, extras_left)
    return result


@dataclass(slots=True)
class _Unfilled:
    """A member that can take more partitions, and how many."""

    member_id: str
    quota: int


def _hand_out(
    result: GroupAssignment[TopicIdT],
    unfilled: list[_Unfilled],
    unassigned: list[tuple[TopicIdT, int]],
    extras_left: int,
) -> None:
    """Gives the unassigned partitions to the unfilled members, in order; the last
    ``extras_left`` unfilled members take the remaining extra partitions."""
    for member in reversed(unfilled):
        if extras_left <= 0:
            break
        extras_left -= 1
        member.quota += 1

    index = 0
    for member in unfilled:
        take = min(member.quota, len(unassigned) - index)
        if take <= 0:
            continue
        grown: dict[TopicIdT, set[int]] = {}
        for topic_id, partition in unassigned[index : index + take]:
            grown.setdefault(topic_id, set()).add(partition)
        index += take
        result[member.member_id] = _merged(result[member.member_id], grown)
    if index < len(unassigned):
        raise PartitionAssignorError("Partitions were left unassigned")


def _merged(
    base: Mapping[TopicIdT, frozenset[int]], added: Mapping[TopicIdT, set[int]]
) -> dict[TopicIdT, frozenset[int]]:
    merged = dict(base)
    for topic_id, partitions in added.items():
        merged[topic_id] = merged.get(topic_id, frozenset()) | partitions
    return merged
