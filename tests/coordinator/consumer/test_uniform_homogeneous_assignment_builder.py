"""Kafka's UniformHomogeneousAssignmentBuilderTest (and the CommonAssignorTests it runs),
mirrored under Kafka's names.

Where Kafka's expected value depends on the order of a Java HashSet of topic ids, kcoord's
answer (topics by ascending id) is asserted instead and the test says so; both answers are
equally balanced and sticky.
"""

from __future__ import annotations

import pytest
from assignor_checks import (
    TOPIC_1,
    TOPIC_2,
    TOPIC_3,
    check_assignment_reuse,
    check_reassignment_stickiness,
    check_validity_and_balance,
    kafka_uuid,
    member,
    mk,
    plain,
    spec,
    topics,
)

from coordinator.core.consumer import (
    GroupSpec,
    PartitionAssignorError,
    SubscriptionType,
    TopicMetadata,
    UniformAssignor,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
assignor = UniformAssignor()


@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(rack_aware: bool) -> None:
    check_assignment_reuse(assignor, HOMOGENEOUS, rack_aware)


@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(rack_aware: bool) -> None:
    check_reassignment_stickiness(assignor, HOMOGENEOUS, rack_aware)


def test_one_member_no_topic_subscription() -> None:
    result = assignor.assign(spec({"A": member()}, topics(topic1=3), HOMOGENEOUS))
    # Kafka returns an empty member map here; kcoord lists every member, with nothing.
    assert plain(result) == {"A": {}}


def test_one_member_subscribed_to_nonexistent_topic() -> None:
    with pytest.raises(PartitionAssignorError):
        assignor.assign(spec({"A": member(TOPIC_2)}, topics(topic1=3), HOMOGENEOUS))


def test_first_assignment_two_members_two_topics_no_member_racks() -> None:
    group = spec(
        {"A": member(TOPIC_1, TOPIC_3), "B": member(TOPIC_1, TOPIC_3)},
        topics(topic1=3, topic3=2),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    # Kafka (HashSet order, topic3 first): A {topic3: 0, 1}, B {topic1: 0, 1, 2}. kcoord hands
    # out topic1 first; the last member takes the extra partition either way (KAFKA-18688).
    assert plain(result) == {
        "A": mk((TOPIC_1, 0, 1)),
        "B": mk((TOPIC_1, 2), (TOPIC_3, 0, 1)),
    }
    check_validity_and_balance(group, result)


def test_first_assignment_num_members_greater_than_total_num_partitions() -> None:
    group = spec(
        {"A": member(TOPIC_3), "B": member(TOPIC_3), "C": member(TOPIC_3)},
        topics(topic3=2),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    # Topic 3 has 2 partitions but three members subscribed to it: one gets nothing.
    assert plain(result) == {"A": {}, "B": mk((TOPIC_3, 0)), "C": mk((TOPIC_3, 1))}
    check_validity_and_balance(group, result)


def test_validity_and_balance_for_large_sample_set() -> None:
    topic_ids = [kafka_uuid(f"T{i:03d}AAAAAAAAAAAAAAAAAA") for i in range(1, 101)]
    metadata = {t: TopicMetadata(f"topic-{i}", 3) for i, t in enumerate(topic_ids, start=1)}
    group: GroupSpec = spec(
        {f"member{i}": member(*topic_ids) for i in range(1, 50)}, metadata, HOMOGENEOUS
    )
    check_validity_and_balance(group, assignor.assign(group))


def test_reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment() -> None:
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 1), (TOPIC_2, 0, 1))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 2), (TOPIC_2, 2))),
        },
        topics(topic1=3, topic2=3),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    assert plain(result) == {
        "A": mk((TOPIC_1, 0, 1), (TOPIC_2, 0)),
        "B": mk((TOPIC_1, 2), (TOPIC_2, 1, 2)),
    }
    check_validity_and_balance(group, result)


def test_reassignment_when_partitions_are_added_for_two_members_two_topics() -> None:
    # Topic 1 grew from 3 to 6 partitions and topic 2 from 3 to 5.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 2), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1, 2))),
        },
        topics(topic1=6, topic2=5),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    # Kafka (HashSet order, topic2 first): A {topic1: 0, 2, topic2: 0, 3, 4}, B {topic1: 1, 3,
    # 4, 5, topic2: 1, 2}. kcoord hands out topic1-3, 4 to A and topic1-5, topic2-3, 4 to B.
    assert plain(result) == {
        "A": mk((TOPIC_1, 0, 2, 3, 4), (TOPIC_2, 0)),
        "B": mk((TOPIC_1, 1, 5), (TOPIC_2, 1, 2, 3, 4)),
    }
    check_validity_and_balance(group, result)


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0, 2), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1, 2))),
            "C": member(TOPIC_1, TOPIC_2),
        },
        topics(topic1=3, topic2=3),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    assert plain(result) == {
        "A": mk((TOPIC_1, 0, 2)),
        "B": mk((TOPIC_1, 1), (TOPIC_2, 1)),
        "C": mk((TOPIC_2, 0, 2)),
    }
    check_validity_and_balance(group, result)


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_two_topics() -> None:  # noqa: E501
    # Member C left; its partitions go to A and B.
    group = spec(
        {
            "A": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 0), (TOPIC_2, 0))),
            "B": member(TOPIC_1, TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1))),
        },
        topics(topic1=3, topic2=3),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    # Kafka (HashSet order, topic2 first): A {topic1: 0, topic2: 0, 2}, B {topic1: 1, 2,
    # topic2: 1}. kcoord hands out topic1-2 first.
    assert plain(result) == {
        "A": mk((TOPIC_1, 0, 2), (TOPIC_2, 0)),
        "B": mk((TOPIC_1, 1), (TOPIC_2, 1, 2)),
    }
    check_validity_and_balance(group, result)


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics() -> None:  # noqa: E501
    # Both members subscribed to topic1 and topic2; now only to topic2.
    group = spec(
        {
            "A": member(TOPIC_2, assignment=mk((TOPIC_1, 0), (TOPIC_2, 0))),
            "B": member(TOPIC_2, assignment=mk((TOPIC_1, 1), (TOPIC_2, 1))),
        },
        topics(topic1=2, topic2=2),
        HOMOGENEOUS,
    )
    result = assignor.assign(group)
    assert plain(result) == {"A": mk((TOPIC_2, 0)), "B": mk((TOPIC_2, 1))}
    check_validity_and_balance(group, result)


def test_uniform_assignor_picks_the_heterogeneous_builder_for_mixed_subscriptions() -> None:
    """Not a Kafka test: without an explicit type, differing subscriptions go heterogeneous."""
    group = spec({"A": member(TOPIC_1, TOPIC_3), "B": member(TOPIC_3)}, topics(topic1=3, topic3=6))
    assert group.resolved_subscription_type() is SubscriptionType.HETEROGENEOUS
    # UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopics' answer.
    assert plain(assignor.assign(group)) == {
        "A": mk((TOPIC_1, 0, 1, 2), (TOPIC_3, 4)),
        "B": mk((TOPIC_3, 0, 1, 2, 3, 5)),
    }
