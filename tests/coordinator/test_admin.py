"""DescribeGroups / ListGroups / DeleteGroups / OffsetDelete: mirrors of GroupCoordinatorTest.scala
and the Java-only admin tests."""

from __future__ import annotations

from harness import (
    GROUP_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    identity,
)
from scenarios import subscription, verify_leave_group_result

from coordinator.core import ErrorCode
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import DEAD
from storage.records import GroupMetadataKey, OffsetCommitKey
from wire.consumer_protocol import subscription_topics

ALL_STATES = ["PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"]


def _join(h: Harness, protocol_type: str = PROTOCOL_TYPE, protocols=PROTOCOLS):  # type: ignore[no-untyped-def]
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, protocol_type, protocols)
    assert join.error_code == ErrorCode.NONE
    return join


def _join_and_sync(h: Harness, protocol_type: str = PROTOCOL_TYPE, protocols=PROTOCOLS):  # type: ignore[no-untyped-def]
    join = _join(h, protocol_type, protocols)
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.leader, {})
    assert sync.error_code == ErrorCode.NONE
    return join


def _overview(groups):  # type: ignore[no-untyped-def]
    return [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in groups]


def test_list_groups_includes_stable_groups(h: Harness) -> None:
    _join_and_sync(h)
    error, groups = h.list_groups()
    assert error == ErrorCode.NONE
    assert _overview(groups) == [("groupId", "consumer", "Stable", "classic")]


def test_list_groups_includes_rebalancing_groups(h: Harness) -> None:
    _join(h)
    error, groups = h.list_groups()
    assert error == ErrorCode.NONE
    assert _overview(groups) == [("groupId", "consumer", "CompletingRebalance", "classic")]


def test_list_groups_with_states(h: Harness) -> None:
    join = _join(h)
    assert len(h.list_groups(["CompletingRebalance"])[1]) == 1
    assert len(h.list_groups([s for s in ALL_STATES if s != "CompletingRebalance"])[1]) == 0
    h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert len(h.list_groups(["Stable"])[1]) == 1
    assert len(h.list_groups([s for s in ALL_STATES if s != "Stable"])[1]) == 0
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id))
    assert len(h.list_groups(["Empty"])[1]) == 1
    assert len(h.list_groups([s for s in ALL_STATES if s != "Empty"])[1]) == 0
    # KIP-518: the filter is case-insensitive.
    assert len(h.list_groups(["empty"])[1]) == 1
    assert len(h.list_groups(["EMPTY", "stable"])[1]) == 1


def test_list_groups_with_types(h: Harness) -> None:
    _join_and_sync(h)
    expected = [("groupId", "consumer", "Stable", "classic")]
    assert _overview(h.list_groups(types=["classic"])[1]) == expected
    assert h.list_groups(types=["consumer"])[1] == ()
    assert h.list_groups(types=["Invalid"])[1] == ()
    assert _overview(h.list_groups()[1]) == expected
    assert _overview(h.list_groups(types=["Classic"])[1]) == expected


def test_describe_group_inactive_group(h: Harness) -> None:
    described = h.describe_group(GROUP_ID)
    assert described.error_code == ErrorCode.NONE
    assert (described.group_state, described.protocol_type, described.protocol_data,
            described.members) == ("Dead", "", "", ())


def test_describe_group_stable_for_dynamic_member(h: Harness) -> None:
    join = _join(h)
    h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b"A"})
    described = h.describe_group(GROUP_ID)
    assert described.error_code == ErrorCode.NONE
    assert described.protocol_type == PROTOCOL_TYPE
    assert described.protocol_data == "range"
    assert [m.member_id for m in described.members] == [join.member_id]
    assert described.members[0].member_assignment == b"A"
    assert described.members[0].client_id == "clientId"


def test_describe_group_rebalancing(h: Harness) -> None:
    join = _join(h, protocols=[("range", b"meta")])
    described = h.describe_group(GROUP_ID)
    assert described.error_code == ErrorCode.NONE
    assert described.protocol_type == PROTOCOL_TYPE
    assert described.protocol_data == ""
    assert described.group_state == "CompletingRebalance"
    assert join.member_id in [m.member_id for m in described.members]
    assert all(m.member_metadata == b"" for m in described.members)
    assert all(m.member_assignment == b"" for m in described.members)


def test_delete_non_empty_group(h: Harness) -> None:
    _join(h)
    assert h.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NON_EMPTY_GROUP}


def test_delete_group_with_invalid_group_id(h: Harness) -> None:
    result = h.delete_groups([None])  # type: ignore[list-item]
    assert result == {None: ErrorCode.INVALID_GROUP_ID}


