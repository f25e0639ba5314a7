"""Large member metadata (issue 15 item 5): a group never grows into a GroupMetadata record
the log cannot store. The JoinGroup that would cross the bound, and a leader's assignment
that would, get MESSAGE_TOO_LARGE; nothing answers UNKNOWN_SERVER_ERROR (-1), and the
bound really is storable."""

from __future__ import annotations

from harness import GROUP_ID, PROTOCOL_TYPE, UNKNOWN_MEMBER_ID, Harness

from coordinator.core import ErrorCode
from coordinator.core.classic.group_size import MAX_GROUP_RECORD_BYTES, group_record_bytes
from storage.batch import EncodedBatch
from storage.records import GroupMetadataKey, Record
from storage.segment import MAX_ENTRY_LENGTH

MIB = 1024 * 1024


def big(size: int) -> tuple[tuple[str, bytes], ...]:
    return (("range", b"\x00" * size),)


def test_a_join_that_would_make_the_group_unstorable_is_refused() -> None:
    h = Harness()
    first = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(20 * MIB))
    assert first.error_code == ErrorCode.NONE
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(20 * MIB),
                              api_version=3)
    refused = h.reply(token)
    assert refused.error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert list(h.group().members) == [first.member_id]  # the group is untouched
    assert h.state() == "CompletingRebalance"
    # A small member still joins.
    small = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(1024),
                              api_version=3)
    assert not h.answered(small) or h.reply(small).error_code != ErrorCode.MESSAGE_TOO_LARGE
    assert len(h.group().members) == 2


def test_a_first_member_alone_over_the_bound_is_refused_and_no_group_is_left() -> None:
    h = Harness()
    token = h.send_join_group("alone", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(33 * MIB),
                              api_version=3)
    assert h.reply(token).error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert h.maybe_group("alone") is None


def test_a_leader_assignment_too_large_is_message_too_large_never_minus_one() -> None:
    h = Harness()
    leader = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(16))
    follower_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(16),
                                       api_version=3)
    rejoin = h.send_join_group(GROUP_ID, leader.member_id, PROTOCOL_TYPE, big(16))
    joined, follower = h.reply(rejoin), h.reply(follower_token)
    assert joined.error_code == follower.error_code == ErrorCode.NONE
    follower_sync = h.send_sync_group(GROUP_ID, follower.generation_id, follower.member_id)
    records_before = len(h.records)
    answer = h.sync_group_leader(GROUP_ID, joined.generation_id, leader.member_id, {
        leader.member_id: b"\x01" * (17 * MIB), follower.member_id: b"\x02" * (17 * MIB)})
    assert answer.error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert h.reply(follower_sync).error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert h.state() == "PreparingRebalance"
    # No group record was written (only the rebalance history's event).
    assert not [r for r in h.records[records_before:] if isinstance(r.key, GroupMetadataKey)]
    assert all(r.error_code != ErrorCode.UNKNOWN_SERVER_ERROR for r in h.replies.values()
               if hasattr(r, "error_code"))


def test_the_bound_fits_the_log() -> None:
    """The estimate is never below the encoded size, and a group at the bound encodes
    within the log's entry limit."""
    assert MAX_GROUP_RECORD_BYTES < MAX_ENTRY_LENGTH
    h = Harness()
    leader = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, big(15 * MIB))
    group = h.group()
    assignment = {leader.member_id: b"\x03" * (MAX_GROUP_RECORD_BYTES - 15 * MIB - 4096)}
    estimate = group_record_bytes(group, assignment)
    assert MAX_GROUP_RECORD_BYTES - 8192 < estimate <= MAX_GROUP_RECORD_BYTES
    value = group.to_record_value(assignment)
    batch = EncodedBatch.encode([Record(GroupMetadataKey(GROUP_ID), value)])
    assert batch.count == 1  # encode raises RecordTooLargeError past the entry limit
    # The estimate does not undercount the value (the entry adds the key and ~20 bytes).
    assert estimate >= len(batch.data) - len(GROUP_ID) - 32
