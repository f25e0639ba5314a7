"""Kafka's CurrentAssignmentBuilderTest, mirrored under Kafka's names.

The expected values are Kafka 4.2's: leaving UNREVOKED_PARTITIONS no longer bumps the member
epoch by one (KAFKA-19974), so testUnrevokedPartitionsToUnrevokedPartitions expects the member
to stay at its epoch where the Kafka 4.1 test expected epoch + 1. Kafka resolves a member's
topic names and regex to topic ids inside the builder; here the caller passes the resolved ids
(``subscribed_topic_ids``), so the regex tests pass what Kafka would have resolved.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

import pytest

from coordinator.core.consumer import (
    CurrentMemberAssignment,
    FencedMemberEpochError,
    MemberState,
    reconcile,
)

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)
FOO = uuid.UUID(int=3)
BAR = uuid.UUID(int=4)
BOTH = frozenset({T1, T2})

STABLE = MemberState.STABLE
UNREVOKED = MemberState.UNREVOKED_PARTITIONS
UNRELEASED = MemberState.UNRELEASED_PARTITIONS


def parts(**by_topic: tuple[int, ...]) -> dict[uuid.UUID, frozenset[int]]:
    """``parts(t1=(1, 2), t2=(4,))`` -> an assignment over T1/T2/FOO/BAR."""
    ids = {"t1": T1, "t2": T2, "foo": FOO, "bar": BAR}
    return {ids[name]: frozenset(p) for name, p in by_topic.items() if p}


def member(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: Mapping[uuid.UUID, frozenset[int]],
    pending: Mapping[uuid.UUID, frozenset[int]] | None = None,
) -> CurrentMemberAssignment[uuid.UUID]:
    return CurrentMemberAssignment(state, epoch, previous, dict(assigned), dict(pending or {}))


def step(
    m: CurrentMemberAssignment[uuid.UUID],
    target_epoch: int,
    target: Mapping[uuid.UUID, frozenset[int]],
    *,
    held: int | Callable[[uuid.UUID, int], int] = -1,
    owned: Mapping[uuid.UUID, frozenset[int]] | None = None,
    subscribed: frozenset[uuid.UUID] = BOTH,
    changed: bool = False,
) -> CurrentMemberAssignment[uuid.UUID]:
    """One reconcile call; ``held`` is the epoch every other partition is held at, or a
    lookup. The defaults are Kafka's builder defaults: nothing held, no owned partitions
    sent, subscribed to T1 and T2, subscription unchanged."""
    lookup = held if callable(held) else (lambda _topic, _partition: held)
    return reconcile(
        m,
        target_epoch=target_epoch,
        target=target,
        partition_epoch=lookup,
        owned=owned,
        subscribed_topic_ids=subscribed,
        subscription_changed=changed,
    )


def test_stable_to_stable() -> None:
    m = member(STABLE, 10, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(m, 11, parts(t1=(1, 2, 3), t2=(4, 5, 6)), held=10)
    assert updated == member(STABLE, 11, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))


def test_stable_to_stable_with_new_partitions() -> None:
    m = member(STABLE, 10, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(m, 11, parts(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)))
    assert updated == member(STABLE, 11, 10, parts(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)))


def test_stable_to_unrevoked_partitions() -> None:
    m = member(STABLE, 10, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(m, 11, parts(t1=(2, 3, 4), t2=(5, 6, 7)))
    assert updated == member(
        UNREVOKED, 10, 10, parts(t1=(2, 3), t2=(5, 6)), parts(t1=(1,), t2=(4,))
    )


def test_stable_to_unreleased_partitions() -> None:
    m = member(STABLE, 10, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(m, 11, parts(t1=(1, 2, 3, 4), t2=(4, 5, 6, 7)), held=10)
    assert updated == member(UNRELEASED, 11, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions() -> None:  # noqa: E501
    m = member(STABLE, 10, 10, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(
        m,
        11,
        parts(t1=(1, 2, 3), t2=(4, 5, 7)),
        held=lambda topic, _p: 10 if topic == T2 else -1,
        owned={},
    )
    assert updated == member(UNRELEASED, 11, 10, parts(t1=(1, 2, 3), t2=(4, 5)))


def test_unrevoked_partitions_to_stable() -> None:
    m = member(UNREVOKED, 10, 10, parts(t1=(2, 3), t2=(5, 6)), parts(t1=(1,), t2=(4,)))
    updated = step(m, 11, parts(t1=(2, 3), t2=(5, 6)), owned=parts(t1=(2, 3), t2=(5, 6)))
    assert updated == member(STABLE, 11, 10, parts(t1=(2, 3), t2=(5, 6)))


def test_remains_in_unrevoked_partitions() -> None:
    m = member(UNREVOKED, 10, 10, parts(t1=(2, 3), t2=(5, 6)), parts(t1=(1,), t2=(4,)))
    target = parts(t1=(3,), t2=(6,))
    # No owned partitions reported, or still reporting a partition pending revocation.
    assert step(m, 12, target, owned=None) is m
    assert step(m, 12, target, owned=parts(t1=(1, 2, 3), t2=(5, 6))) is m
    assert step(m, 12, target, owned=parts(t1=(2, 3), t2=(4, 5, 6))) is m


@pytest.mark.parametrize(
    ("member_epoch", "target_epoch", "expected_epoch"),
    [
        # Kafka 4.1 expected 11 here (epoch + 1); KAFKA-19974 keeps the member at its epoch.
        (10, 12, 10),
        # The member epoch must not advance past the target assignment epoch.
        (10, 10, 10),
    ],
)
def test_unrevoked_partitions_to_unrevoked_partitions(
    member_epoch: int, target_epoch: int, expected_epoch: int
) -> None:
    m = member(
        UNREVOKED,
        member_epoch,
        member_epoch,
        parts(t1=(2, 3), t2=(5, 6)),
        parts(t1=(1,), t2=(4,)),
    )
    updated = step(m, target_epoch, parts(t1=(3,), t2=(6,)), owned=parts(t1=(2, 3), t2=(5, 6)))
    assert updated == member(
        UNREVOKED, expected_epoch, member_epoch, parts(t1=(3,), t2=(6,)), parts(t1=(2,), t2=(5,))
    )


def test_unrevoked_partitions_to_unreleased_partitions() -> None:
    m = member(UNREVOKED, 11, 10, parts(t1=(2, 3), t2=(5, 6)))
    updated = step(
        m, 11, parts(t1=(2, 3, 4), t2=(5, 6, 7)), held=10, owned=parts(t1=(2, 3), t2=(5, 6))
    )
    assert updated == member(UNRELEASED, 11, 11, parts(t1=(2, 3), t2=(5, 6)))


def test_unrevoked_partitions_to_stable_with_returned_partitions_pending_revocation() -> None:
    # Partition t1-4 is pending revocation by the member but is back in its target.
    m = member(UNREVOKED, 10, 10, parts(t1=(2, 3), t2=(5, 6)), parts(t1=(4,)))
    holding = {(T1, 2), (T1, 3), (T1, 4), (T2, 5), (T2, 6)}
    updated = step(
        m,
        12,
        parts(t1=(2, 3, 4), t2=(5, 6, 7)),
        held=lambda topic, p: 10 if (topic, p) in holding else -1,
        owned=parts(t1=(2, 3), t2=(5, 6)),
    )
    assert updated == member(STABLE, 12, 10, parts(t1=(2, 3, 4), t2=(5, 6, 7)))


def test_unreleased_partitions_to_stable() -> None:
    m = member(UNRELEASED, 11, 11, parts(t1=(2, 3), t2=(5, 6)))
    updated = step(m, 12, parts(t1=(2, 3), t2=(5, 6)), held=10)
    assert updated == member(STABLE, 12, 11, parts(t1=(2, 3), t2=(5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts(t1=(2, 3), t2=(5, 6)))
    updated = step(m, 11, parts(t1=(2, 3, 4), t2=(5, 6, 7)))
    assert updated == member(STABLE, 11, 11, parts(t1=(2, 3, 4), t2=(5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts(t1=(2, 3), t2=(5, 6)))
    updated = step(m, 11, parts(t1=(2, 3, 4), t2=(5, 6, 7)), held=10)
    assert updated == m


def test_unreleased_partitions_to_unrevoked_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts(t1=(2, 3), t2=(5, 6)))
    updated = step(m, 12, parts(t1=(3,), t2=(6,)), held=10)
    assert updated == member(UNREVOKED, 11, 11, parts(t1=(3,), t2=(6,)), parts(t1=(2,), t2=(5,)))


def test_unknown_state() -> None:
    m = member(MemberState.UNKNOWN, 11, 11, parts(t1=(3,), t2=(6,)), parts(t1=(2,), t2=(5,)))
    # A member in an unknown state is first fenced, so that the client resets its state...
    with pytest.raises(FencedMemberEpochError):
        step(m, 12, parts(t1=(3,), t2=(6,)), held=10)
    # ...then it rejoins owning nothing.
    updated = step(m, 12, parts(t1=(3,), t2=(6,)), held=11, owned={})
    assert updated == member(STABLE, 12, 11, parts(t1=(3,), t2=(6,)))


@pytest.mark.parametrize(
    ("member_epoch", "target_epoch", "expected_epoch", "subscription_changed"),
    [
        # Moving to a new target always takes the subscription into account.
        (10, 11, 11, False),
        (10, 11, 11, True),
        (10, 10, 10, True),
    ],
)
def test_stable_to_stable_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, subscription_changed: bool
) -> None:
    m = member(STABLE, member_epoch, member_epoch, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(
        m,
        target_epoch,
        parts(t1=(1, 2, 3), t2=(4, 5, 6)),
        owned=parts(t2=(4, 5, 6)),
        subscribed=frozenset({T2}),
        changed=subscription_changed,
    )
    assert updated == member(STABLE, expected_epoch, member_epoch, parts(t2=(4, 5, 6)))


@pytest.mark.parametrize(
    ("member_epoch", "target_epoch", "expected_epoch", "subscription_changed"),
    [
        (10, 11, 10, False),
        (10, 11, 10, True),
        (10, 10, 10, True),
    ],
)
def test_stable_to_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, subscription_changed: bool
) -> None:
    m = member(STABLE, member_epoch, member_epoch, parts(t1=(1, 2, 3), t2=(4, 5, 6)))
    updated = step(
        m,
        target_epoch,
        parts(t1=(1, 2, 3), t2=(4, 5, 6)),
        owned=parts(t1=(1, 2, 3), t2=(4, 5, 6)),
        subscribed=frozenset({T2}),
        changed=subscription_changed,
    )
    assert updated == member(
        UNREVOKED, expected_epoch, member_epoch, parts(t2=(4, 5, 6)), parts(t1=(1, 2, 3))
    )


def test_remains_in_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() -> None:
    m = member(UNREVOKED, 10, 10, parts(t1=(2, 3), t2=(5, 6)), parts(t1=(1,), t2=(4,)))
    updated = step(
        m,
        12,
        parts(t1=(1, 3, 4), t2=(6, 7)),
        owned=parts(t1=(1, 2, 3), t2=(4, 5, 6)),
        subscribed=frozenset({T2}),
        changed=True,
    )
    assert updated == member(UNREVOKED, 10, 10, parts(t2=(5, 6)), parts(t1=(1, 2, 3), t2=(4,)))


def test_subscribed_topic_name_and_unresolved_regular_expression() -> None:
    # Names ["foo"] and regex "bar*" not resolved yet: only foo counts.
    m = member(STABLE, 10, 10, parts(foo=(1, 2, 3), bar=(4, 5, 6)))
    updated = step(
        m,
        10,
        parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        owned=parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        subscribed=frozenset({FOO}),
        changed=True,
    )
    assert updated == member(UNREVOKED, 10, 10, parts(foo=(1, 2, 3)), parts(bar=(4, 5, 6)))


def test_unresolved_regular_expression() -> None:
    # No names and an unresolved regex: the member is subscribed to nothing for now.
    m = member(STABLE, 10, 10, parts(foo=(1, 2, 3), bar=(4, 5, 6)))
    updated = step(
        m,
        10,
        parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        owned=parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        subscribed=frozenset(),
        changed=True,
    )
    assert updated == member(UNREVOKED, 10, 10, {}, parts(foo=(1, 2, 3), bar=(4, 5, 6)))


def test_subscribed_topic_name_and_resolved_regular_expression() -> None:
    # Names ["foo"] and regex "bar*" resolved to {"bar"}: nothing to revoke.
    m = member(STABLE, 10, 10, parts(foo=(1, 2, 3), bar=(4, 5, 6)))
    updated = step(
        m,
        10,
        parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        owned=parts(foo=(1, 2, 3), bar=(4, 5, 6)),
        subscribed=frozenset({FOO, BAR}),
        changed=True,
    )
    assert updated is m


# kcoord's own checks.


def test_member_state_from_value_maps_unknown_bytes_to_unknown() -> None:
    assert [MemberState.from_value(v) for v in (0, 1, 2, 3, 127)] == [
        STABLE,
        UNREVOKED,
        UNRELEASED,
        MemberState.UNKNOWN,
        MemberState.UNKNOWN,
    ]


def test_already_revoked_unsubscribed_topic_only_shrinks_the_assignment() -> None:
    """Kafka's updateCurrentAssignment 'already revoked' branch: the state is kept and the
    previous epoch is set to the current one (apache/kafka#21325)."""
    m = member(STABLE, 10, 9, parts(t1=(1,), t2=(2,)))
    updated = step(
        m,
        10,
        parts(t1=(1,), t2=(2,)),
        owned=parts(t2=(2,)),
        subscribed=frozenset({T2}),
        changed=True,
    )
    assert updated == member(STABLE, 10, 10, parts(t2=(2,)))