def test_delete_empty_group(h: Harness) -> None:
    join = _join(h)
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id))
    before = len(h.records)
    assert h.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NONE}
    assert h.maybe_group() is None
    tombstones = [r for r in h.records[before:] if r.value is None]
    assert [r.key for r in tombstones] == [GroupMetadataKey(GROUP_ID)]


def test_delete_empty_group_with_stored_offsets(h: Harness) -> None:
    join = _join(h)
    h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    tp = ("topic", 0)
    assert h.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {tp: 0}) == {tp: 0}
    described = h.describe_group(GROUP_ID)
    assert described.group_state == "Stable"
    assert described.members[0].member_id == join.member_id
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id))
    before = len(h.records)
    assert h.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NONE}
    assert h.describe_group(GROUP_ID).group_state == "Dead"
    tombstones = {r.key for r in h.records[before:] if r.value is None}
    assert tombstones == {OffsetCommitKey(GROUP_ID, "topic", 0), GroupMetadataKey(GROUP_ID)}
    assert h.coordinator.hard_state().offsets == {}


def test_delete_offset_of_non_existing_group(h: Harness) -> None:
    assert h.delete_offsets(GROUP_ID, [("foo", 0)]) == (ErrorCode.GROUP_ID_NOT_FOUND, {})


def test_delete_offset_of_non_empty_non_consumer_group(h: Harness) -> None:
    _join(h, "My Protocol")
    assert h.delete_offsets(GROUP_ID, [("foo", 0)]) == (ErrorCode.NON_EMPTY_GROUP, {})


def _commit_two_and_leave(h: Harness, protocol_type: str) -> None:
    join = _join_and_sync(h, protocol_type)
    offsets = {("foo", 0): 37, ("bar", 0): 37}
    result = h.commit_offsets(GROUP_ID, join.member_id, join.generation_id, offsets)
    assert result == {tp: ErrorCode.NONE for tp in offsets}
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id))
    assert h.state() == "Empty"


def test_delete_offset_of_empty_non_consumer_group(h: Harness) -> None:
    _commit_two_and_leave(h, "My Protocol")
    assert h.delete_offsets(GROUP_ID, [("foo", 0)]) == (
        ErrorCode.NONE, {("foo", 0): ErrorCode.NONE})
    _, data = h.fetch_offsets(GROUP_ID, [("foo", 0), ("bar", 0)])
    assert data[("foo", 0)][0] == -1
    assert data[("bar", 0)][0] == 37


