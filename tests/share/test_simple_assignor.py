"""Kafka 4.2's SimpleAssignor (KIP-932 share groups), mirrored where it applies
(tests/share/COVERAGE.md), and its properties: every subscribed partition has a member,
several members may share one, the assignment is balanced (counts at most one apart), the
result is deterministic and sticky (a balanced current assignment is kept)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinator.share import PartitionAssignorError, simple_assign
from coordinator.share.assignor import SIMPLE_ASSIGNOR_NAME

TOPIC_1 = uuid.UUID(int=1)
TOPIC_2 = uuid.UUID(int=2)
TOPIC_3 = uuid.UUID(int=3)


def test_assign_with_empty_members() -> None:
    assert simple_assign({}, {}) == {}


def test_assign_with_no_subscribed_topic() -> None:
    assert simple_assign({"A": []}, {TOPIC_1: 3}) == {}


def test_assign_with_subscribed_to_non_existent_topic() -> None:
    with pytest.raises(PartitionAssignorError):
        simple_assign({"A": [TOPIC_2]}, {TOPIC_1: 3})


def test_assign_with_two_members_and_two_topics_homogeneous() -> None:
    # Homogeneous, 5 partitions over 2 members: each partition shared by ceil(2/5) = 1
    # member, desired counts ceil(2.5) = 3 for "A" and 5 - 3 = 2 for "B"; the partitions go
    # in order to the members still short, cycling: t1-0 A, t1-1 B, t1-2 A, t3-0 B, t3-1 A.
    got = simple_assign(
        {"A": [TOPIC_1, TOPIC_3], "B": [TOPIC_3, TOPIC_1]}, {TOPIC_1: 3, TOPIC_3: 2}
    )
    assert got == {
        "A": {TOPIC_1: frozenset({0, 2}), TOPIC_3: frozenset({1})},
        "B": {TOPIC_1: frozenset({1}), TOPIC_3: frozenset({0})},
    }


def test_more_members_than_partitions_share_them() -> None:
    members = {f"consumer-{i}": [TOPIC_1] for i in range(4)}
    got = simple_assign(members, {TOPIC_1: 1})
    assert got == {m: {TOPIC_1: frozenset({0})} for m in members}


def test_assign_heterogeneous_balances_each_topic() -> None:
    # Each topic over its own subscribers: t1 (3 partitions) over A and B, desired 2 and 1:
    # t1-0 A, t1-1 B, t1-2 A; t3 (1 partition) to B alone.
    got = simple_assign({"A": [TOPIC_1], "B": [TOPIC_1, TOPIC_3]}, {TOPIC_1: 3, TOPIC_3: 1})
    assert got == {
        "A": {TOPIC_1: frozenset({0, 2})},
        "B": {TOPIC_1: frozenset({1}), TOPIC_3: frozenset({0})},
    }


def test_assign_with_three_members_three_topics_heterogeneous() -> None:
    # Per topic: t1 to A alone; t2 over A and C (desired 2 and 1): t2-0 A, t2-1 C, t2-2 A;
    # t3 over B and C (1 each): t3-0 B, t3-1 C.
    got = simple_assign(
        {"A": [TOPIC_1, TOPIC_2], "B": [TOPIC_3], "C": [TOPIC_2, TOPIC_3]},
        {TOPIC_1: 3, TOPIC_2: 3, TOPIC_3: 2},
    )
    assert got == {
        "A": {TOPIC_1: frozenset({0, 1, 2}), TOPIC_2: frozenset({0, 2})},
        "B": {TOPIC_3: frozenset({0})},
        "C": {TOPIC_2: frozenset({1}), TOPIC_3: frozenset({1})},
    }


def test_assign_with_one_member_no_assigned_topic_heterogeneous() -> None:
    got = simple_assign({"A": [TOPIC_1, TOPIC_2], "B": []}, {TOPIC_1: 3, TOPIC_2: 2})
    assert got == {"A": {TOPIC_1: frozenset({0, 1, 2}), TOPIC_2: frozenset({0, 1})}, "B": {}}


def test_name() -> None:
    assert SIMPLE_ASSIGNOR_NAME == "simple"


def test_assign_heterogeneous_keeps_each_member_to_its_topics() -> None:
    got = simple_assign(
        {"A": [TOPIC_1, TOPIC_2], "B": [TOPIC_3], "C": [TOPIC_2, TOPIC_3]},
        {TOPIC_1: 3, TOPIC_2: 3, TOPIC_3: 2},
    )
    assert set(got["B"]) <= {TOPIC_3}
    assert set(got["A"]) <= {TOPIC_1, TOPIC_2} and set(got["C"]) <= {TOPIC_2, TOPIC_3}
    assigned = {(t, p) for parts in got.values() for t, ps in parts.items() for p in ps}
    assert assigned == {(TOPIC_1, p) for p in range(3)} | {(TOPIC_2, p) for p in range(3)} | {
        (TOPIC_3, p) for p in range(2)}


def test_current_assignment_is_kept_where_balance_allows() -> None:
    # A held all three; B joins: A keeps two of them (balance first), B gets the third.
    current = {"A": {TOPIC_1: [0, 1, 2]}, "B": {TOPIC_2: [0]}}
    got = simple_assign({"A": [TOPIC_1], "B": [TOPIC_1]}, {TOPIC_1: 3, TOPIC_2: 1}, current)
    assert got == {"A": {TOPIC_1: frozenset({1, 2})}, "B": {TOPIC_1: frozenset({0})}}
    assert TOPIC_2 not in got["B"]  # no longer subscribed: dropped


def test_more_members_than_partitions_are_spread_evenly() -> None:
    # 5 members, 2 partitions: each partition shared by ceil(5/2) = 3 members, so 6
    # assignments; desired counts 2, 1, 1, 1, 1.
    got = simple_assign({f"c{i}": [TOPIC_1] for i in range(5)}, {TOPIC_1: 2})
    sharers = [sum(p in parts.get(TOPIC_1, ()) for parts in got.values()) for p in (0, 1)]
    assert sharers == [3, 3]
    assert sorted(len(parts[TOPIC_1]) for parts in got.values()) == [1, 1, 1, 1, 2]


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.sets(st.sampled_from([TOPIC_1, TOPIC_2, TOPIC_3]), min_size=1),
        min_size=1, max_size=8,
    ),
    st.integers(1, 6), st.integers(1, 6), st.integers(1, 6),
)
def test_every_partition_has_a_member_and_the_result_is_deterministic(
    members: dict[str, set[uuid.UUID]], p1: int, p2: int, p3: int
) -> None:
    counts = {TOPIC_1: p1, TOPIC_2: p2, TOPIC_3: p3}
    got = simple_assign(members, counts)
    assert got == simple_assign(dict(reversed(list(members.items()))), counts)
    subscribed = {(t, p) for ts in members.values() for t in ts for p in range(counts[t])}
    assigned = {(t, p) for parts in got.values() for t, ps in parts.items() for p in ps}
    assert assigned == subscribed
    for member, parts in got.items():
        assert set(parts) <= members[member] and parts  # each member gets a partition
    assert simple_assign(members, counts, got) == got  # a balanced assignment is kept
    if len({frozenset(ts) for ts in members.values()}) == 1:
        sizes = [sum(len(ps) for ps in parts.values()) for parts in got.values()]
        assert max(sizes) - min(sizes) <= 1
