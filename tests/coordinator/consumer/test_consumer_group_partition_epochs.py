"""The partition-epoch tests of Kafka's ConsumerGroupTest, mirrored under Kafka's names
against PartitionEpochs (Kafka keeps this ledger inside ConsumerGroup)."""

from __future__ import annotations

import uuid

import pytest

from coordinator.core.consumer import (
    CurrentMemberAssignment,
    MemberState,
    PartitionEpochs,
    PartitionOwnershipError,
)

FOO = uuid.UUID(int=1)
BAR = uuid.UUID(int=2)
ZAR = uuid.UUID(int=3)


def m(
    epoch: int,
    assigned: dict[uuid.UUID, frozenset[int]],
    pending: dict[uuid.UUID, frozenset[int]] | None = None,
    state: MemberState = MemberState.STABLE,
) -> CurrentMemberAssignment[uuid.UUID]:
    return CurrentMemberAssignment(state, epoch, epoch, assigned, pending or {})


def test_updating_member_updates_partition_epoch() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    first = m(10, {FOO: frozenset({1, 2, 3})}, {BAR: frozenset({4, 5, 6})})
    ledger.update_member(None, first)
    assert [ledger.epoch_of(FOO, p) for p in (1, 2, 3)] == [10, 10, 10]
    assert [ledger.epoch_of(BAR, p) for p in (4, 5, 6)] == [10, 10, 10]
    assert [ledger.epoch_of(ZAR, p) for p in (7, 8, 9)] == [-1, -1, -1]

    second = m(11, {BAR: frozenset({1, 2, 3})}, {ZAR: frozenset({4, 5, 6})})
    ledger.update_member(first, second)
    assert [ledger.epoch_of(BAR, p) for p in (1, 2, 3)] == [11, 11, 11]
    assert [ledger.epoch_of(ZAR, p) for p in (4, 5, 6)] == [11, 11, 11]
    assert [ledger.epoch_of(FOO, p) for p in (1, 2, 3)] == [-1, -1, -1]


def test_updating_member_updates_partition_epoch_when_partition_is_reassigned_before_being_revoked() -> None:  # noqa: E501
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    revoking = m(10, {}, {FOO: frozenset({1})})
    ledger.update_member(None, revoking)
    assert ledger.epoch_of(FOO, 1) == 10
    ledger.update_member(revoking, m(11, {FOO: frozenset({1})}))
    assert ledger.epoch_of(FOO, 1) == 11


def test_updating_member_updates_partition_epoch_when_partition_is_not_released() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    ledger.update_member(None, m(10, {FOO: frozenset({1})}))
    # m2 cannot take foo-1 while m1 still holds it.
    with pytest.raises(PartitionOwnershipError):
        ledger.update_member(None, m(10, {FOO: frozenset({1})}))


def test_remove_partition_epochs() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    # Nothing to remove yet.
    with pytest.raises(PartitionOwnershipError):
        ledger.remove({FOO: frozenset({1})}, 10)
    ledger.update_member(None, m(10, {FOO: frozenset({1})}))
    # The expected epoch is wrong.
    with pytest.raises(PartitionOwnershipError):
        ledger.remove({FOO: frozenset({1})}, 11)


def test_add_partition_epochs() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    ledger.add({FOO: frozenset({1})}, 10)
    # The owner must free the partition before another epoch can take it.
    with pytest.raises(PartitionOwnershipError):
        ledger.add({FOO: frozenset({1})}, 11)


def test_deleting_member_removes_partition_epoch() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    member = m(10, {FOO: frozenset({1, 2, 3})}, {BAR: frozenset({4, 5, 6})})
    ledger.update_member(None, member)
    assert [ledger.epoch_of(BAR, p) for p in (4, 5, 6)] == [10, 10, 10]
    ledger.update_member(member, None)
    assert [ledger.epoch_of(FOO, p) for p in (1, 2, 3)] == [-1, -1, -1]
    assert [ledger.epoch_of(BAR, p) for p in (4, 5, 6)] == [-1, -1, -1]
    assert ledger.held() == {}


def test_waiting_on_unreleased_partition() -> None:
    ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
    target = {FOO: frozenset({1, 2, 3}), ZAR: frozenset({7, 8, 9})}
    member1 = m(
        10,
        {FOO: frozenset({1, 2, 3})},
        {BAR: frozenset({4, 5, 6})},
        state=MemberState.UNRELEASED_PARTITIONS,
    )
    ledger.update_member(None, member1)
    assert not ledger.waiting_on_unreleased_partition(member1, target)
    # Another member still revokes zar-7, which member1's target wants.
    ledger.update_member(None, m(10, {}, {ZAR: frozenset({7})}))
    assert ledger.waiting_on_unreleased_partition(member1, target)
