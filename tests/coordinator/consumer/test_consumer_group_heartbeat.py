"""ConsumerGroupHeartbeat in the core, mirroring GroupMetadataManagerTest's consumer group
tests (Kafka's names in snake_case) on the fake-clock harness. After every scenario the live
group must equal what its appended records rebuild."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from consumer_harness import (
    BAR,
    CONFIG,
    FOO,
    GROUP,
    ConsumerHarness,
    assignment,
    owned,
)

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.timers import ConsumerSessionTimerKey


@pytest.fixture
def h() -> ConsumerHarness:
    return ConsumerHarness()


def test_consumer_heartbeat_request_validation(h: ConsumerHarness) -> None:
    def error(**kw: object) -> tuple[int, str]:
        kw.setdefault("member_id", "m")
        kw.setdefault("member_epoch", 0)
        answer = h.consumer_heartbeat(**kw)  # type: ignore[arg-type]
        return answer.error_code, answer.error_message

    invalid = ErrorCode.INVALID_REQUEST
    assert error(group_id="") == (invalid, "GroupId can't be empty.")
    assert error(member_id="", member_epoch=1) == (invalid, "MemberId can't be empty.")
    assert error(instance_id="") == (invalid, "InstanceId can't be empty.")
    assert error(rack_id="") == (invalid, "RackId can't be empty.")
    assert error() == (invalid, "RebalanceTimeoutMs must be provided in first request.")
    assert error(rebalance_timeout_ms=5000) == (
        invalid, "TopicPartitions must be empty when (re-)joining.")
    assert error(rebalance_timeout_ms=5000, topic_partitions=[]) == (
        invalid, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
    assert error(member_epoch=-2) == (invalid, "InstanceId can't be null.")
    assert error(member_epoch=-3)[0] == invalid
    code, message = error(rebalance_timeout_ms=5000, topic_partitions=[],
                          subscribed_topic_names=["foo"], server_assignor="bar")
    assert code == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert message == "ServerAssignor bar is not supported. Supported assignors: uniform, range."
    code, _ = error(rebalance_timeout_ms=5000, topic_partitions=[],
                    subscribed_topic_regex="[foo")
    assert code == ErrorCode.INVALID_REGULAR_EXPRESSION
    # v0: the coordinator names a joining member; a leaving one must name itself.
    assert error(member_id="", member_epoch=-1, api_version=0)[0] == invalid
    assert not h.records


def test_member_id_generation(h: ConsumerHarness) -> None:
    answer = h.join("", ["foo"], api_version=0)
    assert answer.error_code == ErrorCode.NONE
    assert answer.member_id == "uuid0001"
    assert answer.member_epoch == 1


def test_unknown_group_id(h: ConsumerHarness) -> None:
    answer = h.consumer_heartbeat("m", 100, topic_partitions=[])
    assert answer.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_unknown_member_id_joins_consumer_group(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    answer = h.consumer_heartbeat("unknown", 1, topic_partitions=[])
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_member_joins_empty_consumer_group(h: ConsumerHarness) -> None:
    answer = h.join("m1", ["foo", "bar"])
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (0, "m1", 1)
    assert answer.heartbeat_interval_ms == 5000
    assert assignment(answer) == {FOO: [0, 1, 2, 3, 4, 5], BAR: [0, 1, 2]}
    group = h.consumer_group()
    assert (group.group_epoch, group.assignment_epoch, group.state) == (1, 1, "Stable")
    h.assert_live_equals_replay()


def test_consumer_group_member_epoch_validation(h: ConsumerHarness) -> None:
    first = h.join("m1", ["foo"])
    # A greater epoch than known: fenced.
    assert h.consumer_heartbeat("m1", 2, topic_partitions=[]).error_code == (
        ErrorCode.FENCED_MEMBER_EPOCH)
    # A smaller epoch that is not the previous one: fenced.
    h.set_topics(foo=(FOO, 7))
    second = h.consumer_heartbeat("m1", 1, topic_partitions=owned(first))
    h.set_topics(foo=(FOO, 8))
    third = h.consumer_heartbeat("m1", 2, topic_partitions=owned(second))
    assert (second.member_epoch, third.member_epoch) == (2, 3)
    assert h.consumer_heartbeat("m1", 1, topic_partitions=[]).error_code == (
        ErrorCode.FENCED_MEMBER_EPOCH)


def test_previous_epoch_with_owned_subset_is_tolerated(h: ConsumerHarness) -> None:
    """A lost response: the member retries with the previous epoch and a subset of what it
    is assigned (Kafka's throwIfMemberEpochIsInvalid)."""
    h.join("m1", ["foo"])
    h.set_topics(foo=(FOO, 8), bar=(BAR, 3))  # a metadata change bumps the group epoch
    bumped = h.consumer_heartbeat("m1", 1, topic_partitions=[(FOO, list(range(6)))])
    assert bumped.member_epoch == 2
    # The answer was lost: the member comes back with epoch 1 and its old partitions.
    retry = h.consumer_heartbeat("m1", 1, topic_partitions=[(FOO, list(range(6)))])
    assert retry.error_code == ErrorCode.NONE
    assert retry.member_epoch == 2
    # Not a subset of what it is assigned: fenced.
    bad = h.consumer_heartbeat("m1", 1, topic_partitions=[(BAR, [0])])
    assert bad.error_code == ErrorCode.FENCED_MEMBER_EPOCH


def test_new_joining_member_triggers_new_target_assignment(h: ConsumerHarness) -> None:
    a1 = h.join("m1", ["foo"])
    assert assignment(a1) == {FOO: [0, 1, 2, 3, 4, 5]}
    b1 = h.join("m2", ["foo"])
    # m2 gets nothing yet: every partition of its target is still held by m1.
    assert b1.member_epoch == 2
    assert assignment(b1) == {}
    assert h.consumer_group().members["m2"].current.state is MemberState.UNRELEASED_PARTITIONS
    # m1 must revoke first; it stays at epoch 1.
    a2 = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    assert a2.member_epoch == 1
    kept = assignment(a2)
    assert kept is not None and len(kept[FOO]) == 3
    # m2 still waits: the revoked partitions are not released until m1 says so.
    assert assignment(h.consumer_heartbeat("m2", 2, topic_partitions=[])) is None
    a3 = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a2))
    assert a3.member_epoch == 2
    b2 = h.consumer_heartbeat("m2", 2, topic_partitions=[])
    got = assignment(b2)
    assert got is not None and sorted(got[FOO] + kept[FOO]) == list(range(6))
    assert h.consumer_group().state == "Stable"
    h.assert_live_equals_replay()


