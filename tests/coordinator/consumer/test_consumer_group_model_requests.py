"""Kafka's ConsumerGroupTest (modern/consumer, trunk 2024-10-25), the parts a client sees
through the coordinator: member lookup, offset commit / fetch validation, ListGroups,
ConsumerGroupDescribe, DeleteGroups, offset expiry, the tombstones of a downgrade replacing
a static member, and the conversion of a classic group. Kafka's names in snake_case.

Groups are loaded from records (a restart replays them), as Kafka's tests build them with
``updateMember``; Kafka's snapshot-registry arguments (``stateAsString(offset)``, a member
"at last committed offset 0") have no kcoord counterpart -- kcoord answers from the live
group, which only holds what reached the log."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from consumer_harness import BAR, CONFIG, FOO, GROUP, ConsumerHarness
from harness import GROUP_INITIAL_REBALANCE_DELAY, ctx
from test_consumer_group_migration import assignment_blob, classic_join, subscription
from test_consumer_group_model import member_records

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import ConsumerGroup, from_topic_partitions
from coordinator.core.group_rebuild import CONSUMER
from coordinator.core.offset_commit import validate_consumer_commit
from coordinator.core.offset_fetch import handle_offset_fetch
from storage.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    RebalanceEventKey,
    Record,
)

OFFSET_COMMIT_VERSIONS = range(0, 10)  # Kafka 4.0's OffsetCommit v0-v9


def load(h: ConsumerHarness, records: list[Record]) -> None:
    """Kafka's withConsumerGroup: the group the records describe, loaded by a restart."""
    h.records.extend(records)
    h.crash_and_replay()


def member(member_id: str, **fields: Any) -> list[Record]:
    """The member's records in this module's group."""
    return member_records(member_id, group_id=GROUP, **fields)


def epochs(group_epoch: int, assignment_epoch: int, group_id: str = GROUP) -> list[Record]:
    return [Record(ConsumerGroupMetadataKey(group_id), ConsumerGroupMetadataValue(group_epoch, 0)),
            Record(ConsumerGroupTargetAssignmentMetadataKey(group_id),
                   ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch))]


