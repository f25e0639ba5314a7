"""GroupMetadataManagerTest's share group heartbeat cases (Kafka's names in snake_case) on
the fake-clock harness, plus the session timeout, epochs, several members sharing a
partition and restarts. Kafka's cases prepare targets with a mocked assignor; kcoord runs
its simple assignor, so the targets checked are the ones it computes. Kafka 4.1+ has no
subscription metadata record (the metadata hash is in the epoch record) and adds the state
partition metadata record. Every state-changing scenario ends with live == replay."""

from __future__ import annotations

import dataclasses
from typing import Any

from share_group_harness import (
    BAR,
    FOO,
    GROUP,
    SHARE_CONFIG,
    ShareHarness,
    assignment,
    snapshot,
)

from coordinator.core.timers import ShareSessionTimerKey
from storage.records import TopicPartitions
from storage.share_group_records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
)
from wire.constants import ErrorCode

SESSION_MS = SHARE_CONFIG.group_share_session_timeout_ms


def _error(answer: Any) -> tuple[int, str | None]:
    return answer.error_code, answer.error_message


def test_share_group_heartbeat_request_validation() -> None:
    h = ShareHarness()
    bad = ErrorCode.INVALID_REQUEST
    assert _error(h.share_heartbeat("m", 0, group_id="")) == (bad, "GroupId can't be empty.")
    assert _error(h.share_heartbeat("m", 0, group_id="   ")) == (bad, "GroupId can't be empty.")
    assert _error(h.share_heartbeat("m", 0)) == (
        bad, "SubscribedTopicNames must be set in first request.")
    assert _error(h.share_heartbeat("m", 0, subscribed_topic_names=[])) == (
        bad, "SubscribedTopicNames must be set in first request.")
    assert _error(h.share_heartbeat("", 1)) == (bad, "MemberId can't be empty.")
    assert _error(h.share_heartbeat("m", 1, rack_id="")) == (bad, "RackId can't be empty.")
    assert _error(h.share_heartbeat("m", -2)) == (bad, "MemberEpoch is invalid.")
    assert h.records == [] and h.coordinator.share_groups == {}


