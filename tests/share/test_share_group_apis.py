"""ShareGroupDescribe, and what ListGroups, DescribeGroups, ConsumerGroupDescribe and
DeleteGroups say about share groups (GroupMetadataManagerTest's share describe, delete and
cross-type cases, Kafka's names in snake_case), on the fake-clock harness."""

from __future__ import annotations

from share_group_harness import BAR, FOO, GROUP, ShareHarness
from txn_offset_support import txn_commit_offsets

from storage.share_group_records import (
    ShareGroupMetadataKey,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupTargetAssignmentMetadataKey,
)
from storage.share_records import ShareSnapshotKey, ShareUpdateKey
from wire.constants import ErrorCode


def test_share_group_describe_request() -> None:
    h = ShareHarness()
    assert h.share_describe().groups == ()
    (unknown,) = h.share_describe("unknown-group").groups
    assert (unknown.error_code, unknown.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group unknown-group not found.")
    (empty,) = h.share_describe("").groups
    assert empty.error_code == ErrorCode.INVALID_GROUP_ID


def test_share_group_describe_no_errors() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"], group_id="group-id-1")
    h.share_heartbeat("m1", -1, group_id="group-id-1")
    h.share_join("m2", ["foo", "bar"], group_id="group-id-2", rack_id="rack")
    first, second = h.share_describe("group-id-1", "group-id-2").groups
    assert (first.error_code, first.group_state, first.group_epoch, first.assignment_epoch,
            first.assignor_name, first.members) == (ErrorCode.NONE, "Empty", 2, 1, "simple", ())
    assert (second.group_state, second.group_epoch, second.assignment_epoch) == ("Stable", 1, 1)
    (member,) = second.members
    assert (member.member_id, member.rack_id, member.member_epoch, member.client_id,
            member.client_host, member.subscribed_topic_names) == (
        "m2", "rack", 1, "clientId", "clientHost", ("bar", "foo"))
    assert {(tp.topic_id, tp.topic_name, tp.partitions)
            for tp in member.assignment.topic_partitions} == {
        (FOO, "foo", (0, 1, 2, 3, 4, 5)), (BAR, "bar", (0, 1, 2))}


def test_share_group_describe_on_consumer_group() -> None:
    h = ShareHarness()
    h.join("c1", ["foo"])
    (described,) = h.share_describe(GROUP).groups
    assert (described.error_code, described.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a share group.")


def test_consumer_group_describe_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    (described,) = h.describe(GROUP).groups
    assert (described.error_code, described.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a consumer group.")


def test_describe_groups_on_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    v6 = h.describe_group(GROUP, api_version=6)
    assert (v6.error_code, v6.error_message, v6.group_state) == (
        ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a classic group.", "Dead")
    v5 = h.describe_group(GROUP, api_version=5)
    assert (v5.error_code, v5.group_state, v5.members) == (ErrorCode.NONE, "Dead", ())


def test_list_groups_with_the_share_type() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.join("c1", ["foo"], group_id="consumers")
    _, shares = h.list_groups(types=["Share"])
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in shares] == [
        (GROUP, "share", "Stable", "share")]
    _, every = h.list_groups()
    assert {g.group_type for g in every} == {"share", "consumer"}
    _, consumers = h.list_groups(types=["consumer"])
    assert [g.group_id for g in consumers] == ["consumers"]
    _, empty = h.list_groups(types=["share"], states=["empty"])
    assert empty == ()


def test_share_group_delete() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    assert h.delete_groups([GROUP]) == {GROUP: ErrorCode.NON_EMPTY_GROUP}
    h.share_heartbeat("m1", -1)
    start = len(h.records)
    assert h.delete_groups([GROUP]) == {GROUP: ErrorCode.NONE}
    deleted = h.records[start:]
    assert all(r.value is None for r in deleted)
    keys = [r.key for r in deleted]
    # The share coordinator's state of every initialized partition goes first.
    assert {(type(k), k.partition) for k in keys[:12]} == {
        (kind, p) for kind in (ShareSnapshotKey, ShareUpdateKey) for p in range(6)}
    assert keys[12:] == [ShareGroupStatePartitionMetadataKey(GROUP),
                         ShareGroupTargetAssignmentMetadataKey(GROUP),
                         ShareGroupMetadataKey(GROUP)]
    assert GROUP not in h.coordinator.share_groups
    assert h.coordinator.replayed_share_group(GROUP) is None
    assert h.delete_groups([GROUP]) == {GROUP: ErrorCode.GROUP_ID_NOT_FOUND}
    # The id is free again, for any group type.
    assert h.join("c1", ["foo"]).error_code == ErrorCode.NONE


def test_share_group_delete_failed_append_keeps_the_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.share_heartbeat("m1", -1)
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    assert h.delete_groups([GROUP]) == {GROUP: ErrorCode.NOT_COORDINATOR}
    assert h.share_group().group_epoch == 2
    h.assert_share_live_equals_replay()


def test_offset_apis_on_share_group() -> None:
    # Kafka's ShareGroup.validateOffsetCommit / Fetch / Delete: "not a consumer group".
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    start = len(h.records)
    assert h.commit_offsets(GROUP, "m1", -1, {("foo", 0): 5}) == {
        ("foo", 0): ErrorCode.GROUP_ID_NOT_FOUND}
    assert h.fetch_offsets(GROUP)[0] == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.delete_offsets(GROUP, [("foo", 0)])[0] == ErrorCode.GROUP_ID_NOT_FOUND
    assert txn_commit_offsets(h, GROUP, 7, {("foo", 0): 5}) == {
        ("foo", 0): ErrorCode.GROUP_ID_NOT_FOUND}
    assert h.records[start:] == []
    assert GROUP not in h.coordinator.groups  # no simple group beside the share group
