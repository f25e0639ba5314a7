"""The ``range`` assignor (Kafka's server-side RangeAssignor, rewritten by KAFKA-16944).

Each topic is cut into contiguous ranges, one per subscribed member in member order: with P
partitions and N subscribers, every member gets P // N partitions and the first P % N members
one more. When all members subscribe to the same topics and those have equal partition counts,
member i gets the same partition numbers of every topic (co-partitioning, for joins).

Member order (Kafka's ``sortMemberIds``): static members first, by ascending instance id, then
dynamic members by ascending member id. A static member that restarts under a new member id
therefore keeps its ranges. The assignor is not sticky otherwise: it ignores the current
assignment and recomputes from scratch.

Each member appears in the result, with an empty assignment if it gets nothing.
"""

from __future__ import annotations

from typing import Final

from coordinator.core.consumer.spec import (
    EMPTY_ASSIGNMENT,
    GroupAssignment,
    GroupSpec,
    TopicIdT,
)

__all__ = ["RANGE_ASSIGNOR_NAME", "RangeAssignor", "range_member_order"]

RANGE_ASSIGNOR_NAME: Final = "range"


class RangeAssignor:
    """Kafka's RangeAssignor: contiguous, co-partitioned ranges in static-first member order."""

    @property
    def name(self) -> str:
        return RANGE_ASSIGNOR_NAME

    def assign(self, spec: GroupSpec[TopicIdT]) -> GroupAssignment[TopicIdT]:
        """The new target assignment of every member of ``spec``."""
        ordered = range_member_order(spec)
        subscriber_counts: dict[TopicIdT, int] = {}
        for member_id in ordered:
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                subscriber_counts[topic_id] = subscriber_counts.get(topic_id, 0) + 1
        # Per topic: [next partition to hand out, minimum quota, members still owed an extra].
        cursors: dict[TopicIdT, list[int]] = {}
        for topic_id, subscribers in subscriber_counts.items():
            cursors[topic_id] = [0, *divmod(spec.partition_count(topic_id), subscribers)]

        result: GroupAssignment[TopicIdT] = {}
        for member_id in ordered:
            ranges: dict[TopicIdT, frozenset[int]] = {}
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                cursor = cursors[topic_id]
                start, quota, extras = cursor
                if extras > 0:
                    quota += 1
                    cursor[2] = extras - 1
                end = min(start + quota, spec.partition_count(topic_id))
                cursor[0] = end
                if start < end:
                    ranges[topic_id] = frozenset(range(start, end))
            result[member_id] = ranges if ranges else EMPTY_ASSIGNMENT
        return result


def range_member_order(spec: GroupSpec[TopicIdT]) -> list[str]:
    """Member ids in range order: static members by instance id, then the rest by member id."""

    def key(member_id: str) -> tuple[int, str, str]:
        instance_id = spec.members[member_id].instance_id
        return (0, instance_id, member_id) if instance_id is not None else (1, member_id, "")

    return sorted(spec.members, key=key)