def test_delete_offset_of_consumer_group_with_unparsable_protocol(h: Harness) -> None:
    join = _join_and_sync(h)
    assert h.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {("foo", 0): 37}) == {
        ("foo", 0): ErrorCode.NONE}
    error, partitions = h.delete_offsets(GROUP_ID, [("foo", 0)])
    assert error == ErrorCode.NONE
    assert partitions == {("foo", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC}


def test_delete_offset_of_dead_consumer_group(h: Harness) -> None:
    group = h.add_group(ClassicGroup(GROUP_ID, DEAD, 0))
    group.protocol_type = PROTOCOL_TYPE
    assert h.delete_offsets(GROUP_ID, [("foo", 0)]) == (ErrorCode.GROUP_ID_NOT_FOUND, {})


def test_delete_offset_of_empty_consumer_group(h: Harness) -> None:
    _commit_two_and_leave(h, PROTOCOL_TYPE)
    assert h.delete_offsets(GROUP_ID, [("foo", 0)]) == (
        ErrorCode.NONE, {("foo", 0): ErrorCode.NONE})
    _, data = h.fetch_offsets(GROUP_ID, [("foo", 0), ("bar", 0)])
    assert data[("foo", 0)][0] == -1
    assert data[("bar", 0)][0] == 37


def test_delete_offset_of_stable_consumer_group(h: Harness) -> None:
    join = _join_and_sync(h, PROTOCOL_TYPE, [("protocol", subscription("bar"))])
    offsets = {("foo", 0): 37, ("bar", 0): 37}
    assert h.commit_offsets(GROUP_ID, join.member_id, join.generation_id, offsets) == {
        tp: ErrorCode.NONE for tp in offsets}
    assert h.state() == "Stable"
    error, partitions = h.delete_offsets(GROUP_ID, [("foo", 0), ("bar", 0)])
    assert error == ErrorCode.NONE
    assert partitions == {
        ("foo", 0): ErrorCode.NONE, ("bar", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC}
    _, data = h.fetch_offsets(GROUP_ID, [("foo", 0), ("bar", 0)])
    assert data[("foo", 0)][0] == -1
    assert data[("bar", 0)][0] == 37


# --------------------------------------------------------------------------- Java-only tests


def test_describe_groups_group_id_not_found_exception(h: Harness) -> None:
    described = h.describe_group(GROUP_ID, api_version=6)
    assert described.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert described.group_id == GROUP_ID


def test_classic_group_delete(h: Harness) -> None:
    h.commit_offsets(GROUP_ID, "", -1, {("foo", 0): 1, ("foo", 1): 2})
    before = len(h.records)
    assert h.delete_groups([GROUP_ID, "missing"]) == {GROUP_ID: ErrorCode.NONE,
                                                      "missing": ErrorCode.GROUP_ID_NOT_FOUND}
    tombstones = [r.key for r in h.records[before:] if r.value is None]
    # An offset-only group (generation 0) has no group record to tombstone.
    assert tombstones == [OffsetCommitKey(GROUP_ID, "foo", 0), OffsetCommitKey(GROUP_ID, "foo", 1)]
    assert h.maybe_group() is None


def test_classic_group_maybe_delete(h: Harness) -> None:
    """Only an Empty group is deleted (with a tombstone); a rebalancing or unknown one writes
    nothing."""
    join = _join_and_sync(h)
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "PreparingRebalance"
    before = len(h.records)
    assert h.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NON_EMPTY_GROUP}
    assert h.delete_groups(["invalid-group-id"]) == {
        "invalid-group-id": ErrorCode.GROUP_ID_NOT_FOUND}
    assert h.records[before:] == []
    h.batch_leave_group(GROUP_ID, [identity(m) for m in list(h.group().members)])
    assert h.state() == "Empty"
    assert join.member_id not in h.group().members
    before = len(h.records)
    assert h.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NONE}
    assert [(r.key, r.value) for r in h.records[before:] if r.value is None] == [
        (GroupMetadataKey(GROUP_ID), None)]


def test_offset_delete_of_last_offsets_forgets_the_empty_group(h: Harness) -> None:
    """Deleting the last offsets of an Empty group forgets the group (Kafka's
    cleanupGroupMetadata); a group that still has offsets stays."""
    _commit_two_and_leave(h, PROTOCOL_TYPE)
    h.delete_offsets(GROUP_ID, [("foo", 0)])
    assert h.maybe_group() is not None
    h.delete_offsets(GROUP_ID, [("bar", 0)])
    assert h.maybe_group() is None
    assert GROUP_ID not in h.coordinator.hard_state().groups


def test_offset_delete_invalid_group_id(h: Harness) -> None:
    assert h.delete_offsets("", [("foo", 0)]) == (ErrorCode.INVALID_GROUP_ID, {})


def test_describe_invalid_group_id_only_null(h: Harness) -> None:
    assert h.describe_group(None).error_code == ErrorCode.INVALID_GROUP_ID  # type: ignore[arg-type]


# --------------------------------------------------------------------------- subscription parser


def test_consumer_protocol_subscription_parser() -> None:
    for version in (0, 1, 2, 3):
        assert subscription_topics(subscription("a", "b", version=version)) == {"a", "b"}
    assert subscription_topics(subscription(version=7)) == frozenset()
    assert subscription_topics(b"") is None
    assert subscription_topics(b"\x00\x00\x00\x00\x00\x02\x00\x01a") is None
    assert subscription_topics(b"\xff\xff\x00\x00\x00\x00") is None
    assert subscription_topics(b"\x00\x00\xff\xff\xff\xff") is None


def test_group_id_validation_per_api(h: Harness) -> None:
    """"" is only allowed for OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups."""
    join = h.reply(h.send_join_group("", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS))
    assert join.error_code == ErrorCode.INVALID_GROUP_ID
    assert h.sync_group_follower("", 1, "m").error_code == ErrorCode.INVALID_GROUP_ID
    assert h.heartbeat("", "m", 1) == ErrorCode.INVALID_GROUP_ID
    assert h.single_leave_group("", "m").error_code == ErrorCode.INVALID_GROUP_ID
    assert h.delete_offsets("", [("t", 0)])[0] == ErrorCode.INVALID_GROUP_ID
    assert h.commit_offsets("", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    assert h.fetch_offsets("", [("t", 0)])[0] == ErrorCode.NONE
    assert h.describe_group("").error_code == ErrorCode.NONE
    assert h.delete_groups([""]) == {"": ErrorCode.NONE}
