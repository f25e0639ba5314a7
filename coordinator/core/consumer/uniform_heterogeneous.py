"""The ``uniform`` assignor for members with different subscriptions (Kafka's
UniformHeterogeneousAssignmentBuilder as reworked by KAFKA-17710).

Three stages, as in Kafka:

1. keep every member's current partitions of topics it still subscribes to (stickiness);
2. hand each topic's unassigned partitions, one at a time, to the least loaded subscriber
   (topics in Kafka's order: partitions per subscriber descending, then subscriber count
   ascending, then topic id ascending);
3. repeatedly move partitions from the most to the least loaded subscribers of each topic
   until no move improves balance, at most 16 rounds over the topics.

Members are numbered by ascending member id (Kafka's tests give it that order); ties between
equally loaded members go to the lower number. Partition movement picks a member's highest
partition first. Each member appears in the result; an unchanged assignment is returned as the
same mapping object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Generic

from coordinator.core.consumer.spec import (
    EMPTY_ASSIGNMENT,
    GroupAssignment,
    GroupSpec,
    TopicIdT,
)

__all__ = ["assign_heterogeneous"]

# Kafka's MAX_ITERATION_COUNT: each round roughly halves the imbalance of overlapping
# subscriptions; 16 rounds balance well without running long.
MAX_ITERATION_COUNT: Final = 16
_UNOWNED: Final = -1


def assign_heterogeneous(spec: GroupSpec[TopicIdT]) -> GroupAssignment[TopicIdT]:
    """Balance-then-stickiness assignment for members with differing subscriptions."""
    return _Builder(spec).build()


class _Balancer:
    """Kafka's MemberAssignmentBalancer: a least loaded range of members that grows rightwards
    and a most loaded range that grows leftwards over the subscribers sorted by load."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.members: list[int] = []
        self.least_end = 0  # [0, least_end) is the least loaded range
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0  # [most_start, most_end) is the most loaded range
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        """Starts over on ``members``; returns their largest minus their smallest load."""
        sizes = self.sizes
        self.members = sorted(members, key=lambda member: (sizes[member], member))
        last = len(self.members)
        self.least_end = 0
        self.least_count = sizes[self.members[0]] - 1
        self.next_least = 0
        self.most_start = last
        self.most_end = last
        self.most_count = sizes[self.members[-1]] + 1
        self.next_most = last - 1
        return sizes[self.members[-1]] - sizes[self.members[0]]

    def next_least_loaded(self) -> int:
        """The member to receive the next partition (assumes it will receive one)."""
        sizes, members = self.sizes, self.members
        if self.next_least >= self.least_end:
            # Every member of the range got one: raise the level and take in the members
            # that are now level with it.
            self.least_count += 1
            while (
                self.least_end < len(members) and sizes[members[self.least_end]] == self.least_count
            ):
                self.least_end += 1
            self.next_least = 0
        member = members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        """The member to give up the next partition, or -1 when none can."""
        sizes, members = self.sizes, self.members
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                # Exclusions emptied the range: restart the level from the next member left
                # of it so that the range surely grows.
                self.most_count = sizes[members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[members[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drops the member last returned by next_most_loaded from the most loaded range."""
        members = self.members
        index = self.next_most + 1
        members[index], members[self.most_end - 1] = members[self.most_end - 1], members[index]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _Builder(Generic[TopicIdT]):
    """One run of the heterogeneous builder over one group spec."""

    def __init__(self, spec: GroupSpec[TopicIdT]) -> None:
        self.spec = spec
        self.member_ids = sorted(spec.members)
        self.subscribers: dict[TopicIdT, list[int]] = {}
        for index, member_id in enumerate(self.member_ids):
            for topic_id in spec.members[member_id].subscribed_topic_ids:
                self.subscribers.setdefault(topic_id, []).append(index)
        self.counts = {topic_id: spec.partition_count(topic_id) for topic_id in self.subscribers}
        self.sizes = [0] * len(self.member_ids)
        self.owners = {topic_id: [_UNOWNED] * count for topic_id, count in self.counts.items()}
        # Each member's assignment: the input mapping until the first change, then a
        # working copy of mutable sets.
        self.originals: list[Mapping[TopicIdT, frozenset[int]]] = []
        self.working: list[dict[TopicIdT, set[int]] | None] = [None] * len(self.member_ids)

    def build(self) -> GroupAssignment[TopicIdT]:
        if not self.subscribers:
            return dict.fromkeys(self.member_ids, EMPTY_ASSIGNMENT)
        self._keep_subscribed_partitions()
        self._assign_unowned_partitions()
        self._balance()
        result: GroupAssignment[TopicIdT] = {}
        for index, member_id in enumerate(self.member_ids):
            copy = self.working[index]
            result[member_id] = (
                self.originals[index]
                if copy is None
                else {t: frozenset(parts) for t, parts in copy.items() if parts}
            )
        return result

    def _topic_order(self, topic_id: TopicIdT) -> tuple[float, int, TopicIdT]:
        subscribers = len(self.subscribers[topic_id])
        return (-(self.counts[topic_id] / subscribers), subscribers, topic_id)

    def _keep_subscribed_partitions(self) -> None:
        for index, member_id in enumerate(self.member_ids):
            member = self.spec.members[member_id]
            self.originals.append(member.assignment)
            for topic_id, partitions in member.assignment.items():
                if topic_id in member.subscribed_topic_ids:
                    self.sizes[index] += len(partitions)
                    owners = self.owners[topic_id]
                    for partition in partitions:
                        owners[partition] = index
                else:
                    self._copy(index).pop(topic_id, None)

    def _assign_unowned_partitions(self) -> None:
        unowned = {
            topic_id: [p for p, owner in enumerate(owners) if owner == _UNOWNED]
            for topic_id, owners in self.owners.items()
        }
        balancer = _Balancer(self.sizes)
        for topic_id in sorted((t for t, parts in unowned.items() if parts), key=self._topic_order):
            balancer.initialize(self.subscribers[topic_id])
            for partition in unowned[topic_id]:
                self._move(topic_id, partition, balancer.next_least_loaded())

    def _balance(self) -> None:
        topic_ids = sorted(
            (t for t, subscribers in self.subscribers.items() if len(subscribers) >= 2),
            key=self._topic_order,
        )
        if not topic_ids:
            return
        balancer = _Balancer(self.sizes)
        last_moved = -1
        for _ in range(MAX_ITERATION_COUNT):
            for position, topic_id in enumerate(topic_ids):
                if position == last_moved:
                    # A whole round over the topics moved nothing: balanced as far as it goes.
                    return
                if self._balance_topic(topic_id, balancer) > 0 or last_moved == -1:
                    last_moved = position

    def _balance_topic(self, topic_id: TopicIdT, balancer: _Balancer) -> int:
        """Moves the topic's partitions from its most to its least loaded subscribers;
        returns how many moved."""
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        owners = self.owners[topic_id]
        # Partitions grouped by owner, so a member's partitions form one slice.
        partitions = sorted(range(self.counts[topic_id]), key=lambda p: (owners[p], p))
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        for position, partition in enumerate(partitions):
            starts.setdefault(owners[partition], position)
            ends[owners[partition]] = position + 1
        moved = 0
        while not balancer.is_balanced():
            giver = balancer.next_most_loaded()
            while giver != -1 and ends.get(giver, 0) - starts.get(giver, 0) <= 0:
                balancer.exclude_most_loaded()
                giver = balancer.next_most_loaded()
            if giver == -1:
                break
            ends[giver] -= 1
            partition = partitions[ends[giver]]
            taker = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._move(topic_id, partition, taker)
            moved += 1
        return moved

    def _copy(self, index: int) -> dict[TopicIdT, set[int]]:
        copy = self.working[index]
        if copy is None:
            copy = {t: set(parts) for t, parts in self.originals[index].items()}
            self.working[index] = copy
        return copy

    def _move(self, topic_id: TopicIdT, partition: int, index: int) -> None:
        """Assigns the partition to member ``index``, taking it from its owner if any."""
        owners = self.owners[topic_id]
        previous = owners[partition]
        if previous != _UNOWNED:
            self._copy(previous)[topic_id].discard(partition)
            self.sizes[previous] -= 1
        self._copy(index).setdefault(topic_id, set()).add(partition)
        owners[partition] = index
        self.sizes[index] += 1
