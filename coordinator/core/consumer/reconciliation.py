"""Reconciliation of one member towards its target assignment (Kafka's CurrentAssignmentBuilder
and MemberState), and the group's partition ownership ledger (ConsumerGroup's
currentPartitionEpoch).

A member moves through three states:

- UNREVOKED_PARTITIONS: it must first give up partitions no longer in its target. It stays at
  its epoch, and its next heartbeat must stop listing them among its owned partitions.
- UNRELEASED_PARTITIONS: it has moved to the target epoch but waits for partitions that
  another member still holds (their partition epoch is not -1). They are handed over as soon
  as the ledger shows them free, so a partition never has two owners.
- STABLE: it holds exactly its target.

This follows Kafka 4.2: unsubscribed topics are dropped from the current assignment at once
(KAFKA-19431), partitions the member itself is revoking do not count as unreleased
(KAFKA-19449), and leaving UNREVOKED_PARTITIONS no longer bumps the epoch by one (KAFKA-19974):
the member stays at its epoch while it still has to revoke, and otherwise jumps to the target
epoch. KIP-1251's per-partition assignment epochs (Kafka trunk, 2026) are not modelled.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Generic

from coordinator.core.consumer.spec import EMPTY_ASSIGNMENT, TopicIdT

__all__ = [
    "CurrentMemberAssignment",
    "FencedMemberEpochError",
    "MemberState",
    "PartitionEpochs",
    "PartitionOwnershipError",
    "reconcile",
]

_NONE: frozenset[int] = frozenset()

# partition_epoch(topic_id, partition): the epoch of the member holding it, or -1 if free.
PartitionEpochLookup = Callable[[TopicIdT, int], int]


class MemberState(enum.IntEnum):
    """Kafka's MemberState; the values are those of the ConsumerGroupCurrentMemberAssignment
    record's State field."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    # Only read from a record written by a newer version with states this one lacks.
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        """The state of a record's State byte; UNKNOWN for any value this version lacks."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class FencedMemberEpochError(Exception):
    """Kafka's FencedMemberEpochException (FENCED_MEMBER_EPOCH, 110)."""


class PartitionOwnershipError(Exception):
    """A partition would have two owners, or an owner's epoch does not match (Kafka's
    IllegalStateException from ConsumerGroup.addPartitionEpochs/removePartitionEpochs)."""


def _empty() -> Mapping[TopicIdT, frozenset[int]]:
    return EMPTY_ASSIGNMENT


@dataclass(frozen=True, slots=True)
class CurrentMemberAssignment(Generic[TopicIdT]):
    """A member's reconciliation state: the fields of Kafka's
    ConsumerGroupCurrentMemberAssignmentValue record."""

    state: MemberState
    member_epoch: int
    previous_member_epoch: int
    assigned_partitions: Mapping[TopicIdT, frozenset[int]] = field(default_factory=_empty)
    partitions_pending_revocation: Mapping[TopicIdT, frozenset[int]] = field(default_factory=_empty)


def reconcile(
    member: CurrentMemberAssignment[TopicIdT],
    *,
    target_epoch: int,
    target: Mapping[TopicIdT, frozenset[int]],
    partition_epoch: PartitionEpochLookup[TopicIdT],
    owned: Mapping[TopicIdT, Iterable[int]] | None,
    subscribed_topic_ids: frozenset[TopicIdT] | set[TopicIdT],
    subscription_changed: bool = False,
) -> CurrentMemberAssignment[TopicIdT]:
    """The member's next state (Kafka's CurrentAssignmentBuilder.build).

    ``owned`` is the heartbeat's TopicPartitions (None when the request left it out, which
    counts as still owning everything); ``subscribed_topic_ids`` is the member's subscription
    resolved to topic ids (names and regex). Returns ``member`` itself when nothing changes.
    Raises FencedMemberEpochError for a member in UNKNOWN state that still owns partitions.
    """
    step = _Step(member, target_epoch, target, partition_epoch, owned, subscribed_topic_ids)
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return step.next_assignment(member.member_epoch)
        if subscription_changed:
            return step.drop_unsubscribed()
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if step.owns_any(member.partitions_pending_revocation):
            return step.drop_unsubscribed() if subscription_changed else member
        return step.next_assignment(member.member_epoch)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return step.next_assignment(member.member_epoch)
    # UNKNOWN: written by a newer coordinator; the member must drop everything and rejoin.
    if owned is None or owned:
        raise FencedMemberEpochError(
            "The consumer group member is in a unknown state. "
            "The member must abandon all its partitions and rejoin."
        )
    return step.next_assignment(target_epoch)


