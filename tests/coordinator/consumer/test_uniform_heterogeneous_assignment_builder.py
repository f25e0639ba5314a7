"""Kafka's UniformHeterogeneousAssignmentBuilderTest, mirrored under Kafka's names.

Kafka's test passes members in sorted order and its builder breaks every other tie by topic
id, so each expected value here is Kafka's, unchanged.
"""

from __future__ import annotations

import pytest
from assignor_checks import (
    TOPIC_1,
    TOPIC_2,
    TOPIC_3,
    TOPIC_4,
    check_assignment_reuse,
    check_reassignment_stickiness,
    member,
    mk,
    plain,
    spec,
    topics,
)

from coordinator.core.consumer import PartitionAssignorError, SubscriptionType, UniformAssignor

HETEROGENEOUS = SubscriptionType.HETEROGENEOUS
assignor = UniformAssignor()


def test_two_members_no_topic_subscription() -> None:
    group = spec({"A": member(), "B": member()}, topics(topic1=3), HETEROGENEOUS)
    # Kafka returns an empty member map; kcoord lists every member, with nothing.
    assert plain(assignor.assign(group)) == {"A": {}, "B": {}}


def test_two_members_subscribed_to_nonexistent_topics() -> None:
    group = spec({"A": member(TOPIC_3), "B": member(TOPIC_2)}, topics(topic1=3), HETEROGENEOUS)
    with pytest.raises(PartitionAssignorError):
        assignor.assign(group)


def test_first_assignment_two_members_two_topics() -> None:
    group = spec(
        {"A": member(TOPIC_1, TOPIC_3), "B": member(TOPIC_3)},
        topics(topic1=3, topic3=6),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2), (TOPIC_3, 4)),
        "B": mk((TOPIC_3, 0, 1, 2, 3, 5)),
    }


def test_first_assignment_num_members_greater_than_total_num_partitions() -> None:
    group = spec(
        {"A": member(TOPIC_3), "B": member(TOPIC_3), "C": member(TOPIC_1)},
        topics(topic3=1, topic1=2),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_3, 0)),
        "B": {},
        "C": mk((TOPIC_1, 0, 1)),
    }


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment() -> None:
    group = spec(
        {
            "A": member(TOPIC_1, assignment=mk((TOPIC_1, 0, 1, 2))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 3), (TOPIC_2, 0))),
            "C": member(
                TOPIC_1,
                TOPIC_2,
                TOPIC_3,
                assignment=mk((TOPIC_1, 4, 5), (TOPIC_2, 1, 2, 3), (TOPIC_3, 0, 1, 2, 3)),
            ),
        },
        topics(topic1=6, topic2=4, topic3=4),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2, 5)),
        "B": mk((TOPIC_1, 3), (TOPIC_2, 0, 1, 2, 3)),
        "C": mk((TOPIC_1, 4), (TOPIC_3, 0, 1, 2, 3)),
    }


def test_reassignment_when_partitions_are_added_for_two_members() -> None:
    # Topics grew: topic1 4 -> 6, topic2 3 -> 5, topic3 2 -> 3; topic4 stays at 3.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_3, assignment=mk((TOPIC_1, 0, 1, 2, 3), (TOPIC_3, 0, 1))),
            "B": member(
                TOPIC_1,
                TOPIC_2,
                TOPIC_3,
                TOPIC_4,
                assignment=mk((TOPIC_2, 0, 1, 2), (TOPIC_4, 0, 1, 2)),
            ),
        },
        topics(topic1=6, topic2=5, topic3=3, topic4=3),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2, 3, 4, 5), (TOPIC_3, 0, 1, 2)),
        "B": mk((TOPIC_2, 0, 1, 2, 3, 4), (TOPIC_4, 0, 1, 2)),
    }


def test_reassignment_when_one_member_added_and_partitions_added_two_members_two_topics() -> None:
    # Topics grew from 3 partitions each to 6 and 7; member C joins.
    group = spec(
        {
            "A": member(TOPIC_1, assignment=mk((TOPIC_1, 0, 2), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1, 2))),
            "C": member(TOPIC_1, TOPIC_2),
        },
        topics(topic1=6, topic2=7),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 2, 3, 4, 5)),
        "B": mk((TOPIC_1, 1), (TOPIC_2, 1, 2, 6)),
        "C": mk((TOPIC_2, 0, 3, 4, 5)),
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics() -> None:  # noqa: E501
    # Member C left.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_3, assignment=mk((TOPIC_1, 0, 1, 2), (TOPIC_3, 0, 1))),
            "B": member(TOPIC_2, assignment=mk((TOPIC_2, 3, 4, 5, 6))),
        },
        topics(topic1=3, topic2=8, topic3=3),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2), (TOPIC_3, 0, 1, 2)),
        "B": mk((TOPIC_2, 0, 1, 2, 3, 4, 5, 6, 7)),
    }


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    # Both subscribed to topic1 and topic2; A now only to topic1.
    group = spec(
        {
            "A": member(TOPIC_1, assignment=mk((TOPIC_1, 0, 2), (TOPIC_2, 1, 3))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 0, 2, 4))),
        },
        topics(topic1=3, topic2=5),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2)),
        "B": mk((TOPIC_2, 0, 1, 2, 3, 4)),
    }


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions() -> None:
    """The per-topic balancing loop stops when the most loaded members have nothing to give."""
    group = spec(
        {
            "A": member(
                TOPIC_1,
                TOPIC_2,
                TOPIC_3,
                assignment=mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1), (TOPIC_3, 0, 1)),
            ),
            "B": member(TOPIC_1, TOPIC_2, TOPIC_3),
        },
        topics(topic1=2, topic2=2, topic3=2),
        HETEROGENEOUS,
    )
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_2, 0), (TOPIC_3, 0, 1)),
        "B": mk((TOPIC_1, 0, 1), (TOPIC_2, 1)),
    }


def test_first_assignment_with_two_members_including_one_without_subscriptions() -> None:
    group = spec({"A": member(TOPIC_1), "B": member()}, topics(topic1=3), HETEROGENEOUS)
    assert plain(assignor.assign(group)) == {"A": mk((TOPIC_1, 0, 1, 2)), "B": {}}


# CommonAssignorTests against the heterogeneous builder.


@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(rack_aware: bool) -> None:
    check_assignment_reuse(assignor, HETEROGENEOUS, rack_aware)


@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(rack_aware: bool) -> None:
    check_reassignment_stickiness(assignor, HETEROGENEOUS, rack_aware)
