"""Kafka's ``SimpleAssignor`` for share groups (KIP-932): several members may share a
partition. Each member is first hashed onto one of its subscribed partitions (Java's
``String.hashCode``, so the choice is Kafka's); partitions left with no member, new or
current, go round-robin; the current assignment is kept for members still subscribed.
Member ids and topic ids are taken in sorted order, so the result is deterministic."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

__all__ = [
    "SIMPLE_ASSIGNOR_NAME",
    "PartitionAssignorError", "TopicIdPartition", "java_string_hash",
    "simple_assign",
]

#: The assignor's name, as share groups report it.
SIMPLE_ASSIGNOR_NAME = "simple"

TopicIdPartition = tuple[uuid.UUID, int]
Assignment = dict[str, dict[uuid.UUID, frozenset[int]]]


class PartitionAssignorError(ValueError):
    """Kafka's PartitionAssignorException: a member subscribes to an unknown topic."""


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: over UTF-16 code units, in 32-bit two's complement."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _partitions(
    topic_ids: Iterable[uuid.UUID], partition_counts: Mapping[uuid.UUID, int]
) -> list[TopicIdPartition]:
    found: list[TopicIdPartition] = []
    for topic_id in sorted(topic_ids):
        count = partition_counts.get(topic_id, -1)
        if count == -1:
            raise PartitionAssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the topic "
                "metadata."
            )
        found.extend((topic_id, p) for p in range(count))
    return found


def _hash_assign(
    targets: list[TopicIdPartition], members: Iterable[str], out: dict[TopicIdPartition, list[str]]
) -> None:
    if targets:
        for member in members:
            # Math.abs(hash % n): Java's remainder has the dividend's sign.
            index = abs(java_string_hash(member)) % len(targets)
            out.setdefault(targets[index], []).append(member)


def _round_robin(
    members: list[str], targets: list[TopicIdPartition], out: dict[TopicIdPartition, list[str]]
) -> None:
    for i, target in enumerate(targets):
        out.setdefault(target, []).append(members[i % len(members)])


def simple_assign(
    subscriptions: Mapping[str, Iterable[uuid.UUID]],
    partition_counts: Mapping[uuid.UUID, int],
    current: Mapping[str, Mapping[uuid.UUID, Iterable[int]]] | None = None,
) -> Assignment:
    """Each member's partitions, by topic id, from the members' subscribed topic ids, the
    topics' partition counts and the current assignment (heterogeneous subscriptions are
    handled per topic, as Kafka's assignHeterogeneous)."""
    members = sorted(subscriptions)
    if not members:
        return {}
    current_by_partition: dict[TopicIdPartition, list[str]] = {}
    for member in members:
        for topic_id, parts in (current or {}).get(member, {}).items():
            for p in parts:
                current_by_partition.setdefault((topic_id, p), []).append(member)
    subscribed = {m: frozenset(subscriptions[m]) for m in members}
    if len(set(subscribed.values())) == 1:
        return _assign_homogeneous(members, subscribed[members[0]], partition_counts,
                                   current_by_partition)
    member_targets = {
        m: _partitions(subscribed[m], partition_counts) for m in members if subscribed[m]
    }
    topic_members: dict[uuid.UUID, list[str]] = {}
    for member, targets in member_targets.items():
        for topic_id in dict.fromkeys(t for t, _ in targets):
            topic_members.setdefault(topic_id, []).append(member)

    new: dict[TopicIdPartition, list[str]] = {}
    for member, targets in member_targets.items():
        _hash_assign(targets, [member], new)
    all_targets = list(dict.fromkeys(t for ts in member_targets.values() for t in ts))
    unassigned: dict[uuid.UUID, list[TopicIdPartition]] = {}
    for target in all_targets:
        if target not in new and target not in current_by_partition:
            unassigned.setdefault(target[0], []).append(target)
    for topic_id in sorted(unassigned):
        _round_robin(topic_members[topic_id], unassigned[topic_id], new)

    final: dict[str, set[TopicIdPartition]] = {m: set() for m in members}
    for target, owners in current_by_partition.items():
        for member in owners:
            if member in topic_members.get(target[0], ()):
                final[member].add(target)
    return _by_topic(final, new)


def _assign_homogeneous(
    members: list[str],
    topic_ids: frozenset[uuid.UUID],
    partition_counts: Mapping[uuid.UUID, int],
    current_by_partition: dict[TopicIdPartition, list[str]],
) -> Assignment:
    """Every member subscribes to the same topics (Kafka's assignHomogenous)."""
    if not topic_ids:
        return {}
    targets = _partitions(topic_ids, partition_counts)
    new: dict[TopicIdPartition, list[str]] = {}
    _hash_assign(targets, members, new)
    unassigned = [t for t in targets if t not in new and t not in current_by_partition]
    _round_robin(members, unassigned, new)
    final: dict[str, set[TopicIdPartition]] = {m: set() for m in members}
    for target, owners in current_by_partition.items():
        if target[0] in topic_ids:
            for member in owners:
                final[member].add(target)
    return _by_topic(final, new)


def _by_topic(
    final: dict[str, set[TopicIdPartition]], new: dict[TopicIdPartition, list[str]]
) -> Assignment:
    for target, owners in new.items():
        for member in owners:
            final[member].add(target)
    return {
        member: {
            t: frozenset(p for tt, p in targets if tt == t)
            for t in sorted({tt for tt, _ in targets})
        }
        for member, targets in final.items()
    }