def test_share_group_unknown_group_id() -> None:
    h = ShareHarness()
    answer = h.share_heartbeat("m", 100, subscribed_topic_names=["foo", "bar"])
    assert _error(answer) == (ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {GROUP} not found.")
    assert answer.member_epoch == 0 and answer.member_id is None


def test_share_group_unknown_member_id_joins() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo", "bar"])
    answer = h.share_heartbeat("m2", 1, subscribed_topic_names=["foo", "bar"])
    assert _error(answer) == (ErrorCode.UNKNOWN_MEMBER_ID,
                              f"Member m2 is not a member of group {GROUP}.")


def test_share_group_member_joins_empty_group_with_assignments() -> None:
    h = ShareHarness()
    answer = h.share_join("m1", ["foo", "bar"])
    assert (answer.error_code, answer.member_id, answer.member_epoch,
            answer.heartbeat_interval_ms) == (ErrorCode.NONE, "m1", 1, 5000)
    assert assignment(answer) == {FOO: [0, 1, 2, 3, 4, 5], BAR: [0, 1, 2]}
    everything = (TopicPartitions(BAR, (0, 1, 2)), TopicPartitions(FOO, (0, 1, 2, 3, 4, 5)))
    assert [r.key for r in h.records] == [
        ShareGroupMemberMetadataKey(GROUP, "m1"),
        ShareGroupMetadataKey(GROUP),
        ShareGroupTargetAssignmentMemberKey(GROUP, "m1"),
        ShareGroupTargetAssignmentMetadataKey(GROUP),
        ShareGroupStatePartitionMetadataKey(GROUP),
        ShareGroupCurrentMemberAssignmentKey(GROUP, "m1"),
    ]
    values = [r.value for r in h.records]
    assert values[0] == ShareGroupMemberMetadataValue(None, "clientId", "clientHost",
                                                      ("bar", "foo"))
    assert values[1].epoch == 1 and values[1].metadata_hash != 0
    assert values[2] == ShareGroupTargetAssignmentMemberValue(everything)
    assert values[3] == ShareGroupTargetAssignmentMetadataValue(1)
    assert {(t.topic_name, t.partitions) for t in values[4].initialized_topics} == {
        ("foo", (0, 1, 2, 3, 4, 5)), ("bar", (0, 1, 2))}
    assert values[5] == ShareGroupCurrentMemberAssignmentValue(1, 0, 0, everything)
    h.assert_share_live_equals_replay()


def test_share_group_leaving_member_bumps_group_epoch() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo", "bar"])
    epoch = h.share_join("m2", ["foo", "bar"]).member_epoch
    start = len(h.records)
    answer = h.share_heartbeat("m2", -1, subscribed_topic_names=["foo", "bar"])
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (
        ErrorCode.NONE, "m2", -1)
    assert [(type(r.key), r.value is None) for r in h.records[start:]] == [
        (ShareGroupCurrentMemberAssignmentKey, True),
        (ShareGroupTargetAssignmentMemberKey, True),
        (ShareGroupMemberMetadataKey, True),
        (ShareGroupMetadataKey, False),
    ]
    assert h.share_group().group_epoch == epoch + 1
    assert ShareSessionTimerKey(GROUP, "m2") not in h.timers
    h.assert_share_live_equals_replay()


def test_share_group_new_member_is_rejected_with_maximum_members_is_reached() -> None:
    h = ShareHarness(dataclasses.replace(SHARE_CONFIG, group_share_max_size=1))
    assert h.share_join("m1", ["foo", "bar"]).member_epoch == 1
    answer = h.share_join("m2", ["foo", "bar"])
    assert _error(answer) == (ErrorCode.GROUP_MAX_SIZE_REACHED,
                              "The share group has reached its maximum capacity of 1 members.")
    # The member already in keeps heartbeating.
    assert h.share_heartbeat("m1", 1).error_code == ErrorCode.NONE


def test_share_group_states() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    assert h.share_group().state == "Stable"
    h.share_heartbeat("m1", -1)
    assert h.share_group().state == "Empty"
    h.assert_share_live_equals_replay()


def test_share_group_heartbeat_on_consumer_group() -> None:
    h = ShareHarness()
    h.join("c1", ["foo"])  # a consumer group (KIP-848)
    answer = h.share_join("m1", ["foo"])
    assert _error(answer) == (ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a share group.")
    assert GROUP not in h.coordinator.share_groups


def test_consumer_group_heartbeat_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    answer = h.join("c1", ["foo"])
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a consumer group.")
    assert GROUP not in h.coordinator.consumer_groups


def test_classic_group_join_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    answer = h.reply(h.send_join_group(GROUP, "", "consumer", [("range", b"")]))
    assert (answer.error_code, answer.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    assert GROUP not in h.coordinator.groups


# ------------------------------------------------------------------ beyond Kafka's list


def test_several_members_share_a_partition() -> None:
    one = {"only": (FOO, 1)}
    h = ShareHarness(**one)
    answers = [h.share_join(f"m{i}", ["only"]) for i in range(3)]
    for i, answer in enumerate(answers):
        h.share_heartbeat(f"m{i}", answer.member_epoch)
    group = h.share_group()
    assert {mid: dict(m.assigned) for mid, m in group.members.items()} == {
        f"m{i}": {FOO: frozenset({0})} for i in range(3)}
    h.assert_share_live_equals_replay()


def test_member_epochs_follow_the_group_epoch() -> None:
    h = ShareHarness()
    first = h.share_join("m1", ["foo"])
    assert first.member_epoch == 1
    h.share_join("m2", ["foo"])
    again = h.share_heartbeat("m1", 1)
    assert again.member_epoch == 2  # moved to the new assignment epoch
    assert h.share_heartbeat("m1", 1).error_code == ErrorCode.NONE  # the previous epoch
    fenced = h.share_heartbeat("m1", 3)
    assert _error(fenced)[0] == ErrorCode.FENCED_MEMBER_EPOCH
    assert "greater member epoch (3)" in (fenced.error_message or "")
    h.share_join("m3", ["foo"])
    h.share_heartbeat("m1", 2)
    stale = h.share_heartbeat("m1", 1)
    assert _error(stale)[0] == ErrorCode.FENCED_MEMBER_EPOCH
    assert "smaller member epoch (1)" in (stale.error_message or "")


def test_subscription_change_bumps_the_group_epoch() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    answer = h.share_heartbeat("m1", 1, subscribed_topic_names=["foo", "bar"])
    assert answer.member_epoch == 2
    assert assignment(answer) == {FOO: [0, 1, 2, 3, 4, 5], BAR: [0, 1, 2]}
    same = h.share_heartbeat("m1", 2, subscribed_topic_names=["bar", "foo"])
    assert same.member_epoch == 2 and "assignment" not in same
    h.assert_share_live_equals_replay()


def test_new_topic_partitions_bump_the_group_epoch() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.set_topics(foo=(FOO, 8), bar=(BAR, 3))
    answer = h.share_heartbeat("m1", 1)
    assert answer.member_epoch == 2
    assert assignment(answer) == {FOO: list(range(8))}


def test_session_timeout_fences_the_member() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.share_join("m2", ["foo"])
    assert h.deadline(ShareSessionTimerKey(GROUP, "m1")) == SESSION_MS
    h.sleep(SESSION_MS - 1)
    h.share_heartbeat("m2", 2)
    h.sleep(2)
    group = h.share_group()
    assert list(group.members) == ["m2"]
    assert group.group_epoch == 3
    answer = h.share_heartbeat("m2", 2)
    assert answer.member_epoch == 3
    assert assignment(answer) == {FOO: [0, 1, 2, 3, 4, 5]}
    assert _error(h.share_heartbeat("m1", 2))[0] == ErrorCode.UNKNOWN_MEMBER_ID
    h.assert_share_live_equals_replay()


def test_heartbeat_interval_and_session_timeout_come_from_the_config() -> None:
    config = dataclasses.replace(SHARE_CONFIG, group_share_min_session_timeout_ms=1_000,
                                 group_share_session_timeout_ms=1_000,
                                 group_share_min_heartbeat_interval_ms=100,
                                 group_share_heartbeat_interval_ms=100)
    h = ShareHarness(config)
    assert h.share_join("m1", ["foo"]).heartbeat_interval_ms == 100
    h.sleep(1_001)
    assert h.share_group().members == {}


def test_restart_rebuilds_the_group_and_arms_sessions() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo", "bar"])
    h.share_join("m2", ["foo"])
    before = snapshot(h.share_group())
    h.crash_and_replay()
    assert snapshot(h.share_group()) == before
    assert h.deadline(ShareSessionTimerKey(GROUP, "m1")) == h.now + SESSION_MS
    assert h.share_heartbeat("m2", 2).error_code == ErrorCode.NONE


def test_failed_append_rebuilds_the_group_from_the_log() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    before = snapshot(h.share_group())
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    answer = h.share_join("m2", ["foo"])
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert snapshot(h.share_group()) == before
    h.assert_share_live_equals_replay()


def test_failed_append_of_a_new_group_forgets_it() -> None:
    h = ShareHarness()
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    assert h.share_join("m1", ["foo"]).error_code == ErrorCode.NOT_COORDINATOR
    assert GROUP not in h.coordinator.share_groups


def test_classic_group_sync_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    start = len(h.records)
    answer = h.sync_group_follower(GROUP, 1, "m1")
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.records[start:] == []


def test_classic_group_leave_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    answer = h.single_leave_group(GROUP, "m1")
    assert (answer.error_code, answer.members) == (ErrorCode.UNKNOWN_MEMBER_ID, ())
    assert list(h.share_group().members) == ["m1"]
    assert h.heartbeat(GROUP, "m1", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_coordinator_move_reloads_the_share_group() -> None:
    from coordinator.core.group_reload import reload_groups

    h = ShareHarness()
    h.share_join("m1", ["foo"])
    before = snapshot(h.share_group())
    h.sleep(1_000)
    h.apply(reload_groups(h.coordinator, [GROUP], h.now))
    assert snapshot(h.share_group()) == before
    assert h.deadline(ShareSessionTimerKey(GROUP, "m1")) == h.now + SESSION_MS
    assert h.share_heartbeat("m1", 1).error_code == ErrorCode.NONE


def test_a_member_behind_by_an_epoch_gets_its_assignment_again() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.set_topics(foo=(FOO, 8), bar=(BAR, 3))
    lost = h.share_heartbeat("m1", 1)  # this answer never reaches the client
    assert lost.member_epoch == 2 and assignment(lost) == {FOO: list(range(8))}
    again = h.share_heartbeat("m1", 1)  # from the previous epoch
    assert again.member_epoch == 2 and assignment(again) == {FOO: list(range(8))}
    assert "assignment" not in h.share_heartbeat("m1", 2)


def test_a_fence_that_fails_to_append_keeps_the_member_on_a_session() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    assert h.share_heartbeat("m1", -1).error_code == ErrorCode.NOT_COORDINATOR
    assert list(h.share_group().members) == ["m1"]
    assert h.deadline(ShareSessionTimerKey(GROUP, "m1")) == h.now + SESSION_MS
    h.sleep(SESSION_MS + 1)
    assert h.share_group().members == {}
    h.assert_share_live_equals_replay()