class _Step(Generic[TopicIdT]):
    """The inputs of one reconciliation step and Kafka's two ways to take it."""

    def __init__(
        self,
        member: CurrentMemberAssignment[TopicIdT],
        target_epoch: int,
        target: Mapping[TopicIdT, frozenset[int]],
        partition_epoch: PartitionEpochLookup[TopicIdT],
        owned: Mapping[TopicIdT, Iterable[int]] | None,
        subscribed: frozenset[TopicIdT] | set[TopicIdT],
    ) -> None:
        self.member = member
        self.target_epoch = target_epoch
        self.target = target
        self.partition_epoch = partition_epoch
        self.owned = owned
        self.subscribed = subscribed

    def owns_any(self, partitions: Mapping[TopicIdT, frozenset[int]]) -> bool:
        """Whether the member still reports owning any of ``partitions`` (None: it does)."""
        if self.owned is None:
            return True
        for topic_id, owned in self.owned.items():
            wanted = partitions.get(topic_id)
            if wanted and not wanted.isdisjoint(owned):
                return True
        return False

    def drop_unsubscribed(self) -> CurrentMemberAssignment[TopicIdT]:
        """Moves the partitions of topics the member left to pending revocation, keeping its
        epoch (Kafka's updateCurrentAssignment)."""
        member = self.member
        assigned = member.assigned_partitions
        dropped = [topic_id for topic_id in assigned if topic_id not in self.subscribed]
        if not dropped:
            return member
        kept = {t: parts for t, parts in assigned.items() if t in self.subscribed}
        pending = dict(member.partitions_pending_revocation)
        for topic_id in dropped:
            pending[topic_id] = pending.get(topic_id, frozenset()) | assigned[topic_id]
        if self.owns_any(pending):
            return replace(
                member,
                state=MemberState.UNREVOKED_PARTITIONS,
                member_epoch=member.member_epoch,
                previous_member_epoch=member.member_epoch,
                assigned_partitions=kept,
                partitions_pending_revocation=pending,
            )
        # Already revoked by the client: only shrink the assignment.
        return replace(
            member,
            member_epoch=member.member_epoch,
            previous_member_epoch=member.member_epoch,
            assigned_partitions=kept,
        )

    def next_assignment(self, member_epoch: int) -> CurrentMemberAssignment[TopicIdT]:
        """Kafka's computeNextAssignment: revoke first, then assign what is free."""
        member = self.member
        current = member.assigned_partitions
        kept: dict[TopicIdT, frozenset[int]] = {}
        revoking: dict[TopicIdT, frozenset[int]] = {}
        gaining: dict[TopicIdT, frozenset[int]] = {}
        unreleased = False
        for topic_id in self.target.keys() | current.keys():
            # A topic the member no longer subscribes to has an empty target for it.
            target = self.target.get(topic_id, _NONE) if topic_id in self.subscribed else _NONE
            had = current.get(topic_id, _NONE)
            keep = had & target
            if keep:
                kept[topic_id] = keep
            if had - keep:
                revoking[topic_id] = had - keep
            ours = member.partitions_pending_revocation.get(topic_id, _NONE)
            free = frozenset(
                partition
                for partition in target - keep
                # A partition this member is itself revoking is not held by someone else.
                if self.partition_epoch(topic_id, partition) == -1 or partition in ours
            )
            unreleased = unreleased or len(free) < len(target - keep)
            if free:
                gaining[topic_id] = free

        if revoking and self.owns_any(revoking):
            return _with_epoch(
                member, member_epoch, MemberState.UNREVOKED_PARTITIONS, kept, revoking
            )
        if gaining:
            for topic_id, partitions in gaining.items():
                kept[topic_id] = kept.get(topic_id, frozenset()) | partitions
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return _with_epoch(member, self.target_epoch, state, kept, EMPTY_ASSIGNMENT)


