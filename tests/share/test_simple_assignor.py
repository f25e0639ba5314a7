"""Kafka's SimpleAssignor (KIP-932 share groups), mirrored where it applies
(tests/share/COVERAGE.md), and its properties: every subscribed partition has a member,
several members may share one, the result is deterministic and keeps current assignments."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinator.share import PartitionAssignorError, simple_assign
from coordinator.share.assignor import SIMPLE_ASSIGNOR_NAME, java_string_hash

TOPIC_1 = uuid.UUID(int=1)
TOPIC_2 = uuid.UUID(int=2)
TOPIC_3 = uuid.UUID(int=3)


def test_java_string_hash_is_javas() -> None:
    # Values of String.hashCode() in Java.
    assert java_string_hash("") == 0
    assert java_string_hash("A") == 65
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert java_string_hash("é") == 233


def test_assign_with_empty_members() -> None:
    assert simple_assign({}, {}) == {}


def test_assign_with_no_subscribed_topic() -> None:
    assert simple_assign({"A": []}, {TOPIC_1: 3}) == {}


def test_assign_with_subscribed_to_non_existent_topic() -> None:
    with pytest.raises(PartitionAssignorError):
        simple_assign({"A": [TOPIC_2]}, {TOPIC_1: 3})


def test_assign_with_two_members_and_two_topics_homogeneous() -> None:
    # Kafka's scenario, with the expectation of the hashing assignor (the stored test, from
    # 2024, expects every member to get every partition). Homogeneous, 5 partitions: "A"
    # hashes (65) to index 0, "B" (66) to 1; the other three go round-robin A, B, A.
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


def test_assign_heterogeneous_round_robins_per_topic() -> None:
    # "A" hashes (65) to index 65 % 3 = 2 of its partitions [t1-0, t1-1, t1-2]: t1-2; "B"
    # (66) to 66 % 4 = 2 of [t1-0, t1-1, t1-2, t3-0]: t1-2 as well (shared). The rest go
    # round-robin per topic over its members: t1-0 A, t1-1 B; t3-0 B.
    got = simple_assign({"A": [TOPIC_1], "B": [TOPIC_1, TOPIC_3]}, {TOPIC_1: 3, TOPIC_3: 1})
    assert got == {
        "A": {TOPIC_1: frozenset({0, 2})},
        "B": {TOPIC_1: frozenset({1, 2}), TOPIC_3: frozenset({0})},
    }


def test_assign_with_three_members_three_topics_heterogeneous() -> None:
    # "A" [t1, t2] hashes to 65 % 6 = 5: t2-2; "B" [t3] to 66 % 2 = 0: t3-0; "C" [t2, t3] to
    # 67 % 5 = 2: t2-2. Round-robin per topic: t1-0..2 to A; t2-0 A, t2-1 C; t3-1 B.
    got = simple_assign(
        {"A": [TOPIC_1, TOPIC_2], "B": [TOPIC_3], "C": [TOPIC_2, TOPIC_3]},
        {TOPIC_1: 3, TOPIC_2: 3, TOPIC_3: 2},
    )
    assert got == {
        "A": {TOPIC_1: frozenset({0, 1, 2}), TOPIC_2: frozenset({0, 2})},
        "B": {TOPIC_3: frozenset({0, 1})},
        "C": {TOPIC_2: frozenset({1, 2})},
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


def test_current_assignment_is_kept_for_subscribed_members() -> None:
    current = {"A": {TOPIC_1: [0, 1, 2]}, "B": {TOPIC_2: [0]}}
    got = simple_assign({"A": [TOPIC_1], "B": [TOPIC_1]}, {TOPIC_1: 3, TOPIC_2: 1}, current)
    assert got["A"][TOPIC_1] == frozenset({0, 1, 2})
    assert TOPIC_2 not in got["B"]  # no longer subscribed: dropped


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
