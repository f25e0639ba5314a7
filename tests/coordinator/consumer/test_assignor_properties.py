"""Hypothesis properties of the server-side assignors: every subscribed partition assigned
exactly once, to a subscriber; uniform balance and stickiness; range co-partitioning."""

from __future__ import annotations

import uuid

from assignor_checks import (
    check_validity_and_balance,
    moved,
    owners,
    plain,
    sizes,
    subscribed_partitions,
    with_assignment,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.core.consumer import (
    ASSIGNORS,
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RangeAssignor,
    SubscriptionType,
    TopicMetadata,
    UniformAssignor,
    range_member_order,
)

TOPIC_IDS = [uuid.UUID(int=i + 1) for i in range(6)]
uniform = UniformAssignor()
range_assignor = RangeAssignor()


@st.composite
def topic_metadata(draw: st.DrawFn, min_topics: int = 1) -> dict[uuid.UUID, TopicMetadata]:
    count = draw(st.integers(min_topics, len(TOPIC_IDS)))
    return {
        t: TopicMetadata(f"topic{i}", draw(st.integers(1, 12)))
        for i, t in enumerate(TOPIC_IDS[:count])
    }


@st.composite
def member_ids(draw: st.DrawFn) -> list[str]:
    return draw(
        st.lists(st.text("abcdef", min_size=1, max_size=3), min_size=1, max_size=9, unique=True)
    )


@st.composite
def homogeneous_groups(draw: st.DrawFn) -> GroupSpec[uuid.UUID]:
    topics = draw(topic_metadata())
    subscribed = frozenset(draw(st.sets(st.sampled_from(sorted(topics)), min_size=1)))
    members = {m: MemberSubscription(subscribed) for m in draw(member_ids())}
    return GroupSpec(members, topics)


@st.composite
def heterogeneous_groups(draw: st.DrawFn) -> GroupSpec[uuid.UUID]:
    topics = draw(topic_metadata())
    choices = sorted(topics)
    members = {
        m: MemberSubscription(frozenset(draw(st.sets(st.sampled_from(choices)))))
        for m in draw(member_ids())
    }
    return GroupSpec(members, topics)


@st.composite
def static_members(draw: st.DrawFn, group: GroupSpec[uuid.UUID]) -> GroupSpec[uuid.UUID]:
    """``group`` with some members made static (unique instance ids)."""
    members = {}
    for index, (member_id, sub) in enumerate(sorted(group.members.items())):
        static = draw(st.booleans())
        members[member_id] = MemberSubscription(
            sub.subscribed_topic_ids, instance_id=f"i{9 - index}" if static else None
        )
    return GroupSpec(members, group.topics)


@st.composite
def evolved(
    draw: st.DrawFn, group: GroupSpec[uuid.UUID], previous: GroupAssignment[uuid.UUID]
) -> GroupSpec[uuid.UUID]:
    """The next rebalance's input: members hold ``previous``; some leave, some join, and
    some topics grow."""
    members = with_assignment(group, previous)
    subscribed = next(iter(group.members.values())).subscribed_topic_ids
    for member_id in sorted(members):
        if len(members) > 1 and draw(st.booleans()):
            del members[member_id]
    for joiner in draw(st.lists(st.text("xyz", min_size=1, max_size=2), max_size=3, unique=True)):
        members.setdefault(joiner, MemberSubscription(subscribed))
    topics = {
        t: TopicMetadata(meta.name, meta.partition_count + draw(st.integers(0, 3)))
        for t, meta in group.topics.items()
    }
    return GroupSpec(members, topics)


@settings(max_examples=150, deadline=None)
@given(group=homogeneous_groups())
def test_uniform_homogeneous_assigns_every_partition_once_and_balances(group) -> None:  # type: ignore[no-untyped-def]
    check_validity_and_balance(group, uniform.assign(group), max_spread=1)


@settings(max_examples=150, deadline=None)
@given(group=heterogeneous_groups())
def test_every_assignor_assigns_every_subscribed_partition_exactly_once(group) -> None:  # type: ignore[no-untyped-def]
    for assignor in ASSIGNORS.values():
        result = assignor.assign(group)
        assert set(result) == set(group.members)
        held = owners(result)
        assert all(len(holders) == 1 for holders in held.values()), (assignor.name, held)
        assert set(held) == subscribed_partitions(group), assignor.name
        for member_id, parts in result.items():
            assert set(parts) <= group.members[member_id].subscribed_topic_ids


@settings(max_examples=100, deadline=None)
@given(data=st.data(), groups=st.integers(1, 3))
def test_uniform_heterogeneous_balances_members_with_identical_subscriptions(data, groups) -> None:  # type: ignore[no-untyped-def]
    """Members split into cohorts with equal subscriptions and disjoint topics: each cohort
    ends within one partition, as Kafka's balancing loop guarantees for such topics."""
    topics = data.draw(topic_metadata(min_topics=groups))
    ids = sorted(topics)
    cohorts = [ids[i::groups] for i in range(groups)]
    members: dict[str, MemberSubscription[uuid.UUID]] = {}
    for index, cohort in enumerate(cohorts):
        for n in range(data.draw(st.integers(1, 4))):
            members[f"c{index}m{n}"] = MemberSubscription(frozenset(cohort))
    group = GroupSpec(members, topics)
    result = uniform.assign(group)
    counts = sizes(result)
    for index in range(groups):
        cohort_sizes = [n for m, n in counts.items() if m.startswith(f"c{index}m")]
        assert max(cohort_sizes) - min(cohort_sizes) <= 1, counts


@settings(max_examples=150, deadline=None)
@given(data=st.data(), group=homogeneous_groups())
def test_uniform_homogeneous_keeps_partitions_when_balance_allows(data, group) -> None:  # type: ignore[no-untyped-def]
    """After members join or leave and topics grow, every remaining member keeps at least
    min(what it held, the minimum quota) of its partitions, and the result stays balanced."""
    previous = uniform.assign(group)
    following = data.draw(evolved(group, previous))
    result = uniform.assign(following)
    check_validity_and_balance(following, result, max_spread=1)
    total = len(subscribed_partitions(following))
    min_quota = total // len(following.members)
    for member_id, sub in following.members.items():
        held = sum(len(p) for p in sub.assignment.values())
        kept = sum(
            len(p & result[member_id].get(t, frozenset())) for t, p in sub.assignment.items()
        )
        assert kept >= min(held, min_quota), (member_id, held, kept, min_quota)


@settings(max_examples=150, deadline=None)
@given(group=st.one_of(homogeneous_groups(), heterogeneous_groups()))
def test_uniform_is_stable_on_its_own_output(group) -> None:  # type: ignore[no-untyped-def]
    """Fed its own result, the uniform assignor moves nothing and reuses every mapping."""
    first = uniform.assign(group)
    again = GroupSpec(with_assignment(group, first), group.topics)
    second = uniform.assign(again)
    assert moved(first, second) == 0
    assert plain(second) == plain(first)
    for member_id, sub in again.members.items():
        assert second[member_id] is sub.assignment


@settings(max_examples=150, deadline=None)
@given(data=st.data(), base=homogeneous_groups())
def test_range_co_partitions_equal_topics(data, base) -> None:  # type: ignore[no-untyped-def]
    """Same subscriptions and equal partition counts: member i gets the same partition
    numbers of every topic, contiguous, in static-first member order."""
    count = data.draw(st.integers(1, 12))
    topics = {t: TopicMetadata(m.name, count) for t, m in base.topics.items()}
    group = data.draw(static_members(GroupSpec(base.members, topics)))
    result = range_assignor.assign(group)
    check_validity_and_balance(group, result, max_spread=len(topics))
    subscribed = next(iter(group.members.values())).subscribed_topic_ids
    previous_end = 0
    for member_id in range_member_order(group):
        numbers = {frozenset(result[member_id].get(t, frozenset())) for t in subscribed}
        assert len(numbers) == 1, result[member_id]
        (partitions,) = numbers
        if partitions:
            assert sorted(partitions) == list(range(previous_end, previous_end + len(partitions)))
            previous_end += len(partitions)


@settings(max_examples=100, deadline=None)
@given(group=heterogeneous_groups())
def test_range_gives_each_topic_contiguous_near_equal_ranges(group) -> None:  # type: ignore[no-untyped-def]
    result = range_assignor.assign(group)
    for topic_id, meta in group.topics.items():
        subscribers = [m for m, s in group.members.items() if topic_id in s.subscribed_topic_ids]
        if not subscribers:
            continue
        got = [sorted(result[m].get(topic_id, frozenset())) for m in subscribers]
        for partitions in filter(None, got):
            assert partitions == list(range(partitions[0], partitions[-1] + 1))
        lengths = [len(p) for p in got]
        assert max(lengths) - min(lengths) <= 1
        assert sum(lengths) == meta.partition_count


def test_subscription_type_is_derived_from_topic_sets() -> None:
    a, b = TOPIC_IDS[:2]
    topics = {a: TopicMetadata("a", 1), b: TopicMetadata("b", 1)}
    same = GroupSpec(
        {"m1": MemberSubscription(frozenset({a, b})), "m2": MemberSubscription(frozenset({b, a}))},
        topics,
    )
    mixed = GroupSpec(
        {"m1": MemberSubscription(frozenset({a})), "m2": MemberSubscription(frozenset({a, b}))},
        topics,
    )
    assert same.resolved_subscription_type() is SubscriptionType.HOMOGENEOUS
    assert mixed.resolved_subscription_type() is SubscriptionType.HETEROGENEOUS
