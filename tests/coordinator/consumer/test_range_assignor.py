"""Kafka's RangeAssignorTest (the KAFKA-16944 rewrite), mirrored under Kafka's names, plus
checks of the member order kcoord documents."""

from __future__ import annotations

import itertools

import pytest
from assignor_checks import TOPIC_1, TOPIC_2, TOPIC_3, member, mk, plain, spec, topics

from coordinator.core.consumer import (
    PartitionAssignorError,
    RangeAssignor,
    SubscriptionType,
    range_member_order,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS
assignor = RangeAssignor()


def test_one_member_no_topic() -> None:
    group = spec({"A": member()}, topics(topic1=3), HOMOGENEOUS)
    assert plain(assignor.assign(group)) == {"A": {}}


def test_one_member_subscribed_to_non_existent_topic() -> None:
    group = spec({"A": member(TOPIC_2)}, topics(topic1=3), HOMOGENEOUS)
    with pytest.raises(PartitionAssignorError):
        assignor.assign(group)


def test_first_assignment_two_members_two_topics_same_subscriptions() -> None:
    group = spec(
        {"A": member(TOPIC_1, TOPIC_3), "B": member(TOPIC_1, TOPIC_3)},
        topics(topic1=3, topic3=2),
        HOMOGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1), (TOPIC_3, 0)),
        "B": mk((TOPIC_1, 2), (TOPIC_3, 1)),
    }


def test_first_assignment_three_members_three_topics_different_subscriptions() -> None:
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2),
            "B": member(TOPIC_3),
            "C": member(TOPIC_2, TOPIC_3),
        },
        topics(topic1=3, topic2=3, topic3=2),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2), (TOPIC_2, 0, 1)),
        "B": mk((TOPIC_3, 0)),
        "C": mk((TOPIC_2, 2), (TOPIC_3, 1)),
    }


def test_first_assignment_num_members_greater_than_num_partitions() -> None:
    group = spec(
        {m: member(TOPIC_1, TOPIC_3) for m in "ABC"}, topics(topic1=3, topic3=2), HOMOGENEOUS
    )
    # Topic 3 has 2 partitions but three members subscribe to it: one of them gets none.
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0), (TOPIC_3, 0)),
        "B": mk((TOPIC_1, 1), (TOPIC_3, 1)),
        "C": mk((TOPIC_1, 2)),
    }


def test_static_membership() -> None:
    members = {
        "A": member(TOPIC_1, instance_id="instanceA"),
        "B": member(TOPIC_1, instance_id="instanceB"),
    }
    initial = assignor.assign(spec(members, topics(topic1=3), HOMOGENEOUS))
    # Static member A comes back under a new member id with the same instance id.
    del members["A"]
    members["memberA1"] = member(TOPIC_1, instance_id="instanceA")
    again = assignor.assign(spec(members, topics(topic1=3), HOMOGENEOUS))
    assert again["memberA1"] == initial["A"]
    assert again["B"] == initial["B"]


def test_mixed_static_membership() -> None:
    members = {
        "A": member(TOPIC_1, instance_id="instanceA"),
        "C": member(TOPIC_1, instance_id="instanceC"),
        "B": member(TOPIC_1),
    }
    initial = assignor.assign(spec(members, topics(topic1=5), HOMOGENEOUS))
    del members["A"]
    members["memberA1"] = member(TOPIC_1, instance_id="instanceA")
    again = assignor.assign(spec(members, topics(topic1=5), HOMOGENEOUS))
    assert again["memberA1"] == initial["A"]
    assert again["B"] == initial["B"]
    assert again["C"] == initial["C"]


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added() -> None:
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1))),
            "C": member(TOPIC_1, TOPIC_2),
        },
        topics(topic1=2, topic2=2),
        HOMOGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0), (TOPIC_2, 0)),
        "B": mk((TOPIC_1, 1), (TOPIC_2, 1)),
        "C": {},
    }


def test_reassignment_when_one_partition_added_for_two_members_two_topics() -> None:
    # Each topic grew from 3 to 4 partitions.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 2), (TOPIC_2, 2))),
        },
        topics(topic1=4, topic2=4),
        HOMOGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1)),
        "B": mk((TOPIC_1, 2, 3), (TOPIC_2, 2, 3)),
    }


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 2), (TOPIC_2, 2))),
            "C": member(TOPIC_1, TOPIC_2),
        },
        topics(topic1=3, topic2=3),
        HOMOGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0), (TOPIC_2, 0)),
        "B": mk((TOPIC_1, 1), (TOPIC_2, 1)),
        "C": mk((TOPIC_1, 2), (TOPIC_2, 2)),
    }


def test_reassignment_when_one_member_added_and_one_partition_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    # Topic 1 grew from 3 to 4 partitions and C joins, subscribed to topic 1 only.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 2), (TOPIC_2, 2))),
            "C": member(TOPIC_1),
        },
        topics(topic1=4, topic2=3),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1)),
        "B": mk((TOPIC_1, 2), (TOPIC_2, 2)),
        "C": mk((TOPIC_1, 3)),
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    # Member A left.
    group = spec(
        {"B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 2), (TOPIC_2, 2)))},
        topics(topic1=3, topic2=3),
        HOMOGENEOUS,
    )
    assert plain(assignor.assign(group)) == {"B": mk((TOPIC_1, 0, 1, 2), (TOPIC_2, 0, 1, 2))}


def test_reassignment_when_multiple_subscriptions_removed_after_initial_assignment_with_three_members_two_topics() -> None:  # noqa: E501
    # Subscriptions change from A: 1, 2 / B: 2 / C: 2, 3 to A: 1 / B: 1, 2, 3 / C: 2.
    group = spec(
        {
            "A": member(TOPIC_1, assignment=mk((TOPIC_1, 0, 1, 2), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, TOPIC_3, assignment=mk((TOPIC_2, 1))),
            "C": member(TOPIC_2, assignment=mk((TOPIC_2, 2), (TOPIC_3, 0, 1))),
        },
        topics(topic1=3, topic2=3, topic3=2),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1)),
        "B": mk((TOPIC_1, 2), (TOPIC_2, 0, 1), (TOPIC_3, 0, 1)),
        "C": mk((TOPIC_2, 2)),
    }


# kcoord's own checks of the documented member order.


def test_member_order_puts_static_members_first_by_instance_id() -> None:
    group = spec(
        {
            "a-dynamic": member(TOPIC_1),
            "z-static": member(TOPIC_1, instance_id="i1"),
            "b-static": member(TOPIC_1, instance_id="i2"),
            "0-dynamic": member(TOPIC_1),
        },
        topics(topic1=4),
    )
    assert range_member_order(group) == ["z-static", "b-static", "0-dynamic", "a-dynamic"]
    assert plain(assignor.assign(group)) == {
        "z-static": mk((TOPIC_1, 0)),
        "b-static": mk((TOPIC_1, 1)),
        "0-dynamic": mk((TOPIC_1, 2)),
        "a-dynamic": mk((TOPIC_1, 3)),
    }


def test_result_does_not_depend_on_the_order_members_are_given_in() -> None:
    members = {
        "A": member(TOPIC_1, TOPIC_2),
        "B": member(TOPIC_2, instance_id="static-b"),
        "C": member(TOPIC_1),
    }
    metadata = topics(topic1=5, topic2=4)
    first = assignor.assign(spec(members, metadata))
    for order in itertools.permutations(members):
        assert plain(assignor.assign(spec({m: members[m] for m in order}, metadata))) == plain(
            first
        )
