"""Kafka's ``SimpleAssignor`` for share groups (KIP-932), as Kafka 4.2 has it
(``group-coordinator/.../assignor/SimpleAssignor``, ``SimpleHomogeneousAssignmentBuilder``
and ``SimpleHeterogeneousAssignmentBuilder``): balance first -- each partition shared by
``ceil(members / partitions)`` members, each member given its share of the assignments,
no two members' counts more than one apart -- then stickiness: current assignments are
kept where balance allows.

When every member subscribes to the same topics (homogeneous), all their partitions are
balanced together; otherwise each topic is balanced over its own subscribers and the results
combined. The steps, per balancing unit: drop what is no longer subscribed, revoke from
members holding more than their desired count, revoke from partitions shared by more than
the desired sharing, then hand the partitions still short of sharers to the members still
short of partitions, cycling over those members. Kafka walks hash maps and sets where
kcoord walks members in sorted id order and partitions in (topic id, partition) order, so
the targets have Kafka's sizes and stickiness but may pick other members than a Kafka
broker would.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping

__all__ = [
    "SIMPLE_ASSIGNOR_NAME",
    "PartitionAssignorError",
    "TopicIdPartition",
    "simple_assign",
]

#: The assignor's name, as share groups report it.
SIMPLE_ASSIGNOR_NAME = "simple"

TopicIdPartition = tuple[uuid.UUID, int]
Assignment = dict[str, dict[uuid.UUID, frozenset[int]]]
_Mutable = dict[uuid.UUID, set[int]]


class PartitionAssignorError(ValueError):
    """Kafka's PartitionAssignorException: a member subscribes to an unknown topic."""


def _partitions_of(topic_id: uuid.UUID, partition_counts: Mapping[uuid.UUID, int]) -> int:
    count = partition_counts.get(topic_id, -1)
    if count == -1:
        raise PartitionAssignorError(
            f"Members are subscribed to topic {topic_id} which doesn't exist in the topic "
            "metadata.")
    return count


def _desired_counts(sharing: int, partitions: int, members: int) -> list[int]:
    """Each member's desired number of assignments, by position (Kafka's
    desiredAssignmentCount: the ceilings of a fractional share, so they sum exactly)."""
    precise = sharing * partitions / members
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(members)]


def simple_assign(
    subscriptions: Mapping[str, Iterable[uuid.UUID]],
    partition_counts: Mapping[uuid.UUID, int],
    current: Mapping[str, Mapping[uuid.UUID, Iterable[int]]] | None = None,
) -> Assignment:
    """Each member's partitions, by topic id, from the members' subscribed topic ids, the
    topics' partition counts and the current (target) assignment."""
    members = sorted(subscriptions)
    if not members:
        return {}
    subscribed = {m: frozenset(subscriptions[m]) for m in members}
    old: dict[str, _Mutable] = {}
    for member in members:
        kept: _Mutable = {}
        for topic_id, parts in (current or {}).get(member, {}).items():
            count = partition_counts.get(topic_id, 0)
            alive = {p for p in parts if p < count}
            if alive:
                kept[topic_id] = alive
        old[member] = kept
    if len(set(subscribed.values())) == 1:
        topics = subscribed[members[0]]
        if not topics:
            return {}
        for member in members:  # topics no longer subscribed leave the assignment
            old[member] = {t: ps for t, ps in old[member].items() if t in topics}
        targets = [(t, p) for t in sorted(topics)
                   for p in range(_partitions_of(t, partition_counts))]
        _balance(targets, members, old)
    else:
        every = sorted(frozenset().union(*subscribed.values()))
        if not every:
            return {}
        for topic_id in every:
            count = _partitions_of(topic_id, partition_counts)
            _balance([(topic_id, p) for p in range(count)],
                     [m for m in members if topic_id in subscribed[m]], old)
    return {m: {t: frozenset(ps) for t, ps in sorted(old[m].items()) if ps} for m in members}


def _balance(targets: list[TopicIdPartition], members: list[str],
             assignment: dict[str, _Mutable]) -> None:
    """Balance ``targets`` over ``members`` (every member may hold them), changing
    ``assignment`` in place: Kafka's builder steps for one balancing unit."""
    topics = {t for t, _ in targets}
    target_set = set(targets)
    sharing = 0 if not targets else (len(members) + len(targets) - 1) // len(targets)
    desired = dict(zip(members, _desired_counts(sharing, len(targets), len(members))
                       if members else [], strict=True))
    by_partition: dict[TopicIdPartition, list[str]] = {}
    by_member: dict[str, list[TopicIdPartition]] = {}
    for member in sorted(assignment):
        held = sorted((t, p) for t, ps in assignment[member].items() if t in topics for p in ps)
        if member not in desired:  # held partitions of a topic it no longer subscribes to
            for t, p in held:
                assignment[member][t].discard(p)
            continue
        for tp in held:
            if tp in target_set:
                by_partition.setdefault(tp, []).append(member)
                by_member.setdefault(member, []).append(tp)
    # Revoke from members holding more than their desired count.
    for member, held in by_member.items():
        while len(held) > desired[member]:
            tp = held.pop(0)
            by_partition[tp].remove(member)
            assignment[member][tp[0]].discard(tp[1])
    # Revoke from partitions shared by more members than desired.
    for tp in sorted(by_partition):
        sharers = by_partition[tp]
        while len(sharers) > sharing:
            member = sharers.pop(0)
            assignment[member][tp[0]].discard(tp[1])
            by_member[member].remove(tp)
    # Hand partitions short of sharers to members short of partitions, cycling.
    unfilled = [m for m in members if len(by_member.get(m, ())) < desired[m]]
    position = 0
    assigned_this_round = False
    for tp in targets:
        sharers = by_partition.setdefault(tp, [])
        to_make = sharing - len(sharers)
        while to_make > 0:
            if position >= len(unfilled):
                if not assigned_this_round:
                    break
                position = 0
                assigned_this_round = False
            member = unfilled[position]
            position += 1
            if member in sharers:
                continue
            assignment[member].setdefault(tp[0], set()).add(tp[1])
            sharers.append(member)
            held = by_member.setdefault(member, [])
            held.append(tp)
            to_make -= 1
            assigned_this_round = True
            if len(held) >= desired[member]:
                position -= 1
                unfilled.pop(position)
        if not unfilled:
            break