def test_updating_subscription_triggers_new_target_assignment(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    answer = h.consumer_heartbeat("m1", 1, subscribed_topic_names=["foo", "bar"],
                                  topic_partitions=[(FOO, list(range(6)))])
    assert answer.member_epoch == 2
    assert assignment(answer) == {FOO: list(range(6)), BAR: [0, 1, 2]}
    h.assert_live_equals_replay()


def test_leaving_member_bumps_group_epoch(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    h.join("m2", ["foo"])
    before = h.consumer_group().group_epoch
    answer = h.consumer_heartbeat("m2", -1)
    assert (answer.error_code, answer.member_epoch) == (0, -1)
    group = h.consumer_group()
    assert "m2" not in group.members
    assert group.group_epoch == before + 1
    h.assert_live_equals_replay()


def test_no_group_epoch_bump_when_static_member_temporarily_leaves(h: ConsumerHarness) -> None:
    first = h.join("m1", ["foo"], instance_id="i1")
    answer = h.consumer_heartbeat("m1", -2, instance_id="i1")
    assert answer.member_epoch == -2
    group = h.consumer_group()
    assert group.group_epoch == 1
    assert group.members["m1"].current.assigned_partitions == {FOO: frozenset(range(6))}
    assert assignment(first) == {FOO: list(range(6))}
    h.assert_live_equals_replay()


def test_static_member_gets_back_assignment_upon_rejoin(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"], instance_id="i1")
    h.join("m2", ["foo"], instance_id="i2")
    target = dict(h.consumer_group().target["m1"])
    epoch = h.consumer_group().group_epoch
    h.consumer_heartbeat("m1", -2, instance_id="i1")
    answer = h.join("m1-new", ["foo"], instance_id="i1")
    assert answer.error_code == ErrorCode.NONE
    group = h.consumer_group()
    assert group.group_epoch == epoch  # no rebalance
    assert "m1" not in group.members
    assert dict(group.target["m1-new"]) == target
    assert group.static_members["i1"] == "m1-new"
    h.assert_live_equals_replay()


def test_should_throw_unreleased_instance_id_exception_when_new_member_joins_with_in_use_instance_id(  # noqa: E501
    h: ConsumerHarness,
) -> None:
    h.join("m1", ["foo"], instance_id="i1")
    answer = h.join("m2", ["foo"], instance_id="i1")
    assert answer.error_code == ErrorCode.UNRELEASED_INSTANCE_ID


def test_session_timeout_lifecycle(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    h.join("m2", ["foo"])
    h.sleep(40_000)
    h.consumer_heartbeat("m1", 1, topic_partitions=None)  # m1 keeps its session
    h.sleep(6_000)  # m2 missed its 45 s session
    group = h.consumer_group()
    assert set(group.members) == {"m1"}
    assert group.group_epoch == 3
    h.assert_live_equals_replay()


def test_rebalance_timeout_lifecycle(h: ConsumerHarness) -> None:
    a1 = h.join("m1", ["foo"], rebalance_timeout_ms=10_000)
    h.join("m2", ["foo"])
    revoke = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    assert h.consumer_group().members["m1"].current.state is MemberState.UNREVOKED_PARTITIONS
    assert revoke.member_epoch == 1
    h.consumer_heartbeat("m2", 2, topic_partitions=[])
    h.sleep(10_001)  # m1 never revoked: fenced, its partitions go to m2
    assert set(h.consumer_group().members) == {"m2"}
    answer = h.consumer_heartbeat("m2", 2, topic_partitions=[])
    assert assignment(answer) == {FOO: list(range(6))}
    h.assert_live_equals_replay()


def test_consumer_group_heartbeat_full_response(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    # A plain heartbeat with nothing changed carries no assignment...
    assert "assignment" not in h.consumer_heartbeat("m1", 1, topic_partitions=None)
    # ...a full one does.
    full = h.consumer_heartbeat("m1", 1, rebalance_timeout_ms=5000,
                                subscribed_topic_names=["foo"],
                                topic_partitions=[(FOO, list(range(6)))])
    assert assignment(full) == {FOO: list(range(6))}


def test_group_max_size_reached() -> None:
    h = ConsumerHarness(config=dataclasses.replace(CONFIG, group_consumer_max_size=1))
    h.join("m1", ["foo"])
    assert h.join("m2", ["foo"]).error_code == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_regex_subscription_matches_whole_names_and_picks_up_new_topics(
    h: ConsumerHarness,
) -> None:
    answer = h.consumer_heartbeat("m1", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                                  subscribed_topic_regex="fo.")
    assert assignment(answer) == {FOO: list(range(6))}
    food = uuid.UUID(int=0xF00D)
    h.set_topics(foo=(FOO, 6), bar=(BAR, 3), food=(food, 2), fox=(uuid.UUID(int=0xF0C5), 1))
    later = h.consumer_heartbeat("m1", 1, topic_partitions=owned(answer))
    got = assignment(later)
    assert got is not None and food not in got  # "food" is not a whole-name match
    assert len(got) == 2


def test_assignors_by_name(h: ConsumerHarness) -> None:
    h.join("m1", ["foo", "bar"], server_assignor="range")
    h.join("m2", ["foo", "bar"], server_assignor="range")
    group = h.consumer_group()
    assert group.preferred_assignor("uniform") == "range"
    # range: each member gets a contiguous half of every topic.
    targets = {mid: {t: sorted(p) for t, p in group.target[mid].items()} for mid in group.target}
    assert targets == {"m1": {FOO: [0, 1, 2], BAR: [0, 1]}, "m2": {FOO: [3, 4, 5], BAR: [2]}}


def test_consumer_group_describe(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"], instance_id="i1")
    described = h.describe(GROUP, "missing", "")
    group, missing, empty = described.groups
    assert (group.group_state, group.group_epoch, group.assignment_epoch) == ("Stable", 1, 1)
    assert group.assignor_name == "uniform"
    (member,) = group.members
    assert (member.member_id, member.instance_id, member.member_epoch) == ("m1", "i1", 1)
    assert member.member_type == 1
    assert member.assignment.topic_partitions[0].topic_name == "foo"
    assert missing.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert empty.error_code == ErrorCode.INVALID_GROUP_ID


def test_restart_keeps_members_epochs_and_partitions(h: ConsumerHarness) -> None:
    a1 = h.join("m1", ["foo"])
    h.crash_and_replay()
    again = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    assert (again.error_code, again.member_epoch) == (ErrorCode.NONE, 1)
    assert h.consumer_group().members["m1"].current.assigned_partitions == {
        FOO: frozenset(range(6))}


def test_failed_append_rebuilds_the_group_from_the_log(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    h.fail_appends()
    answer = h.join("m2", ["foo"])
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert set(h.consumer_group().members) == {"m1"}
    h.assert_live_equals_replay()


def test_empty_classic_group_becomes_a_consumer_group_and_back(h: ConsumerHarness) -> None:
    h.commit_offsets(GROUP, "", -1, {("foo", 0): 5})
    assert h.maybe_group(GROUP) is not None
    h.join("m1", ["foo"])
    assert h.maybe_group(GROUP) is None
    assert h.fetch_offsets(GROUP, [("foo", 0)])[1][("foo", 0)][0] == 5
    h.consumer_heartbeat("m1", -1)
    joined = h.dynamic_join_group(GROUP, "", "consumer", [("range", b"")])
    assert joined.error_code == ErrorCode.NONE
    assert GROUP not in h.coordinator.consumer_groups
    assert h.fetch_offsets(GROUP, [("foo", 0)])[1][("foo", 0)][0] == 5


def test_classic_join_with_malformed_subscription_to_a_consumer_group(
    h: ConsumerHarness,
) -> None:
    """A classic member may join a non-empty consumer group (test_consumer_group_migration),
    but not with embedded protocol metadata that does not parse: Kafka throws
    IllegalStateException, UNKNOWN_SERVER_ERROR, and nothing is written."""
    h.join("m1", ["foo"])
    records = len(h.records)
    joined = h.dynamic_join_group(GROUP, "", "consumer", [("range", b"")])
    assert joined.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert len(h.records) == records and set(h.consumer_group().members) == {"m1"}


# --------------------------------------------------------------------------- offsets


def test_consumer_group_offset_commit_with_unknown_member_id(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    answer = h.commit_offsets(GROUP, "unknown", 1, {("foo", 0): 1}, api_version=9)
    assert answer == {("foo", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_consumer_group_offset_commit_with_stale_member_epoch(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    answer = h.commit_offsets(GROUP, "m1", 10, {("foo", 0): 1}, api_version=9)
    assert answer == {("foo", 0): ErrorCode.STALE_MEMBER_EPOCH}
    ok = h.commit_offsets(GROUP, "m1", 1, {("foo", 0): 1}, api_version=9)
    assert ok == {("foo", 0): ErrorCode.NONE}


def test_consumer_group_offset_commit_with_version_smaller_than_version9(
    h: ConsumerHarness,
) -> None:
    h.join("m1", ["foo"])
    answer = h.commit_offsets(GROUP, "m1", 1, {("foo", 0): 1}, api_version=8)
    assert answer == {("foo", 0): ErrorCode.UNSUPPORTED_VERSION}


def test_consumer_group_offset_commit_from_admin_client(h: ConsumerHarness) -> None:
    h.join("m1", ["foo"])
    h.consumer_heartbeat("m1", -1)
    answer = h.commit_offsets(GROUP, "", -1, {("foo", 0): 7}, api_version=9)
    assert answer == {("foo", 0): ErrorCode.NONE}


def test_steady_heartbeat_fast_path_answers_as_the_full_path(
    h: ConsumerHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coordinator.core.consumer import heartbeat as consumer_heartbeat

    a1 = h.join("m1", ["foo"])
    h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    fast = h.consumer_heartbeat("m1", 1)
    records = len(h.records)
    session = ConsumerSessionTimerKey(GROUP, "m1")
    h.sleep(1_000)
    fast_again = h.consumer_heartbeat("m1", 1)  # the member's kept steady answer
    assert h.deadline(session) == h.now + CONFIG.group_consumer_session_timeout_ms
    monkeypatch.setattr(consumer_heartbeat, "steady_heartbeat", lambda *args: None)
    h.sleep(1_000)
    full = h.consumer_heartbeat("m1", 1)
    assert fast == fast_again == full
    assert h.deadline(session) == h.now + CONFIG.group_consumer_session_timeout_ms
    assert len(h.records) == records  # neither wrote anything


def test_steady_heartbeat_follows_the_member_epoch_and_the_config(h: ConsumerHarness) -> None:
    """The steady path keeps its answer on the member, made for the member's state and the
    config: a new epoch, a member no longer Stable or a new config are never answered from
    the kept one."""
    a1 = h.join("m1", ["foo"])
    h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    assert h.consumer_heartbeat("m1", 1).member_epoch == 1
    # m2 joins: the group epoch moves to 2; m1 must revoke half of foo's partitions.
    h.join("m2", ["foo"])
    revoking = h.consumer_heartbeat("m1", 1)
    assert revoking.error_code == ErrorCode.NONE and revoking.member_epoch == 1
    assert revoking.assignment is not None and len(assignment(revoking)[FOO]) == 3
    member = h.consumer_group().members["m1"]
    assert member.current.state is MemberState.UNREVOKED_PARTITIONS
    # Not Stable: every heartbeat takes the full path, none answers from the kept answer.
    assert h.consumer_heartbeat("m1", 1).member_epoch == 1
    assert member.steady_heartbeat is None or member.steady_heartbeat.current is not member.current
    h.consumer_heartbeat("m1", 1, topic_partitions=owned(revoking))
    assert member.current.member_epoch == 2
    steady = h.consumer_heartbeat("m1", 2)
    assert (steady.error_code, steady.member_epoch, steady.heartbeat_interval_ms) == (
        ErrorCode.NONE, 2, 5_000)
    assert "assignment" not in steady
    # The stale epoch is fenced, not answered with the kept answer.
    assert h.consumer_heartbeat("m1", 3).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    # A new config (a new heartbeat interval) makes a new answer.
    h.coordinator.config = dataclasses.replace(CONFIG, group_consumer_heartbeat_interval_ms=7_000)
    assert h.consumer_heartbeat("m1", 2).heartbeat_interval_ms == 7_000
    h.coordinator.config = dataclasses.replace(
        CONFIG, group_coordinator_rebalance_protocols="classic")
    assert h.consumer_heartbeat("m1", 2).error_code == ErrorCode.UNSUPPORTED_VERSION
    h.assert_live_equals_replay()


def test_consumer_group_offsets_expire_unless_subscribed_and_the_empty_group_goes() -> None:
    config = dataclasses.replace(CONFIG, offsets_retention_minutes=1,
                                 offsets_retention_check_interval_ms=10_000)
    h = ConsumerHarness(config=config)
    h.apply(h.coordinator.on_loaded(0))  # arms the retention scan
    h.join("m1", ["foo"])
    assert h.commit_offsets(GROUP, "m1", 1, {("foo", 0): 1, ("bar", 0): 2}, api_version=9) == {
        ("foo", 0): ErrorCode.NONE, ("bar", 0): ErrorCode.NONE}
    h.sleep(70_000)
    # "bar" is not subscribed: expired; "foo" is: kept.
    assert set(h.coordinator.committed_offsets(GROUP)) == {("foo", 0)}
    h.consumer_heartbeat("m1", -1)
    h.sleep(70_000)
    assert h.coordinator.committed_offsets(GROUP) == {}
    assert GROUP not in h.coordinator.consumer_groups
    h.assert_live_equals_replay()