def test_get_or_create_member() -> None:
    h = ConsumerHarness()
    # Create a member; get that member back.
    joined = h.join("member-id", ["foo"])
    assert (joined.error_code, joined.member_id) == (ErrorCode.NONE, "member-id")
    again = h.consumer_heartbeat("member-id", joined.member_epoch)
    assert (again.error_code, again.member_id) == (ErrorCode.NONE, "member-id")
    assert list(h.consumer_group().members) == ["member-id"]
    # An unknown member is UNKNOWN_MEMBER_ID.
    assert h.consumer_heartbeat("does-not-exist", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    h.assert_live_equals_replay()


def test_group_type_from_string() -> None:
    h = ConsumerHarness()
    h.join("member", ["foo"])
    h.commit_offsets("classic-group", "", -1, {("foo", 0): 1})
    listed = {t: {g.group_id for g in h.list_groups(types=[t])[1]}
              for t in ("classic", "Consumer", "Invalid")}
    # Types compare case-insensitively; an unknown type lists nothing.
    assert listed == {"classic": {"classic-group"}, "Consumer": {GROUP}, "Invalid": set()}
    h.assert_live_equals_replay()


@pytest.mark.parametrize("version", OFFSET_COMMIT_VERSIONS)
def test_validate_transactional_offset_commit(version: int) -> None:
    group = ConsumerGroup(GROUP)

    def validate(member_id: str, epoch: int) -> ErrorCode | None:
        return validate_consumer_commit(group, epoch, member_id, version, transactional=True)

    # An admin client's commit, without member id and epoch, passes on an empty group.
    assert validate("", -1) is None
    assert validate("member-id", 0) == ErrorCode.UNKNOWN_MEMBER_ID
    for record in member("member-id"):
        group.replay(record)
    assert validate("", -1) == ErrorCode.UNKNOWN_MEMBER_ID
    # A stale epoch: Kafka's group throws StaleMemberEpochException, which its
    # OffsetMetadataManager answers ILLEGAL_GENERATION; kcoord's validation answers it.
    assert validate("member-id", 10) == ErrorCode.ILLEGAL_GENERATION
    assert validate("member-id", 0) is None


@pytest.mark.parametrize("version", OFFSET_COMMIT_VERSIONS)
def test_validate_offset_commit(version: int) -> None:
    group = ConsumerGroup(GROUP)

    def validate(member_id: str, epoch: int) -> ErrorCode | None:
        return validate_consumer_commit(group, epoch, member_id, version)

    assert validate("", -1) is None
    assert validate("member-id", 0) == ErrorCode.UNKNOWN_MEMBER_ID
    for record in (*member("new-protocol-member-id"),
                   *member("old-protocol-member-id",
                                   classic_metadata=ClassicMemberMetadata(0, ()))):
        group.replay(record)
    assert validate("", -1) == ErrorCode.UNKNOWN_MEMBER_ID
    modern_ok = None if version >= 9 else ErrorCode.UNSUPPORTED_VERSION
    stale = ErrorCode.STALE_MEMBER_EPOCH if version >= 9 else ErrorCode.UNSUPPORTED_VERSION
    assert validate("new-protocol-member-id", 10) == stale
    assert validate("old-protocol-member-id", 10) == ErrorCode.ILLEGAL_GENERATION
    assert validate("new-protocol-member-id", 0) == modern_ok


def test_as_listed_group() -> None:
    h = ConsumerHarness()
    load(h, epochs(0, 0))
    assert [(g.group_id, g.group_state, g.group_type) for g in h.list_groups()[1]] == [
        (GROUP, "Empty", "consumer")]
    load(h, member("member1", topics=["foo"]))
    assert [(g.group_id, g.group_state) for g in h.list_groups()[1]] == [(GROUP, "Stable")]


def _fetch(h: ConsumerHarness, member_id: str | None, member_epoch: int) -> int:
    token = h.token()
    request: Any = {"groups": [{"group_id": GROUP, "member_id": member_id,
                                "member_epoch": member_epoch, "topics": None}],
                    "require_stable": False}
    h.apply(handle_offset_fetch(h.coordinator, ctx(9), request, token, h.now))
    error: int = h.reply(token).groups[0].error_code
    return error


def test_validate_offset_fetch() -> None:
    h = ConsumerHarness()
    load(h, epochs(0, 0))
    # An admin client's fetch, without member id and epoch, passes.
    assert _fetch(h, None, -1) == ErrorCode.NONE
    assert _fetch(h, "member-id", 0) == ErrorCode.UNKNOWN_MEMBER_ID
    load(h, member("member-id"))
    assert _fetch(h, "member-id", 10) == ErrorCode.STALE_MEMBER_EPOCH
    assert _fetch(h, "member-id", 0) == ErrorCode.NONE


def test_validate_delete_group() -> None:
    h = ConsumerHarness()
    load(h, epochs(0, 0))
    assert h.consumer_group().state == "Empty"
    assert h.delete_groups(["other", GROUP])[GROUP] == ErrorCode.NONE
    assert GROUP not in h.coordinator.consumer_groups
    for group_epoch, assignment_epoch, state in ((0, 0, "Reconciling"), (1, 0, "Assigning"),
                                                 (1, 1, "Stable")):
        load(h, [*epochs(group_epoch, assignment_epoch),
                 *member("member1", epoch=1, previous=0)])
        assert h.consumer_group().state == state
        assert h.delete_groups([GROUP]) == {GROUP: ErrorCode.NON_EMPTY_GROUP}
        assert "member1" in h.consumer_group().members
    h.assert_live_equals_replay()


def test_offset_expiration_condition() -> None:
    # A consumer group's offsets expire by their commit timestamp (Kafka's
    # OffsetExpirationConditionImpl with the commit timestamp as base), for topics no member
    # subscribes to.
    h = ConsumerHarness(dataclasses.replace(CONFIG, offsets_retention_minutes=1,
                                            offsets_retention_check_interval_ms=1_000))
    h.apply(h.coordinator.on_loaded(h.now))  # arms the retention scan
    joined = h.join("member", ["bar"])
    h.sleep(5_000)
    committed_at = h.now
    assert h.commit_offsets(GROUP, "member", joined.member_epoch, {("foo", 0): 15_000},
                            api_version=9) == {("foo", 0): ErrorCode.NONE}
    retention = 60_000
    while h.now < committed_at + retention - 5_000:
        h.consumer_heartbeat("member", joined.member_epoch)
        h.sleep(5_000)
    assert h.fetch_offsets(GROUP, [("foo", 0)])[1][("foo", 0)][0] == 15_000
    while h.now < committed_at + retention + 1_000:
        h.consumer_heartbeat("member", joined.member_epoch)
        h.sleep(1_000)
    assert h.fetch_offsets(GROUP, [("foo", 0)])[1][("foo", 0)][0] == -1
    assert "member" in h.consumer_group().members
    h.assert_live_equals_replay()


def test_as_described_group() -> None:
    h = ConsumerHarness()
    load(h, [*epochs(0, 0), *member("member1", topics=["foo"], assignor="assignorName"),
             *member("member2")])
    (described,) = h.describe(GROUP).groups
    assert (described.error_code, described.group_id, described.group_state,
            described.group_epoch, described.assignment_epoch, described.assignor_name) == (
        ErrorCode.NONE, GROUP, "Stable", 0, 0, "assignorName")
    # Kafka's member holds "" for an unset regex, and describes it so.
    assert [(m.member_id, m.subscribed_topic_names, m.subscribed_topic_regex, m.member_epoch,
             m.assignment.topic_partitions, m.target_assignment.topic_partitions)
            for m in described.members] == [
        ("member1", ("foo",), "", 0, (), ()), ("member2", (), "", 0, (), ())]


def test_is_in_states_case_insensitive() -> None:
    h = ConsumerHarness()
    load(h, epochs(0, 0))

    def listed(state: str) -> bool:
        return any(g.group_id == GROUP for g in h.list_groups(states=[state])[1])

    # Kafka's ListGroups lowercases the filter before isInStates compares.
    assert listed("empty") and listed("Empty")
    load(h, member("member1", topics=["foo"]))
    assert listed("stable") and not listed("empty")


def test_create_group_tombstone_records_with_replaced_member() -> None:
    h = ConsumerHarness()
    protocols = ClassicMemberMetadata(5_000, (ClassicProtocol("range", subscription(["foo"])),))
    load(h, [*epochs(1, 1),
             *member("member-1", epoch=1, topics=["foo"], classic_metadata=protocols),
             *member("member-2", epoch=1, topics=["foo"], instance_id="instance-id-2")])
    start = len(h.records)
    joined = classic_join(h, "", ["foo"], group_instance_id="instance-id-2")
    new_member = joined.member_id
    assert joined.error_code == ErrorCode.NONE
    records = [r for r in h.records[start:] if not isinstance(r.key, RebalanceEventKey)]
    # member-2's replacement, then the group's tombstones with new-member-2 in its place
    # (Kafka's subscription metadata tombstone has no kcoord counterpart).
    tombstones = records[-9:-1]
    assert [type(r.key) for r in tombstones] == [
        ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentKey,
        ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMetadataKey,
        ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataKey,
        ConsumerGroupMetadataKey]
    assert all(r.value is None for r in tombstones)
    for pair in (tombstones[0:2], tombstones[2:4], tombstones[5:7]):
        assert {r.key.member_id for r in pair} == {"member-1", new_member}
    assert isinstance(records[-1].key, GroupMetadataKey) and records[-1].value is not None
    assert GROUP not in h.coordinator.consumer_groups
    assert set(h.group(GROUP).members) == {"member-1", new_member}
    h.assert_live_equals_replay()


def test_from_classic_group() -> None:
    h = ConsumerHarness(foo=(FOO, 1), bar=(BAR, 1))
    token = h.send_join_group(GROUP, "", "consumer", [
        ("range", subscription(["foo", "bar"], {"foo": [0], "bar": [0]}))],
        session_timeout=500, rebalance_timeout=5_000, api_version=3)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    joined = h.reply(token)
    member_id, generation = joined.member_id, joined.generation_id
    plan = {member_id: assignment_blob({"foo": [0], "bar": [0]})}
    assert h.reply(h.send_sync_group(GROUP, generation, member_id, plan)).error_code == 0
    client_host = h.group(GROUP).members[member_id].client_host
    start = len(h.records)
    h.join("c1", ["foo"])  # the upgrade
    records = [r for r in h.records[start:] if not isinstance(r.key, RebalanceEventKey)]
    assert records[0] == Record(GroupMetadataKey(GROUP), None)
    # The group the conversion's records describe (the records before c1's own).
    conversion = records[1:6]
    assert [getattr(r.key, "member_id", member_id) for r in conversion] == [member_id] * 5
    converted = CONSUMER.build(GROUP, conversion)
    assert (converted.group_id, converted.group_epoch, converted.assignment_epoch) == (
        GROUP, generation, generation)
    assert converted.state == "Stable"
    assert converted.preferred_assignor("") == ""
    (member,) = converted.members.values()
    value = member.metadata_value()
    assert (member.member_id, value.instance_id, value.rack_id, value.rebalance_timeout_ms,
            value.client_id, value.client_host, value.subscribed_topic_names) == (
        member_id, None, None, 5_000, "clientId", client_host, ("bar", "foo"))
    assert value.classic_member_metadata == ClassicMemberMetadata(500, (ClassicProtocol(
        "range", subscription(["foo", "bar"], {"foo": [0], "bar": [0]})),))
    current = member.current
    assert (current.state, current.member_epoch, current.previous_member_epoch) == (
        MemberState.STABLE, generation, generation)
    assert current.assigned_partitions == {FOO: frozenset({0}), BAR: frozenset({0})}
    assert converted.target_of(member_id) == from_topic_partitions(
        conversion[2].value.topic_partitions) == current.assigned_partitions
    h.assert_live_equals_replay()