def _with_epoch(
    member: CurrentMemberAssignment[TopicIdT],
    epoch: int,
    state: MemberState,
    assigned: Mapping[TopicIdT, frozenset[int]],
    pending: Mapping[TopicIdT, frozenset[int]],
) -> CurrentMemberAssignment[TopicIdT]:
    """Kafka's Builder.updateMemberEpoch: the old epoch becomes the previous one."""
    return CurrentMemberAssignment(
        state=state,
        member_epoch=epoch,
        previous_member_epoch=member.member_epoch,
        assigned_partitions=assigned,
        partitions_pending_revocation=pending,
    )


class PartitionEpochs(Generic[TopicIdT]):
    """Which epoch holds each partition of a group (Kafka's ConsumerGroup.currentPartitionEpoch):
    a member holds its assigned and its pending-revocation partitions at its member epoch."""

    def __init__(self) -> None:
        self._epochs: dict[TopicIdT, dict[int, int]] = {}

    def epoch_of(self, topic_id: TopicIdT, partition: int) -> int:
        """The epoch the partition is held at, or -1 when nobody holds it."""
        return self._epochs.get(topic_id, {}).get(partition, -1)

    def add(self, partitions: Mapping[TopicIdT, frozenset[int]], epoch: int) -> None:
        """Records ``partitions`` as held at ``epoch``; PartitionOwnershipError if one is held."""
        for topic_id, parts in partitions.items():
            epochs = self._epochs.setdefault(topic_id, {})
            for partition in parts:
                held = epochs.get(partition)
                if held is not None:
                    raise PartitionOwnershipError(
                        f"Cannot set the epoch of {topic_id}-{partition} to {epoch} because "
                        f"the partition is still owned at epoch {held}"
                    )
                epochs[partition] = epoch

    def remove(self, partitions: Mapping[TopicIdT, frozenset[int]], expected_epoch: int) -> None:
        """Frees ``partitions``; PartitionOwnershipError unless each is held at the epoch."""
        for topic_id, parts in partitions.items():
            epochs = self._epochs.get(topic_id)
            if epochs is None:
                raise PartitionOwnershipError(
                    f"Cannot remove the epoch {expected_epoch} from {topic_id} because it does "
                    "not have any epoch"
                )
            for partition in parts:
                held = epochs.pop(partition, None)
                if held != expected_epoch:
                    raise PartitionOwnershipError(
                        f"Cannot remove the epoch {expected_epoch} from {topic_id}-{partition} "
                        f"because the partition is still owned at a different epoch {held}"
                    )
            if not epochs:
                del self._epochs[topic_id]

    def update_member(
        self,
        old: CurrentMemberAssignment[TopicIdT] | None,
        new: CurrentMemberAssignment[TopicIdT] | None,
    ) -> None:
        """Replaces a member's holdings: ``old`` (None for a new member) by ``new`` (None when
        it leaves)."""
        if old is not None:
            self.remove(old.assigned_partitions, old.member_epoch)
            self.remove(old.partitions_pending_revocation, old.member_epoch)
        if new is not None:
            self.add(new.assigned_partitions, new.member_epoch)
            self.add(new.partitions_pending_revocation, new.member_epoch)

    def waiting_on_unreleased_partition(
        self,
        member: CurrentMemberAssignment[TopicIdT],
        target: Mapping[TopicIdT, frozenset[int]],
    ) -> bool:
        """Whether an UNRELEASED_PARTITIONS member still waits for a target partition another
        member holds (Kafka's ConsumerGroup.waitingOnUnreleasedPartition)."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic_id, partitions in target.items():
            assigned = member.assigned_partitions.get(topic_id, _NONE)
            for partition in partitions - assigned:
                if self.epoch_of(topic_id, partition) != -1:
                    return True
        return False

    def held(self) -> dict[TopicIdT, dict[int, int]]:
        """A copy of the ledger: topic id -> partition -> epoch."""
        return {topic_id: dict(epochs) for topic_id, epochs in self._epochs.items()}
